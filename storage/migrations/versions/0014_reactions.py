"""reactions: people's emoji reactions to logged messages, which digests count

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "reactions",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("chat_id", sa.String(255), nullable=False),
        sa.Column("message_id", sa.String(255), nullable=False),
        sa.Column("sender_id", sa.String(255), nullable=False),
        sa.Column("emoji", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reaction_id", sa.String(255), nullable=True),
        sa.UniqueConstraint("chat_id", "message_id", "sender_id", "emoji"),
    )


def downgrade() -> None:
    op.drop_table("reactions")
