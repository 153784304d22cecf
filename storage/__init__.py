"""Persistence and timing: SQLAlchemy models, Alembic migrations, repositories, scheduler."""

from __future__ import annotations

from typing import TYPE_CHECKING

from groupmate.storage import errors
from groupmate.storage.lazy import lazy_exports

if TYPE_CHECKING:
    from groupmate.storage.clock import utc_now
    from groupmate.storage.database import Database, normalize_url
    from groupmate.storage.errors import *  # noqa: F403
    from groupmate.storage.location import DEFAULT_URL
    from groupmate.storage.migrate import upgrade
    from groupmate.storage.outgoing import Button, Member, OutgoingMessage, Sender, SendError
    from groupmate.storage.policy import DEFAULT_GRACE, DeliveryPolicy
    from groupmate.storage.reach import Reach, WaitingChat
    from groupmate.storage.reader import ReminderReader
    from groupmate.storage.recurrence import KINDS, Kind, Schedule, check_timezone
    from groupmate.storage.reminder_rows import NewReminder, ReminderView, ScheduledAction
    from groupmate.storage.revisions import current_revision, head_revision
    from groupmate.storage.scheduler import Act, Compose, ReminderScheduler
    from groupmate.storage.service import ReminderService
    from groupmate.storage.transfer import export_file, import_file

__all__ = [
    "DEFAULT_GRACE",
    "DEFAULT_URL",
    "KINDS",
    "Act",
    "Button",
    "Compose",
    "Database",
    "DeliveryPolicy",
    "Kind",
    "Member",
    "NewReminder",
    "OutgoingMessage",
    "Reach",
    "ReminderReader",
    "ReminderScheduler",
    "ReminderService",
    "ReminderView",
    "Schedule",
    "ScheduledAction",
    "SendError",
    "Sender",
    "WaitingChat",
    "check_timezone",
    "current_revision",
    "export_file",
    "head_revision",
    "import_file",
    "normalize_url",
    "upgrade",
    "utc_now",
]
__all__ += errors.__all__  # the storage errors, listed where they are raised

# Not for type checkers: they read the imports above, and a typo stays an error.
if not TYPE_CHECKING:
    __getattr__ = lazy_exports(
        __name__,
        {
            "groupmate.storage.clock": ("utc_now",),
            "groupmate.storage.database": ("Database", "normalize_url"),
            "groupmate.storage.location": ("DEFAULT_URL",),
            "groupmate.storage.errors": tuple(errors.__all__),
            "groupmate.storage.migrate": ("upgrade",),
            "groupmate.storage.revisions": ("current_revision", "head_revision"),
            "groupmate.storage.outgoing": (
                "Button",
                "Member",
                "OutgoingMessage",
                "Sender",
                "SendError",
            ),
            "groupmate.storage.policy": ("DEFAULT_GRACE", "DeliveryPolicy"),
            "groupmate.storage.reach": ("Reach", "WaitingChat"),
            "groupmate.storage.reader": ("ReminderReader",),
            "groupmate.storage.recurrence": ("KINDS", "Kind", "Schedule", "check_timezone"),
            "groupmate.storage.reminder_rows": ("NewReminder", "ReminderView", "ScheduledAction"),
            "groupmate.storage.scheduler": ("Act", "Compose", "ReminderScheduler"),
            "groupmate.storage.service": ("ReminderService",),
            "groupmate.storage.transfer": ("export_file", "import_file"),
        },
    )
