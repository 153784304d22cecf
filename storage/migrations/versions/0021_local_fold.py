"""which of a repeated wall time a rule starts at: `reminders.local_fold`

At the autumn change an hour's wall times come twice. A TIME column can't say which, so
a repeat within a day started in the second one was read back as starting an hour
earlier, and its count ended early. `local_fold` is `datetime.time.fold`: false (0) for
the first, true for the second. Every row made before this revision reads as the first,
as it did.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("reminders") as batch:
        batch.add_column(
            sa.Column("local_fold", sa.Boolean(), nullable=False, server_default=sa.text("false"))
        )


def downgrade() -> None:
    with op.batch_alter_table("reminders") as batch:
        batch.drop_column("local_fold")
