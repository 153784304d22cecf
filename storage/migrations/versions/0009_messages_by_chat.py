"""messages by chat in log order: the recent history of a chat without a sort

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Every triggered message reads its chat's newest rows by id; without this index
    # that is a sort of the whole chat's log (up to its retention, 5000 rows).
    op.create_index("ix_messages_chat_id_order", "messages", ["chat_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_messages_chat_id_order", table_name="messages")
