"""reminders people act on: "until done" (who must say done), "remind me too", the
confirmation's message id, the acknowledgements, and the presses already acted on

`reminders.ack` NULL and `me_too` true: every reminder made before this revision keeps
firing by its rule, and members may add themselves to a group's.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("reminders") as batch:
        batch.add_column(sa.Column("ack", sa.String(length=8), nullable=True))
        batch.add_column(
            sa.Column("me_too", sa.Boolean(), nullable=False, server_default=sa.text("true"))
        )
        batch.add_column(sa.Column("confirmed_as", sa.String(length=255), nullable=True))
        batch.create_index("ix_reminders_confirmed_as", ["chat_id", "confirmed_as"])
    op.create_table(
        "acknowledgements",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("reminder_id", sa.String(length=32), nullable=False),
        sa.Column("occurrence", sa.DateTime(timezone=True), nullable=False),
        sa.Column("user_id", sa.String(length=255), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("via", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(
            ["reminder_id"],
            ["reminders.id"],
            name="fk_acknowledgements_reminder_id_reminders",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_acknowledgements"),
        sa.UniqueConstraint(
            "reminder_id",
            "occurrence",
            "user_id",
            name="uq_acknowledgements_reminder_id_occurrence_user_id",
        ),
    )
    op.create_table(
        "presses",
        sa.Column("press_id", sa.String(length=255), nullable=False),
        sa.Column("chat_id", sa.String(length=255), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("ok", sa.Boolean(), nullable=True),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("press_id", name="pk_presses"),
    )
    op.create_index("ix_presses_at", "presses", ["at"])


def downgrade() -> None:
    op.drop_index("ix_presses_at", table_name="presses")
    op.drop_table("presses")
    op.drop_table("acknowledgements")
    with op.batch_alter_table("reminders") as batch:
        batch.drop_index("ix_reminders_confirmed_as")
        batch.drop_column("confirmed_as")
        batch.drop_column("me_too")
        batch.drop_column("ack")
