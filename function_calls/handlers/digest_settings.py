"""`/settings digest_when_quiet post|skip`: what a scheduled digest (a reminder running
/summary or /catchup, `bot.actions`) does when nothing was said since the last one."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.handlers.settings_change import settings_after
from groupmate.function_calls.registry import tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.storage import ReminderService
from groupmate.storage.vocabulary import QUIET_DIGESTS, SETTING_QUIET_DIGEST, QuietDigest

# What the setting takes, in words (the command's and the arguments' own refusals).
QUIET_WORDS = "digest_when_quiet is post or skip, e.g. /settings digest_when_quiet skip"


class DigestSettingsArgs(BaseModel):
    """What a scheduled digest does on a quiet day; left out: shown, not changed."""

    model_config = ConfigDict(extra="forbid")

    digest_when_quiet: QuietDigest | None = Field(
        None, description="post: say 'Quiet day'; skip: post nothing when nothing was said"
    )

    @field_validator("digest_when_quiet", mode="before")
    @classmethod
    def _word(cls, value: object) -> object:
        word = value.strip().lower() if isinstance(value, str) else value
        if word is not None and word not in QUIET_DIGESTS:
            raise ValueError(QUIET_WORDS)
        return word


@tool_function(
    name="digest_settings",
    # `/settings` shows and changes it; the model's prompt is spared it.
    for_model=False,
    description=(
        "Show or change what a scheduled digest (a reminder running /summary or /catchup) "
        "does when nothing was said since the last one. Chat admins change it."
    ),
)
async def digest_settings(
    ctx: MessageContext, args: DigestSettingsArgs, service: ReminderService
) -> FunctionResult:
    change: dict[str, object] = {}
    if args.digest_when_quiet is not None:
        change[SETTING_QUIET_DIGEST] = args.digest_when_quiet
    settings = await settings_after(ctx, service, change, what="what quiet-day digests do here")
    if isinstance(settings, FunctionResult):
        return settings
    quiet = "skip" if settings.get(SETTING_QUIET_DIGEST) == "skip" else "post"
    said = (
        "a scheduled digest posts nothing when nothing was said since the last one"
        if quiet == "skip"
        else 'a scheduled digest says "Quiet day" when nothing was said since the last one'
    )
    prefix = "⚙️ Updated. " if args.digest_when_quiet is not None else ""
    return FunctionResult.direct(
        f"{prefix}digest_when_quiet: {quiet} ({said}).",
        data={"digest_when_quiet": quiet},
        changed=args.digest_when_quiet is not None,
    )
