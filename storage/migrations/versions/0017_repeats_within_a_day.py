"""repeats within a day and repeat limits: "every 2 hours from 9 to 17", "until Friday", "5 times"

A reminder of kind "interval" steps by `every_seconds` of elapsed time, within an
optional daily window ending at `window_end`, on the weekdays in `on_days`. Any repeating
reminder may end: on `until_date` (a local date) or `until_at` (an instant), or after
`repeat_count` occurrences. Existing reminders have none of these: they stay as they were.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

_COLUMNS = ("every_seconds", "window_end", "on_days", "until_date", "until_at", "repeat_count")


def upgrade() -> None:
    with op.batch_alter_table("reminders") as batch:
        batch.add_column(sa.Column("every_seconds", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("window_end", sa.Time(), nullable=True))
        batch.add_column(sa.Column("on_days", sa.String(16), nullable=True))
        batch.add_column(sa.Column("until_date", sa.Date(), nullable=True))
        batch.add_column(sa.Column("until_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("repeat_count", sa.Integer(), nullable=True))


def downgrade() -> None:
    # A repeat within a day has no form without these columns: it ends, kept in history.
    op.execute(
        "UPDATE reminders SET status = 'done', next_fire_at = NULL, kind = 'daily' "
        "WHERE kind = 'interval'"
    )
    # A limit ("until Friday", "5 times") has no form either: kept running without it,
    # the reminder would repeat forever. It ends too, as the user would rather notice a
    # reminder gone than one that never stops.
    op.execute(
        "UPDATE reminders SET status = 'done', next_fire_at = NULL "
        "WHERE status IN ('active', 'paused') AND (repeat_count IS NOT NULL "
        "OR until_date IS NOT NULL OR until_at IS NOT NULL)"
    )
    with op.batch_alter_table("reminders") as batch:
        for column in _COLUMNS:
            batch.drop_column(column)
