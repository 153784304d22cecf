"""Built-in tools; importing this package registers them in the default registry."""

from function_calls.handlers import (
    budget,
    help,
    read_url,
    reminder_changes,
    reminders,
    summary,
    timezone,
    web_search,
)
from function_calls.handlers.reminder_args import ReminderArgs
from function_calls.handlers.reminder_changes import ReminderUpdateArgs
from function_calls.handlers.reminders import ReminderRefArgs
from function_calls.handlers.timezone import TimezoneArgs

__all__ = [
    "ReminderArgs",
    "ReminderRefArgs",
    "ReminderUpdateArgs",
    "TimezoneArgs",
    "budget",
    "help",
    "read_url",
    "reminder_changes",
    "reminders",
    "summary",
    "timezone",
    "web_search",
]
