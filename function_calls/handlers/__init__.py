"""Built-in tools, in families that load as plugins do (see function_calls.plugins):
importing this package registers nothing. Also the reminder wording the bot uses:
`reminder_message` (the scheduler's `Compose`), `describe_schedule` and `refusal_text`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from groupmate.storage.lazy import lazy_exports

if TYPE_CHECKING:
    from groupmate.function_calls.handlers.families import (
        BUILTIN_MODULES,
        BUILTIN_ORDER,
        builtin_plugins,
        builtin_tools,
        in_model_order,
    )
    from groupmate.function_calls.handlers.reminder_args import ReminderArgs
    from groupmate.function_calls.handlers.reminder_changes import ReminderUpdateArgs
    from groupmate.function_calls.handlers.reminder_refusals import refusal_text
    from groupmate.function_calls.handlers.reminder_words import describe_schedule, reminder_message
    from groupmate.function_calls.handlers.reminders import ReminderRefArgs
    from groupmate.function_calls.handlers.timezone import TimezoneArgs

__all__ = [
    "BUILTIN_MODULES",
    "BUILTIN_ORDER",
    "ReminderArgs",
    "ReminderRefArgs",
    "ReminderUpdateArgs",
    "TimezoneArgs",
    "builtin_plugins",
    "builtin_tools",
    "describe_schedule",
    "in_model_order",
    "refusal_text",
    "reminder_message",
]

# Not for type checkers: they read the imports above, and a typo stays an error.
if not TYPE_CHECKING:
    __getattr__ = lazy_exports(
        __name__,
        {
            "groupmate.function_calls.handlers.families": (
                "BUILTIN_MODULES",
                "BUILTIN_ORDER",
                "builtin_plugins",
                "builtin_tools",
                "in_model_order",
            ),
            "groupmate.function_calls.handlers.reminder_args": ("ReminderArgs",),
            "groupmate.function_calls.handlers.reminder_changes": ("ReminderUpdateArgs",),
            "groupmate.function_calls.handlers.reminder_refusals": ("refusal_text",),
            "groupmate.function_calls.handlers.reminder_words": (
                "describe_schedule",
                "reminder_message",
            ),
            "groupmate.function_calls.handlers.reminders": ("ReminderRefArgs",),
            "groupmate.function_calls.handlers.timezone": ("TimezoneArgs",),
        },
    )
