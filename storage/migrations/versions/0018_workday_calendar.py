"""a weekdays reminder can follow a country's work-day calendar (China's, or another's)

`reminders.calendar` is the country code ("CN", "DE") the chat's `workdays` setting named
when the reminder was made or the setting last changed; NULL: Monday to Friday, as every
reminder made before this revision.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("reminders") as batch:
        batch.add_column(sa.Column("calendar", sa.String(length=8), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("reminders") as batch:
        batch.drop_column("calendar")
