"""Follow-ups in a group: after the bot answers someone, their next message within the
chat's window counts as meant for the bot without a mention (`bot.followup`). A chat
setting, off unless a chat admin turns it on: `/settings followup on`,
`/settings followup_seconds 90`."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.handlers.settings_change import settings_after
from groupmate.function_calls.registry import tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.storage import ReminderService
from groupmate.storage.vocabulary import SETTING_FOLLOWUP, SETTING_FOLLOWUP_SECONDS, Switch

NAME = "followup_settings"
DEFAULT_SECONDS = 120
MIN_SECONDS, MAX_SECONDS = 10, 3600
# What the settings take, in words (for /settings, which checks them before the call).
SWITCH_WORDS = "followup is on or off, e.g. /settings followup on"
SECONDS_WORDS = (
    f"followup_seconds is {MIN_SECONDS} to {MAX_SECONDS} seconds, "
    "e.g. /settings followup_seconds 120"
)


def followup_window(settings: Mapping[str, object]) -> int | None:
    """The chat's follow-up window in seconds, or None when follow-ups are off (the
    default: in a group, only a mention, a prefix or a reply reaches the bot)."""
    return followup_seconds(settings) if settings.get(SETTING_FOLLOWUP) == "on" else None


def followup_seconds(settings: Mapping[str, object]) -> int:
    """The chat's follow-up window's length, whether follow-ups are on or not."""
    seconds = settings.get(SETTING_FOLLOWUP_SECONDS)
    if isinstance(seconds, int) and MIN_SECONDS <= seconds <= MAX_SECONDS:
        return seconds
    return DEFAULT_SECONDS


class FollowupArgs(BaseModel):
    """New follow-up settings; what is left out stays."""

    model_config = ConfigDict(extra="forbid")

    followup: Switch | None = Field(
        None, description="on: a member's next message after the bot answered them needs no mention"
    )
    followup_seconds: int | None = Field(
        None,
        ge=MIN_SECONDS,
        le=MAX_SECONDS,
        description="how long after the bot's answer a follow-up may come, in seconds",
    )


def _describe(window: int | None, seconds: int) -> str:
    if window is None:
        return (
            "Follow-ups: off (in this group I answer a mention, a reply to me or a command). "
            f"With /settings followup on, someone I just answered may go on within {seconds} "
            "seconds without mentioning me."
        )
    return (
        f"Follow-ups: on. After I answer someone, their next message within {window} seconds "
        "is for me without a mention, unless it mentions or replies to someone else."
    )


@tool_function(
    name=NAME,
    scope="group",
    # `/settings` shows and changes it; the model's prompt is spared it.
    for_model=False,
    description=(
        "Show or change whether, in this group, the next message of someone the bot just "
        "answered reaches the bot without a mention, and for how long. Group admins change it."
    ),
)
async def followup_settings(
    ctx: MessageContext, args: FollowupArgs, service: ReminderService
) -> FunctionResult:
    changes: dict[str, object] = {}
    if args.followup is not None:
        changes[SETTING_FOLLOWUP] = args.followup
    if args.followup_seconds is not None:
        changes[SETTING_FOLLOWUP_SECONDS] = args.followup_seconds
    settings = await settings_after(ctx, service, changes, what="how follow-ups work here")
    if isinstance(settings, FunctionResult):
        return settings
    window, seconds = followup_window(settings), followup_seconds(settings)
    data = {"followup": "off" if window is None else "on", "followup_seconds": seconds}
    prefix = "⚙️ Updated. " if changes else ""
    return FunctionResult.direct(
        prefix + _describe(window, seconds), data=data, changed=bool(changes)
    )
