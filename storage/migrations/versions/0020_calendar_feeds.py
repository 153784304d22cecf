"""calendar feeds: private links to a chat's reminders as an iCalendar feed (/calendar)

Only the sha256 of each link's token is stored. `owner_id` is the member who asked for
the link; NULL: the whole-chat link an admin made. A revoked link keeps its row, with
`revoked_at` set.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "calendar_feeds",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("chat_id", sa.String(length=255), nullable=False),
        sa.Column("owner_id", sa.String(length=255), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_calendar_feeds")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_calendar_feeds_token_hash")),
    )
    op.create_index("ix_calendar_feeds_chat", "calendar_feeds", ["chat_id", "owner_id"])


def downgrade() -> None:
    op.drop_index("ix_calendar_feeds_chat", table_name="calendar_feeds")
    op.drop_table("calendar_feeds")
