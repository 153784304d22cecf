"""plugin data: each plugin's own JSON values, per chat and global

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "plugin_data",
        sa.Column("plugin", sa.String(length=64), nullable=False),
        sa.Column("chat_id", sa.String(length=255), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("value", sa.JSON(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("plugin", "chat_id", "key", name=op.f("pk_plugin_data")),
    )


def downgrade() -> None:
    op.drop_table("plugin_data")
