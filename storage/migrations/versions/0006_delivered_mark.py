"""delivered mark: an answer decided but not yet sent is resent, not decided anew

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("messages", sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True))
    op.add_column("messages", sa.Column("reply_to", sa.String(255), nullable=True))
    # Answers given before this revision were sent under the old rule; marking them keeps
    # a late redelivery from waiting on an answer that has no logged reply to resend.
    op.execute("UPDATE messages SET delivered_at = answered_at")


def downgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("reply_to")
        batch.drop_column("delivered_at")
