"""`set_timezone`: the chat's IANA time zone, which reminders are read and shown in."""

from __future__ import annotations

import functools
import zoneinfo
from zoneinfo import ZoneInfo

from pydantic import BaseModel, Field, field_validator

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.handlers.reminder_refusals import unknown_zone
from groupmate.function_calls.handlers.reminders import describe_reminder, refused
from groupmate.function_calls.plugins.declare import Plugin
from groupmate.function_calls.registry import Example, tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.storage import InvalidTimezoneError, ReminderService, StorageError, check_timezone

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
