"""The eval corpus: cases in YAML (a list) or JSONL (one per line), checked on load."""

from __future__ import annotations

import json
from datetime import date as Date
from datetime import datetime
from datetime import time as Time
from pathlib import Path
from typing import Literal, Self
from zoneinfo import ZoneInfo

import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator, model_validator

from groupmate.storage.recurrence import Kind
from groupmate.storage.vocabulary import ChatType


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Person(_Strict):
    id: str = "u-alice"
    name: str = "Alice"
    admin: bool = False


class Said(_Strict):
    """A message logged before the case's message (context for summaries)."""

    name: str
    text: str


class Seed(_Strict):
    """A reminder that exists before the case runs, set with `/remind <text>`."""

    remind: str
    chat: Literal["this", "other"] = "this"
    # Set a few minutes before the case's moment and delivered by then ("in 5 minutes
    # stretch"), so that it can be snoozed.
    gone_off: bool = False


class SearchHit(_Strict):
    title: str
    url: str
    text: str


Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


class RelativeTime(_Strict):
    """A first fire time named relative to the moment the case runs, for cases on the real
    clock: `{day: tomorrow, at: "09:00"}`, `{in_minutes: 120}`, `{weekday: monday, at:
    "09:00"}`. The judge reads it itself (bot/eval/relative.py), never with the bot's
    grammar. One anchor at most; `at` alone is today if still ahead, else tomorrow."""

    in_minutes: int | None = Field(None, ge=1)
    day: Literal["today", "tomorrow", "day_after_tomorrow"] | None = None
    weekday: Weekday | None = None
    next_week: bool = Field(False, description="with weekday: that day of next week (下周三)")
    workday: bool = Field(False, description="the next Monday to Friday")
    # Up to 28: every month has it, so no rule for short months is needed here.
    month_day: int | None = Field(None, ge=1, le=28)
    date: str | None = Field(None, description="'MM-DD': this year's if still ahead")
    at: str | None = Field(None, description="local 'HH:MM'")

    @model_validator(mode="after")
    def _one_anchor(self) -> Self:
        anchors = (self.in_minutes, self.day, self.weekday, self.month_day, self.date)
        if sum(anchor is not None for anchor in anchors) + self.workday > 1:
            raise ValueError("give one of in_minutes, day, weekday, workday, month_day, date")
        if (self.in_minutes is None) == (self.at is None):
            raise ValueError("give `at` with a day, or `in_minutes` alone")
        if self.next_week and self.weekday is None:
            raise ValueError("next_week goes with a weekday")
        if self.at is not None:
            Time.fromisoformat(self.at)
        if self.date is not None:
            month, day = (int(part) for part in self.date.split("-"))
            Date(2000, month, day)  # a leap year: 02-29 is a date
        return self


class ExpectedReminder(_Strict):
    rule: Kind
    first: str | RelativeTime = Field(
        description="local 'YYYY-MM-DD HH:MM' in the case's zone, or relative to the real now"
    )
    content: str = Field(description="a word the stored content must contain")


class ExpectedChange(ExpectedReminder):
    id: int


class Expect(_Strict):
    """The outcome; every part given must hold."""

    reminder: ExpectedReminder | None = None
    changed: ExpectedChange | None = None
    deleted: list[int] = Field(default_factory=list)
    snoozed: int | None = Field(None, description="a new one-time reminder this many minutes on")
    timezone: str | None = None
    # Each entry must appear in the reply (case-insensitive); "a|b" accepts either.
    reply_has: list[str] = Field(default_factory=list)
    no_tool: bool = False
    nothing_stored: bool = False
    # Nobody asked for a reminder ("no need to remind me anymore", "did you remind Bob?"):
    # an offer to set one is not what was asked.
    no_offer: bool = False


class Case(_Strict):
    id: str
    lang: Literal["en", "zh"] = "en"
    tags: list[str] = Field(default_factory=list)
    # Absent: the case runs on the real clock, as a user's message does, and its expected
    # times are relative to that moment.
    now: str | None = Field(None, description="local 'YYYY-MM-DD HH:MM' in `zone`")
    zone: str = "Europe/Berlin"
    chat: ChatType = "group"
    sender: Person = Person()
    history: list[Said] = Field(default_factory=list)
    reminders: list[Seed] = Field(default_factory=list)
    search: list[SearchHit] = Field(default_factory=list)
    say: str
    expect: Expect

    @field_validator("zone")
    @classmethod
    def _zone(cls, value: str) -> str:
        ZoneInfo(value)
        return value

    @field_validator("now")
    @classmethod
    def _now(cls, value: str | None) -> str | None:
        if value is not None:
            datetime.strptime(value, "%Y-%m-%d %H:%M")
        return value

    @model_validator(mode="after")
    def _real_clock(self) -> Self:
        """The real clock can't be moved back for a seed that went off, nor can a fixed
        date be right at every moment the case may run."""
        if self.now is not None:
            return self
        if any(seed.gone_off for seed in self.reminders) or self.expect.snoozed is not None:
            raise ValueError(f"case {self.id}: a snooze needs a fixed `now`")
        for expected in (self.expect.reminder, self.expect.changed):
            if expected is not None and isinstance(expected.first, str):
                raise ValueError(f"case {self.id}: without `now`, give `first` relative")
        return self

    @property
    def real_clock(self) -> bool:
        return self.now is None

    def local_now(self) -> datetime:
        """The case's fixed moment; a real-clock case has none."""
        if self.now is None:
            raise ValueError(f"case {self.id} runs on the real clock")
        return datetime.strptime(self.now, "%Y-%m-%d %H:%M").replace(tzinfo=ZoneInfo(self.zone))


_CASES = TypeAdapter(list[Case])


def load_cases(path: Path) -> list[Case]:
    """Every case of a .yaml/.yml file (a list) or .jsonl file, or of each such file in a
    folder; ids must be unique."""
    files = sorted(path.glob("*.y*ml")) + sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    cases: list[Case] = []
    for file in files:
        text = file.read_text(encoding="utf-8")
        if file.suffix == ".jsonl":
            raw = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            raw = yaml.safe_load(text) or []
        cases += _CASES.validate_python(raw)
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise ValueError(f"two cases have the id {case.id!r}")
        seen.add(case.id)
    return cases
