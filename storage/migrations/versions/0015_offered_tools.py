"""offered tools: which tools each model turn was shown, and why (the dashboard's model
activity), now that each message is offered the tools it needs

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Turns logged before this revision were shown every tool: an empty list, not a guess.
    with op.batch_alter_table("llm_turns") as batch:
        batch.add_column(sa.Column("offered", sa.JSON(), nullable=False, server_default="[]"))


def downgrade() -> None:
    with op.batch_alter_table("llm_turns") as batch:
        batch.drop_column("offered")
