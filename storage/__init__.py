"""Persistence and timing: SQLAlchemy models, Alembic migrations, repositories, scheduler."""

from __future__ import annotations

from typing import TYPE_CHECKING

from storage.lazy import lazy_exports

if TYPE_CHECKING:
    from storage.database import DEFAULT_URL, Database, normalize_url
    from storage.errors import (
        InvalidTimezoneError,
        NewerDatabaseError,
        NotEmptyError,
        ReminderChangedError,
        ReminderNotFoundError,
        ReminderPermissionError,
        ReminderStateError,
        SnoozeTargetError,
        StorageConfigError,
        StorageError,
        StorageUnavailableError,
        TransferError,
    )
    from storage.migrate import current_revision, head_revision, upgrade
    from storage.models import utc_now
    from storage.outgoing import Member, OutgoingMessage, Sender, SendError
    from storage.policy import DEFAULT_GRACE, DeliveryPolicy
    from storage.reach import Reach, WaitingChat
    from storage.recurrence import KINDS, Kind, Schedule, check_timezone
    from storage.repository import NewReminder, ReminderView, ScheduledAction
    from storage.scheduler import Act, Compose, ReminderScheduler
    from storage.service import ReminderService
    from storage.transfer import export_file, import_file

__all__ = [
    "DEFAULT_GRACE",
    "DEFAULT_URL",
    "KINDS",
    "Act",
    "Compose",
    "Database",
    "DeliveryPolicy",
    "InvalidTimezoneError",
    "Kind",
    "Member",
    "NewReminder",
    "NewerDatabaseError",
    "NotEmptyError",
    "OutgoingMessage",
    "Reach",
    "ReminderChangedError",
    "ReminderNotFoundError",
    "ReminderPermissionError",
    "ReminderScheduler",
    "ReminderService",
    "ReminderStateError",
    "ReminderView",
    "Schedule",
    "ScheduledAction",
    "SendError",
    "Sender",
    "SnoozeTargetError",
    "StorageConfigError",
    "StorageError",
    "StorageUnavailableError",
    "TransferError",
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

# Not for type checkers: they read the imports above, and a typo stays an error.
if not TYPE_CHECKING:
    __getattr__ = lazy_exports(
        __name__,
        {
            "storage.database": ("DEFAULT_URL", "Database", "normalize_url"),
            "storage.errors": (
                "InvalidTimezoneError",
                "NewerDatabaseError",
                "NotEmptyError",
                "ReminderChangedError",
                "ReminderNotFoundError",
                "ReminderPermissionError",
                "ReminderStateError",
                "SnoozeTargetError",
                "StorageConfigError",
                "StorageError",
                "StorageUnavailableError",
                "TransferError",
            ),
            "storage.migrate": ("current_revision", "head_revision", "upgrade"),
            "storage.models": ("utc_now",),
            "storage.outgoing": ("Member", "OutgoingMessage", "Sender", "SendError"),
            "storage.policy": ("DEFAULT_GRACE", "DeliveryPolicy"),
            "storage.reach": ("Reach", "WaitingChat"),
            "storage.recurrence": ("KINDS", "Kind", "Schedule", "check_timezone"),
            "storage.repository": ("NewReminder", "ReminderView", "ScheduledAction"),
            "storage.scheduler": ("Act", "Compose", "ReminderScheduler"),
            "storage.service": ("ReminderService",),
            "storage.transfer": ("export_file", "import_file"),
        },
    )
