"""The eval corpus: cases in YAML (a list) or JSONL (one per line), checked on load."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo

import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator

from storage.recurrence import Kind


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


class ExpectedReminder(_Strict):
    rule: Kind
    first: str = Field(description="local 'YYYY-MM-DD HH:MM' in the case's zone")
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


class Case(_Strict):
    id: str
    lang: Literal["en", "zh"] = "en"
    tags: list[str] = Field(default_factory=list)
    now: str = Field(description="local 'YYYY-MM-DD HH:MM' in `zone`")
    zone: str = "Europe/Berlin"
    chat: Literal["group", "private"] = "group"
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
    def _now(cls, value: str) -> str:
        datetime.strptime(value, "%Y-%m-%d %H:%M")
        return value

    def local_now(self) -> datetime:
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
