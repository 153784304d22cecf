"""`set_timezone`: the chat's IANA time zone, which reminders are read and shown in."""

from __future__ import annotations

import functools
import zoneinfo
from zoneinfo import ZoneInfo

from pydantic import BaseModel, Field, field_validator

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.handlers.reminder_refusals import unknown_zone
from groupmate.function_calls.handlers.reminder_words import workdays_words
from groupmate.function_calls.handlers.reminders import describe_reminder, refused
from groupmate.function_calls.plugins.declare import Plugin
from groupmate.function_calls.registry import Example, tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.storage import InvalidTimezoneError, ReminderService, StorageError, check_timezone
from groupmate.storage.chat_calendar import WORKDAYS_OFF, chat_workdays
from groupmate.storage.errors import UnknownCalendarError
from groupmate.storage.workdays import calendar_named, work_calendar

# A built-in family, loaded as any plugin is (`builtins: {timezone: false}` leaves it out).
plugin = Plugin("timezone")


@functools.cache
def _zones_by_city() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for name in zoneinfo.available_timezones():
        found.setdefault(name.rsplit("/", 1)[-1].lower(), []).append(name)
    return found


def _suggest(name: str) -> str:
    city = name.strip().replace(" ", "_").rsplit("/", 1)[-1].lower()
    matches = sorted(_zones_by_city().get(city, []))
    return f"; did you mean {' or '.join(matches[:3])}?" if matches else ""


class TimezoneArgs(BaseModel):
    """The new time zone."""

    timezone: str = Field(
        min_length=1,
        max_length=64,
        description="IANA time zone name, e.g. Europe/Berlin, America/New_York, Asia/Tokyo",
    )

    @field_validator("timezone")
    @classmethod
    def _check_zone(cls, value: str) -> str:
        try:
            return check_timezone(value.strip())
        except InvalidTimezoneError as exc:
            raise ValueError(f"{unknown_zone(exc.name)}{_suggest(value)}") from None


@tool_function(
    name="set_timezone",
    description=(
        "Change this chat's time zone (group admins only). Repeating reminders keep their "
        "local time in the new zone; one-time reminders keep their moment."
    ),
    examples=[Example("switch our time zone to London", {"timezone": "Europe/London"})],
)
async def set_timezone(
    ctx: MessageContext,
    args: TimezoneArgs,
    service: ReminderService,
) -> FunctionResult:
    new_zone = ZoneInfo(args.timezone)
    if ctx.chat_type == "group" and not ctx.is_admin:
        return FunctionResult.refused(
            "Only a group admin can change this chat's time zone.",
            "forbidden",
            {"changed": False},
        )
    try:
        moved = await service.set_timezone(ctx.chat_id, ctx.chat_type, args.timezone)
    except StorageError as exc:
        return refused(exc, ctx.text, {"changed": False})
    lines = [f"🌍 This chat's time zone is now {args.timezone}."]
    if moved:
        lines.append("Repeating reminders keep their local time; one-time ones their moment:")
        lines.extend(describe_reminder(reminder, new_zone) for reminder in moved)
    return FunctionResult.direct(
        "\n".join(lines), data={"changed": True, "moved": len(moved)}, value=moved
    )


class WorkdaysArgs(BaseModel):
    """The country whose work days "every weekday" follows; none: say which it is."""

    workdays: str | None = Field(
        None,
        min_length=2,
        max_length=8,
        description="CN for China's official calendar, a country code such as DE, or off",
    )

    @field_validator("workdays")
    @classmethod
    def _check_country(cls, value: str | None) -> str | None:
        if value is None or value.strip().lower() == WORKDAYS_OFF:
            return WORKDAYS_OFF if value is not None else None
        try:
            return work_calendar(value).country
        except UnknownCalendarError:
            raise ValueError(
                f"{value.strip()!r} is not a country calendar I know. Use CN for China's "
                "official calendar, a two-letter country code such as DE, or off"
            ) from None


def _workdays_phrase(country: str | None) -> str:
    # The same words the confirmation and /reminders use for the rule.
    return workdays_words(calendar_named(country))


@tool_function(
    name="set_workdays",
    description=(
        "Make 'every weekday' reminders in this chat follow a country's official work days "
        "(group admins only): CN skips China's public holidays and fires on its make-up "
        "work days; another country code skips that country's public holidays; off: "
        "Monday to Friday. Without a value: say which calendar the chat follows."
    ),
    examples=[Example("follow China's holiday calendar", {"workdays": "CN"})],
)
async def set_workdays(
    ctx: MessageContext,
    args: WorkdaysArgs,
    service: ReminderService,
) -> FunctionResult:
    if args.workdays is None:
        current = chat_workdays(
            await service.settings_of(ctx.chat_id), service.chats.default_workdays
        )
        return FunctionResult.direct(
            f"Weekday reminders here repeat {_workdays_phrase(current)}. "
            "Change it with /settings workdays CN (or a country code, or off).",
            data={"workdays": current},
            changed=False,  # shown, not changed: the audit log leaves it out
        )
    if ctx.chat_type == "group" and not ctx.is_admin:
        return FunctionResult.refused(
            "Only a group admin can change this chat's work-day calendar.",
            "forbidden",
            {"changed": False},
        )
    country = None if args.workdays == WORKDAYS_OFF else args.workdays
    try:
        moved = await service.set_calendar(ctx.chat_id, ctx.chat_type, country)
    except StorageError as exc:
        return refused(exc, ctx.text, {"changed": False})
    lines = [f"📅 Weekday reminders here now repeat {_workdays_phrase(country)}."]
    if moved:
        lines.append("Their next dates:")
        lines.extend(describe_reminder(reminder, ctx.zone) for reminder in moved)
    return FunctionResult.direct(
        "\n".join(lines), data={"changed": True, "moved": len(moved)}, value=moved
    )
