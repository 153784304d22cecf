"""Built-in tools; importing this package registers them in the default registry."""

from function_calls.handlers import help, reminders, summary, timezone, web_search
from function_calls.handlers.reminder_args import ReminderArgs
from function_calls.handlers.reminders import ReminderDeleteArgs
from function_calls.handlers.timezone import TimezoneArgs

__all__ = [
    "ReminderArgs",
    "ReminderDeleteArgs",
    "TimezoneArgs",
    "help",
    "reminders",
    "summary",
    "timezone",
    "web_search",
]
