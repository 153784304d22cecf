"""Storage errors; each message is fit to show a user as is."""

from __future__ import annotations


class StorageError(Exception):
    """Base class for storage errors."""


class StorageConfigError(StorageError):
    """The storage settings are wrong (bad URL, unsupported backend)."""


class StorageUnavailableError(StorageError):
    """The database could not be reached or was locked for too long; nothing was changed."""


class ReminderNotFoundError(StorageError):
    """No such reminder in this chat."""


class ReminderPermissionError(StorageError):
    """The sender may not change this reminder."""


class ReminderStateError(StorageError):
    """The reminder can't do that as it is (pause a one-time one, snooze one not yet sent)."""


class ReminderChangedError(StorageError):
    """The reminder changed (or fired) between reading it and writing the change."""


class InvalidTimezoneError(StorageError, ValueError):
    """Not an IANA time zone name."""
