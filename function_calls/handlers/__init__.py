"""Built-in tools; importing this package registers them in the default registry. Also
the reminder wording the bot uses: `reminder_message` (the scheduler's `Compose`),
`describe_schedule` and `refusal_text`.

Tools are shown to the model in the order they register, which is the order of the
imports below (a module's own imports come first): after reminder_update the tools that
put a reminder off, then the chat's reminder history and rules.
"""

from function_calls.handlers import (
    budget,
    chat_tools,
    help,
    read_url,
    reminder_changes,
)

# isort: split
from function_calls.handlers import reminder_snooze

# isort: split
from function_calls.handlers import (
    reminder_history,
    reminder_rules,
    reminders,
    summary,
    timezone,
    web_search,
)

# isort: split
from function_calls.handlers import delivery_retry  # not the model's: last
from function_calls.handlers.reminder_args import ReminderArgs
from function_calls.handlers.reminder_changes import ReminderUpdateArgs
from function_calls.handlers.reminder_refusals import refusal_text
from function_calls.handlers.reminder_words import describe_schedule, reminder_message
from function_calls.handlers.reminders import ReminderRefArgs
from function_calls.handlers.timezone import TimezoneArgs

__all__ = [
    "ReminderArgs",
    "ReminderRefArgs",
    "ReminderUpdateArgs",
    "TimezoneArgs",
    "budget",
    "chat_tools",
    "delivery_retry",
    "describe_schedule",
    "help",
    "read_url",
    "refusal_text",
    "reminder_changes",
    "reminder_history",
    "reminder_message",
    "reminder_rules",
    "reminder_snooze",
    "reminders",
    "summary",
    "timezone",
    "web_search",
]
