"""A reminder as a value (`ReminderView`, `NewReminder`, who it mentions, what it runs)
and the one place a reminders row becomes one and back (`reminder_view`, `schedule_of`,
`schedule_columns`). Queries are `storage.repository`'s."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import Row

from groupmate.storage.models import Reminder
from groupmate.storage.outgoing import Member
from groupmate.storage.recurrence import Kind, Schedule
from groupmate.storage.vocabulary import ACK_RULES, AckRule, ChatType, stored_chat_type
from groupmate.storage.workdays import calendar_named


@dataclass(frozen=True, slots=True)
class Audience:
    """Who a reminder's message mentions: the creator, named members, or everyone."""

    mentions: tuple[Member, ...] = ()
    creator: bool = True
    everyone: bool = False

    def columns(self) -> dict[str, Any]:
        mentions = [{"user_id": m.user_id, "name": m.name} for m in self.mentions]
        return {
            "mentions": mentions or None,
            "mention_creator": self.creator,
            "everyone": self.everyone,
        }

    @classmethod
    def of(cls, row: Any) -> Audience:
        if not row.mentions and row.mention_creator and not row.everyone:
            return _JUST_THE_CREATOR  # most reminders: no need to build one per claim
        mentions = tuple(Member(m["user_id"], m.get("name", "")) for m in row.mentions or ())
        return cls(mentions, bool(row.mention_creator), bool(row.everyone))


_JUST_THE_CREATOR = Audience()


@dataclass(frozen=True, slots=True)
class ScheduledAction:
    """A command a reminder runs at each occurrence instead of posting a text: `command`
    without its slash ("summary"), `args` as typed after it."""

    command: str
    args: str = ""

    def columns(self) -> dict[str, str]:
        return {"command": self.command, "args": self.args}

    @property
    def shown(self) -> str:
        """As the user typed it: "/search python release notes"."""
        return f"/{self.command} {self.args}".strip()

    @classmethod
    def of(cls, row: Any) -> ScheduledAction | None:
        stored = getattr(row, "action", None)
        if not isinstance(stored, dict) or not stored.get("command"):
            return None
        return cls(str(stored["command"]), str(stored.get("args") or ""))


@dataclass(frozen=True, slots=True)
class ReminderView:
    """A reminder as read at one moment; safe to pass between threads."""

    id: str
    short_id: int
    chat_id: str
    chat_type: ChatType
    created_by: str
    created_by_name: str
    content: str
    schedule: Schedule
    status: str
    next_fire_at: datetime | None
    version: int
    created_at: datetime
    audience: Audience = Audience()
    snooze_of: str | None = None
    action: ScheduledAction | None = None
    # Who must say done before it stops (None: no one must; it keeps its rule).
    ack: AckRule | None = None
    # Members may add themselves ("remind me too").
    me_too: bool = True

    @property
    def label(self) -> str:
        return f"#{self.short_id}"


@dataclass(frozen=True, slots=True)
class NewReminder:
    chat_id: str
    chat_type: ChatType
    created_by: str
    created_by_name: str
    content: str
    schedule: Schedule
    first_fire_at: datetime
    audience: Audience = Audience()
    snooze_of: str | None = None
    action: ScheduledAction | None = None
    # "Until done": who must say done; the cap is the schedule's `count`.
    ack: AckRule | None = None
    me_too: bool = True


_ACK_RULE: dict[str | None, AckRule] = {rule: rule for rule in ACK_RULES}


def ack_rule(value: str | None) -> AckRule | None:
    """A reminders row's `ack` as the Literal: storage writes only ACK_RULES."""
    return _ACK_RULE.get(value)


def schedule_columns(schedule: Schedule) -> dict[str, Any]:
    """The reminders columns that hold `schedule`: the one place a rule becomes a row."""
    until = schedule.until
    return {
        "kind": schedule.kind,
        "local_time": schedule.wall_time,
        "local_fold": bool(schedule.wall_time.fold),
        "local_date": schedule.on_date,
        "weekday": schedule.weekday,
        "day": schedule.day,
        "interval": schedule.interval,
        "timezone": schedule.timezone,
        "every_seconds": None if schedule.every is None else schedule.every // timedelta(seconds=1),
        "window_end": schedule.window_end,
        "on_days": ",".join(map(str, schedule.on_days)) or None,
        "until_date": None if isinstance(until, datetime) else until,
        "until_at": until if isinstance(until, datetime) else None,
        "repeat_count": schedule.count,
        "calendar": schedule.calendar.country if schedule.calendar is not None else None,
    }


def schedule_of(row: Reminder | Row[Any]) -> Schedule:
    """The rule a reminders row holds (`schedule_columns`, read back)."""
    return Schedule(
        cast(Kind, row.kind),
        row.local_time.replace(fold=1) if row.local_fold else row.local_time,
        row.timezone,
        row.local_date,
        row.weekday,
        row.day,
        row.interval,
        every=None if row.every_seconds is None else timedelta(seconds=row.every_seconds),
        window_end=row.window_end,
        on_days=tuple(int(day) for day in row.on_days.split(",")) if row.on_days else (),
        until=row.until_at if row.until_at is not None else row.until_date,
        count=row.repeat_count,
        calendar=calendar_named(row.calendar),
    )


def reminder_view(row: Reminder | Row[Any]) -> ReminderView:
    schedule = schedule_of(row)
    return ReminderView(
        id=row.id,
        short_id=row.short_id,
        chat_id=row.chat_id,
        chat_type=stored_chat_type(row.chat_type),
        created_by=row.created_by,
        created_by_name=row.created_by_name,
        content=row.content,
        schedule=schedule,
        status=row.status,
        next_fire_at=row.next_fire_at,
        version=row.version,
        created_at=row.created_at,
        audience=Audience.of(row),
        snooze_of=row.snooze_of,
        action=ScheduledAction.of(row),
        ack=ack_rule(row.ack),
        me_too=bool(row.me_too),
    )
