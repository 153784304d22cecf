"""Who may remind others in a chat: the config's defaults, and a chat's own settings.
Apart from function_calls.handlers.audience (who a reminder is for) so that reading a
config imports neither the grammar nor the database's models."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from groupmate.storage.vocabulary import PERMISSIONS, SETTING_EVERYONE, SETTING_OTHERS, Permission


@dataclass(frozen=True, slots=True)
class ReminderRules:
    """Who may remind others; the config's defaults, overridden per chat by its settings."""

    remind_others: Permission = "members"
    remind_everyone: Permission = "admins"

    def for_chat(self, settings: Mapping[str, object]) -> ReminderRules:
        others = settings.get(SETTING_OTHERS, self.remind_others)
        everyone = settings.get(SETTING_EVERYONE, self.remind_everyone)
        return ReminderRules(
            others if others in PERMISSIONS else self.remind_others,
            everyone if everyone in PERMISSIONS else self.remind_everyone,
        )


def rule_changes(
    remind_others: Permission | None, remind_everyone: Permission | None
) -> dict[str, str]:
    """The chat settings to write for the rules given (None: left as they are)."""
    given = {SETTING_OTHERS: remind_others, SETTING_EVERYONE: remind_everyone}
    return {key: value for key, value in given.items() if value is not None}
