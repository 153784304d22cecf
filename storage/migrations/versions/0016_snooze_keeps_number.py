"""a snooze keeps its reminder's number: a reminder snoozed is still #1, not a new #5

A snooze stays a one-time reminder row of its own (its delivery, its history), but it
shows its reminder's number and takes none: the number is unique among reminders, not
among their snoozes. Snoozes made before this revision take their reminder's number;
the numbers they had are not handed out again.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

_REMINDERS_ONLY = sa.text("snooze_of IS NULL")


def upgrade() -> None:
    with op.batch_alter_table("reminders") as batch:
        batch.drop_constraint("uq_reminders_chat_id_short_id", type_="unique")
    op.execute(
        "UPDATE reminders SET short_id = (SELECT root.short_id FROM reminders AS root "
        "WHERE root.id = reminders.snooze_of) WHERE snooze_of IS NOT NULL AND EXISTS "
        "(SELECT 1 FROM reminders AS root WHERE root.id = reminders.snooze_of)"
    )
    op.create_index(
        "ux_reminders_number",
        "reminders",
        ["chat_id", "short_id"],
        unique=True,
        sqlite_where=_REMINDERS_ONLY,
        postgresql_where=_REMINDERS_ONLY,
    )


def downgrade() -> None:
    op.drop_index("ux_reminders_number", table_name="reminders")
    # Each snooze takes a number of its own again, the chat's next.
    connection = op.get_bind()
    snoozes = connection.execute(
        sa.text("SELECT id, chat_id FROM reminders WHERE snooze_of IS NOT NULL ORDER BY created_at")
    ).all()
    for snooze_id, chat_id in snoozes:
        connection.execute(
            sa.text("UPDATE chats SET last_short_id = last_short_id + 1 WHERE chat_id = :chat"),
            {"chat": chat_id},
        )
        connection.execute(
            sa.text(
                "UPDATE reminders SET short_id = (SELECT last_short_id FROM chats "
                "WHERE chat_id = :chat) WHERE id = :id"
            ),
            {"chat": chat_id, "id": snooze_id},
        )
    with op.batch_alter_table("reminders") as batch:
        batch.create_unique_constraint("uq_reminders_chat_id_short_id", ["chat_id", "short_id"])
