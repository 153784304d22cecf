"""The words storage shares with the layers above it, each defined once: what its rows
hold (a chat's type, a reminder's status, a delivery's outcome), the keys and values of a
chat's settings, and the reasons its errors carry (`storage.errors`). Every other module
imports them from here; a schedule's kinds are `storage.recurrence.Kind`. The tool-calling
words an audit row holds (a call's effect, source, auth, outcome) are the tools' own
(`function_calls.vocabulary`): storage keeps them as plain strings."""

from __future__ import annotations

from typing import Final, Literal, TypeGuard, get_args

# A chat: a group, or a private chat with one person.
ChatType = Literal["group", "private"]
CHAT_TYPES: tuple[ChatType, ...] = get_args(ChatType)


def is_chat_type(value: object) -> TypeGuard[ChatType]:
    """`value` is "group" or "private" (an untrusted string from a request or a platform)."""
    return value in CHAT_TYPES


def stored_chat_type(value: str) -> ChatType:
    """A chat's type as a row holds it (a plain string column): storage writes only
    CHAT_TYPES, so this narrows once, where rows are read, and callers need no coercion."""
    return "private" if value == "private" else "group"


# The chat id of a plugin's global values (storage.plugin_data): its values for every chat.
GLOBAL: Final = ""

# A reminder's status: active and paused ones are live (listed, editable); a one-time
# reminder that fired is done; a deleted one is cancelled (kept for its history).
LiveStatus = Literal["active", "paused"]
ReminderStatus = Literal[LiveStatus, "done", "cancelled"]

# What became of one occurrence of a reminder (a row of the deliveries table), once
# finished: sent (late: after `late_after`), skipped (missed past its grace; or, for a
# scheduled digest, nothing was said since the last and the chat asked to skip quiet
# ones), failed (every attempt), or cancelled (the reminder was deleted while a retry
# was pending).
FinishedOutcome = Literal[
    "sent", "sent_late", "skipped_missed", "skipped_quiet", "failed", "cancelled"
]
# A deliveries row's outcome: "pending" while it is claimed and being sent or retried.
DeliveryOutcome = Literal["pending", FinishedOutcome]
DELIVERY_OUTCOMES: tuple[DeliveryOutcome, ...] = get_args(DeliveryOutcome)
# A line of a chat's reminder history: a finished delivery, a snooze that was set, or
# someone saying done.
HistoryOutcome = Literal[FinishedOutcome, "snoozed", "done"]

# Who may set reminders for others (a chat setting, and the config's defaults).
Permission = Literal["members", "admins", "off"]
PERMISSIONS: tuple[Permission, ...] = get_args(Permission)

# The keys of a chat's settings (the chats table's JSON column).
SettingKey = Literal[
    "remind_others",
    "remind_everyone",
    "token_budget",
    "tools_off",
    "digest_when_quiet",
    "followup",
    "followup_seconds",
    "workdays",
]
SETTING_OTHERS: Final[SettingKey] = "remind_others"  # a Permission
SETTING_EVERYONE: Final[SettingKey] = "remind_everyone"  # a Permission
SETTING_TOKEN_BUDGET: Final[SettingKey] = "token_budget"  # the chat's daily token limit
SETTING_TOOLS_OFF: Final[SettingKey] = "tools_off"  # tools a chat admin switched off
SETTING_QUIET_DIGEST: Final[SettingKey] = "digest_when_quiet"  # a QuietDigest
SETTING_FOLLOWUP: Final[SettingKey] = "followup"  # a Switch: follow-ups need no mention
SETTING_FOLLOWUP_SECONDS: Final[SettingKey] = "followup_seconds"  # how long one may come
# The country whose work days "every weekday" follows (storage/chat_calendar.py).
SETTING_WORKDAYS: Final[SettingKey] = "workdays"
# What a scheduled digest (a /summary or /catchup action) does when nothing was said
# since the last one: say so ("Quiet day: …"), or post nothing.
QuietDigest = Literal["post", "skip"]
QUIET_DIGESTS: tuple[QuietDigest, ...] = get_args(QuietDigest)
# A chat setting that is on or off.
Switch = Literal["on", "off"]
SWITCHES: tuple[Switch, ...] = get_args(Switch)

# What a requester asks to do to a reminder (`changes.locate`'s `may`); a refusal names it.
ReminderAction = Literal["change", "delete", "pause", "resume", "snooze", "done"]

# Who must say done before an "until done" reminder stops (reminders.ack; NULL: none
# must, the reminder keeps its rule): the person who set it, anyone in the chat, or each
# person it mentions.
AckRule = Literal["asker", "anyone", "each"]
ACK_RULES: tuple[AckRule, ...] = get_args(AckRule)
# How someone said done (acknowledgements.via): a button, a reaction, a reply, /done.
AckVia = Literal["button", "reaction", "reply", "command"]
ACK_VIAS: tuple[AckVia, ...] = get_args(AckVia)
# Why "remind me too" was refused (MeTooError.problem): the asker switched it off for
# the reminder; it is a private chat's; it already reminds everyone; it is the
# presser's own reminder; the chat's rules keep members from adding people to reminders.
MeTooProblem = Literal["off", "private", "everyone", "own", "rules"]

# Why there is no reminder to act on (ReminderNotFoundError.reason): none live by that
# reference in this chat; it fired its last time as it was being deleted; a one-time
# reminder resumed after its time. And, for a snooze that names no reminder
# (SnoozeTargetError.problem): none went off lately, several did, or the message it
# replies to is not a reminder's.
SnoozeTargetProblem = Literal["none_recent", "several_recent", "several_match", "not_a_reminder"]
NotFoundReason = Literal["absent", "finished", "past_due", SnoozeTargetProblem]

# Why a reminder can't do that as it is (ReminderStateError.problem): a snooze's rule is
# its reminder's; a one-time reminder does not pause; one not yet sent does not snooze.
StateProblem = Literal["snooze_rule", "once_pause", "not_delivered"]
