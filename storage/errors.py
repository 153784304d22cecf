"""Storage errors: a type and the fields a caller needs to say what went wrong.

`str(exc)` is a short message for the logs, not for users: the sentences a user reads
are written above storage, from these fields, in the user's language
(`function_calls.handlers.reminder_refusals.refusal_text`). The reasons are defined
once, in `storage.vocabulary`.
"""

from __future__ import annotations

from datetime import timedelta

from groupmate.storage.exceptions import GroupmateError
from groupmate.storage.vocabulary import (
    MeTooProblem,
    NotFoundReason,
    ReminderAction,
    SnoozeTargetProblem,
    StateProblem,
)

# Re-exported from `groupmate.storage` and `groupmate`, which take the list from here.
__all__ = [
    "AckNotNeededError",
    "InvalidTimezoneError",
    "MeTooError",
    "NewerDatabaseError",
    "NotEmptyError",
    "PluginValueError",
    "ReminderChangedError",
    "ReminderNotFoundError",
    "ReminderPermissionError",
    "ReminderStateError",
    "RepeatTooOftenError",
    "SnoozeTargetError",
    "StorageConfigError",
    "StorageError",
    "StorageUnavailableError",
    "TransferError",
    "UnknownCalendarError",
]


class StorageError(GroupmateError):
    """Base class for storage errors."""


class StorageConfigError(StorageError):
    """The storage settings are wrong (bad URL, unsupported backend)."""


class StorageUnavailableError(StorageError):
    """The database could not be reached or was locked for too long; nothing was changed."""


def _ref(short_id: int | None) -> str:
    return "?" if short_id is None else f"#{short_id}"


class ReminderNotFoundError(StorageError):
    """No such reminder in this chat (`reason`: see `NotFoundReason`).

    `short_id` is the number the user typed or the reminder's own; None when the
    reference was a full id (internal: not shown back) or no reference at all.
    `reference` is what was given when it was neither a number nor an id.
    """

    def __init__(
        self,
        short_id: int | None,
        reason: NotFoundReason = "absent",
        *,
        reference: str | None = None,
    ) -> None:
        self.short_id = short_id
        self.reason: NotFoundReason = reason
        self.reference = reference
        named = repr(reference) if reference is not None else _ref(short_id)
        super().__init__(f"reminder {named}: {reason}")


class SnoozeTargetError(ReminderNotFoundError):
    """A snooze named no reminder and none can be told: none went off within `window`,
    several did (`labels`, newest first), the replied-to message could be several
    (`labels`: a platform without message ids), or it is not a reminder."""

    def __init__(
        self,
        problem: SnoozeTargetProblem,
        *,
        labels: tuple[str, ...] = (),
        window: timedelta = timedelta(hours=1),
        action: ReminderAction = "snooze",
    ) -> None:
        super().__init__(None, problem)
        self.problem: SnoozeTargetProblem = problem
        self.labels = labels
        self.window = window
        # What was asked: a snooze, or a "done" (the refusal's example names it).
        self.action: ReminderAction = action

    def __str__(self) -> str:
        labels = f" ({', '.join(self.labels)})" if self.labels else ""
        return f"no reminder to {self.action}: {self.problem}{labels}"


class ReminderPermissionError(StorageError):
    """The sender may not `action` this reminder: only its setter or an admin may."""

    def __init__(self, short_id: int, setter_name: str | None, action: ReminderAction) -> None:
        self.short_id = short_id
        self.setter_name = setter_name or None
        self.action: ReminderAction = action
        super().__init__(f"reminder #{short_id}: may not {action} (set by {setter_name!r})")


class ReminderStateError(StorageError):
    """The reminder can't do that as it is (`problem`: see `StateProblem`); for a snooze's
    rule, `root_short_id` is the reminder it snoozes."""

    def __init__(
        self, short_id: int, problem: StateProblem, root_short_id: int | None = None
    ) -> None:
        self.short_id = short_id
        self.problem: StateProblem = problem
        self.root_short_id = root_short_id
        root = "" if root_short_id is None else f" (of #{root_short_id})"
        super().__init__(f"reminder #{short_id}: {problem}{root}")


class AckNotNeededError(StorageError):
    """Someone said done to an "until done" reminder that waits for others: `waiting`
    are the names of whom it waits for (the asker, or each person it mentions)."""

    def __init__(self, short_id: int, waiting: tuple[str, ...]) -> None:
        self.short_id = short_id
        self.waiting = waiting
        super().__init__(f"reminder #{short_id}: waits for {', '.join(waiting) or 'others'}")


class MeTooError(StorageError):
    """ "Remind me too" refused (`problem`: see `MeTooProblem`)."""

    def __init__(self, short_id: int, problem: MeTooProblem) -> None:
        self.short_id = short_id
        self.problem: MeTooProblem = problem
        super().__init__(f"reminder #{short_id}: no me-too ({problem})")


class ReminderChangedError(StorageError):
    """The reminder changed (or fired) between reading it and writing the change."""

    def __init__(self, short_id: int) -> None:
        self.short_id = short_id
        super().__init__(f"reminder #{short_id}: version changed since it was read")


class InvalidTimezoneError(StorageError, ValueError):
    """Not an IANA time zone name."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"{name!r} is not a known time zone")


class RepeatTooOftenError(StorageError, ValueError):
    """A repeat within a day is more often than the chat allows: its step is under
    `minimum`, or it fires `per_day` times a day, over `max_per_day`."""

    def __init__(self, every: timedelta, minimum: timedelta, per_day: int, max_per_day: int):
        self.every = every
        self.minimum = minimum
        self.per_day = per_day
        self.max_per_day = max_per_day
        super().__init__(
            f"every {every}: the minimum is {minimum}; {per_day} a day, the cap {max_per_day}"
        )


class UnknownCalendarError(StorageError, ValueError):
    """No work-day calendar for this country code (`code`: as given)."""

    def __init__(self, code: str) -> None:
        self.code = code
        super().__init__(f"{code!r} is not a known work-day calendar")


class NewerDatabaseError(StorageError):
    """The database's schema `revision` is not one of this code's migrations: a newer
    groupmate migrated it. Nothing was changed; `head` is the newest revision known here."""

    def __init__(self, revision: str, head: str | None) -> None:
        self.revision = revision
        self.head = head
        super().__init__(
            f"the database's schema is at revision {revision}, which this groupmate (at "
            f"{head}) does not know: a newer groupmate has upgraded it. Run that version; or, "
            "for a SQLite file, put back the copy it made before upgrading "
            f"(<file>.bak-{head}). Nothing was changed"
        )


class TransferError(StorageError):
    """An export file that can't be imported, or a database that can't be exported or
    imported into (the message says which and why); nothing was changed."""


class NotEmptyError(TransferError):
    """An import into a database that has rows already; `tables` are the ones with rows."""

    def __init__(self, tables: tuple[str, ...]) -> None:
        self.tables = tables
        super().__init__(
            f"the database already has data (in {', '.join(tables)}): import only into a "
            "new, empty database; nothing was changed"
        )


class PluginValueError(StorageError):
    """A key or value a plugin may not store: too long, empty, or not JSON; or a stored
    value read as a type it does not fit."""
