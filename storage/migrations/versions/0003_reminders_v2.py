"""reminders v2: intervals, who is mentioned, snoozes, sent message ids

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Server defaults fill the existing rows; plain ADD COLUMN works on SQLite too.
    op.add_column(
        "reminders", sa.Column("interval", sa.SmallInteger(), nullable=False, server_default="1")
    )
    op.add_column("reminders", sa.Column("mentions", sa.JSON(), nullable=True))
    op.add_column(
        "reminders",
        sa.Column("mention_creator", sa.Boolean(), nullable=False, server_default=sa.true()),
    )
    op.add_column(
        "reminders", sa.Column("everyone", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.add_column("reminders", sa.Column("snooze_of", sa.String(length=32), nullable=True))
    op.create_index("ix_reminders_snooze_of", "reminders", ["snooze_of"])
    op.add_column("deliveries", sa.Column("message_id", sa.String(length=255), nullable=True))
    op.create_index("ix_deliveries_message_id", "deliveries", ["message_id"])


def downgrade() -> None:
    op.drop_index("ix_deliveries_message_id", table_name="deliveries")
    op.drop_column("deliveries", "message_id")
    op.drop_index("ix_reminders_snooze_of", table_name="reminders")
    for column in ("snooze_of", "everyone", "mention_creator", "mentions", "interval"):
        op.drop_column("reminders", column)
