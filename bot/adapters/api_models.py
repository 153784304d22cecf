"""The shapes of the REST API's reminder routes: what they take and what they return."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from groupmate.function_calls.handlers.followup import MAX_SECONDS, MIN_SECONDS
from groupmate.function_calls.handlers.reminder_limits import limit_fields, rule_fields
from groupmate.function_calls.handlers.reminder_words import describe_rule
from groupmate.storage import Button, ReminderView
from groupmate.storage.recurrence import Kind, Schedule
from groupmate.storage.vocabulary import (
    AckRule,
    FinishedOutcome,
    HistoryOutcome,
    Permission,
    QuietDigest,
    Switch,
)


class MemberIO(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_id: str = Field(min_length=1, max_length=255)
    name: str = Field("", max_length=255)


class ButtonOut(BaseModel):
    """A button under a message: what it says, and the data a press sends back."""

    label: str
    data: str


def buttons_out(rows: tuple[tuple[Button, ...], ...]) -> list[list[ButtonOut]]:
    return [[ButtonOut(label=b.label, data=b.data) for b in row] for row in rows]


class ActionIO(BaseModel):
    """A command a reminder runs when it fires, instead of posting its text."""

    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, max_length=64, description='without the slash: "summary"')
    args: str = Field("", max_length=1000, description="what follows the command, as typed")


class LastRunOut(BaseModel):
    """A scheduled action's latest occurrence, and what became of it."""

    at: datetime
    outcome: FinishedOutcome


class ReminderOut(BaseModel):
    """A reminder, in the fields `POST` takes (so it round-trips) plus what the bot knows."""

    id: str = Field(description="the full id; the routes also take the short id")
    short_id: int = Field(
        description="the number the chat sees, as in #3; a snooze has its reminder's"
    )
    type: Kind
    time: str = Field(description='once: local "YYYY-MM-DD HH:MM"; repeating: "HH:MM"')
    weekday: int | None = Field(description="weekly: 0 = Monday ... 6 = Sunday")
    day: int | None = Field(description="monthly: the day of the month")
    interval: int | None = Field(description="every N days/weeks/months; null for 1")
    every_minutes: int | None = Field(
        None, description="a repeat within the day: minutes between occurrences"
    )
    to: str | None = Field(None, description='every_minutes: the last time of each day, "HH:MM"')
    until: str | None = Field(
        None, description='the last day "YYYY-MM-DD" (or local "YYYY-MM-DD HH:MM"); null: none'
    )
    count: int | None = Field(None, description="how many times in all, from the first")
    last_at: datetime | None = Field(
        None, description="the last occurrence under until/count, in the reminder's zone"
    )
    content: str
    ack: AckRule | None = Field(
        None, description='until done: who must say done, "asker", "anyone" or "each"'
    )
    who: list[str] = Field(description='"me" (the creator), "@name" members, "everyone"')
    mentions: list[MemberIO] = Field(description="the members `who` names, with their ids")
    rule: str = Field(description="the rule in words, e.g. every Monday at 09:00")
    timezone: str
    next_fire_at: datetime | None = Field(description="in the reminder's zone; null if paused")
    created_by: str
    created_by_name: str
    status: str = Field(description="active or paused; done or cancelled once it ended")
    snooze_of: str | None = Field(description="for a snooze: the id of the snoozed reminder")
    action: ActionIO | None = Field(
        None, description="the command it runs when it fires (its content shows it)"
    )
    last_run: LastRunOut | None = Field(None, description="an action's latest run, in lists")


class SnoozeOut(BaseModel):
    reminder: ReminderOut
    snooze: ReminderOut


class HistoryOut(BaseModel):
    at: datetime
    short_id: int
    content: str
    outcome: HistoryOutcome = Field(
        description="a finished delivery's outcome, snoozed, or done (someone said done)"
    )
    late: bool
    detail: str | None = Field(
        description="a failed send's error; a snooze's new local time, YYYY-MM-DD HH:MM; "
        "who said done"
    )


class SettingsIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    timezone: str | None = Field(None, min_length=1, max_length=64)
    remind_others: Permission | None = None
    remind_everyone: Permission | None = None
    followup: Switch | None = Field(
        None, description="on: a member's next message after the bot answered them needs no mention"
    )
    followup_seconds: int | None = Field(None, ge=MIN_SECONDS, le=MAX_SECONDS)
    digest_when_quiet: QuietDigest | None = Field(
        None, description="a scheduled digest over a quiet window: post 'Quiet day', or skip"
    )


class SettingsOut(BaseModel):
    chat_id: str
    timezone: str
    remind_others: Permission
    remind_everyone: Permission
    followup: Switch
    followup_seconds: int
    digest_when_quiet: QuietDigest
    reminders_moved: int = Field(0, description="repeating reminders the zone change moved")


def _within_fields(schedule: Schedule) -> dict[str, Any]:
    """A repeat within a day in POST's fields; {} for other rules, or for days no
    type names (set through storage directly), which keep type "interval"."""
    if schedule.kind != "interval":
        return {}
    try:
        return rule_fields(schedule)
    except ValueError:
        return {}


def reminder_out(
    reminder: ReminderView, last: tuple[datetime, FinishedOutcome] | None = None
) -> ReminderOut:
    schedule = reminder.schedule
    clock = f"{schedule.wall_time:%H:%M}"
    audience = reminder.audience
    who = ["me"] if audience.creator else []
    who += [f"@{m.name or m.user_id}" for m in audience.mentions]
    who += ["everyone"] if audience.everyone else []
    next_fire = reminder.next_fire_at
    last_at = schedule.last()
    # The fields POST takes: a repeat within a day is named by its days' type.
    within = _within_fields(schedule)
    return ReminderOut(
        id=reminder.id,
        short_id=reminder.short_id,
        type=within.get("type", schedule.kind),
        time=f"{schedule.on_date} {clock}" if schedule.kind == "once" else clock,
        weekday=within.get("weekday", schedule.weekday),
        day=schedule.day,
        interval=schedule.interval if schedule.interval > 1 else None,
        every_minutes=within.get("every_minutes"),
        to=within.get("to"),
        **limit_fields(schedule),
        last_at=None if last_at is None else last_at.astimezone(schedule.zone),
        content=reminder.content,
        ack=reminder.ack,
        who=who,
        mentions=[MemberIO(user_id=m.user_id, name=m.name) for m in audience.mentions],
        rule=describe_rule(reminder),
        timezone=schedule.timezone,
        next_fire_at=None if next_fire is None else next_fire.astimezone(schedule.zone),
        created_by=reminder.created_by,
        created_by_name=reminder.created_by_name,
        status=reminder.status,
        snooze_of=reminder.snooze_of,
        action=None
        if reminder.action is None
        else ActionIO(command=reminder.action.command, args=reminder.action.args),
        last_run=None if last is None else LastRunOut(at=last[0], outcome=last[1]),
    )
