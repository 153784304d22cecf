"""The reminder tools, one built-in family (`builtins: {reminders: false}` leaves them
out): setting, listing, changing, putting off, their history and rules, and the
dashboard's delivery retry, and the calendar links (/calendar)."""

from groupmate.function_calls.handlers.calendar_feed import calendar_feed
from groupmate.function_calls.handlers.delivery_retry import delivery_retry
from groupmate.function_calls.handlers.digest_settings import digest_settings
from groupmate.function_calls.handlers.reminder_changes import reminder_update
from groupmate.function_calls.handlers.reminder_done import reminder_done, reminder_me_too
from groupmate.function_calls.handlers.reminder_history import reminder_history
from groupmate.function_calls.handlers.reminder_rules import reminder_rules
from groupmate.function_calls.handlers.reminder_snooze import (
    reminder_pause,
    reminder_resume,
    reminder_snooze,
)
from groupmate.function_calls.handlers.reminders import reminder_delete, reminder_list, reminder_set
from groupmate.function_calls.plugins.declare import Plugin

plugin = Plugin("reminders")

__all__ = [
    "calendar_feed",
    "delivery_retry",
    "digest_settings",
    "plugin",
    "reminder_delete",
    "reminder_done",
    "reminder_history",
    "reminder_list",
    "reminder_me_too",
    "reminder_pause",
    "reminder_resume",
    "reminder_rules",
    "reminder_set",
    "reminder_snooze",
    "reminder_update",
]
