"""answered mark: when the bot finished with a logged message

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("messages", sa.Column("answered_at", sa.DateTime(timezone=True), nullable=True))
    # Rows logged before this revision were all dealt with under the old rule (seen once,
    # never handled again): mark them, or a late redelivery of one would be answered anew.
    op.execute("UPDATE messages SET answered_at = created_at")


def downgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("answered_at")
