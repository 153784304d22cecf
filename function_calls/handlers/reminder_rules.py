"""Who in a group may set reminders for other members or for everyone, and changing it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.handlers.audience_rules import ReminderRules, rule_changes
from groupmate.function_calls.handlers.settings_change import settings_after
from groupmate.function_calls.registry import tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.function_calls.services import AudienceRules
from groupmate.storage import ReminderService
from groupmate.storage.vocabulary import Permission


class ReminderRulesArgs(BaseModel):
    """New rules for who may set reminders for others; what is left out stays."""

    model_config = ConfigDict(extra="forbid")

    remind_others: Permission | None = Field(
        None, description="who may set reminders that mention other members"
    )
    remind_everyone: Permission | None = Field(
        None, description="who may set reminders for everyone"
    )


def _describe_rules(rules: AudienceRules) -> str:
    return (
        f"Reminders for other members: {rules.remind_others}. "
        f"Reminders for everyone: {rules.remind_everyone}. "
        "(members = anyone here, admins = group admins only, off = nobody)"
    )


@tool_function(
    name="reminder_rules",
    scope="group",
    description=(
        "Show or change who in this group may set reminders for other members or for "
        "everyone: members, admins or off. Changing them is for group admins."
    ),
    examples=["only admins may remind others here", "who can set reminders for everyone?"],
)
async def reminder_rules(
    ctx: MessageContext,
    args: ReminderRulesArgs,
    service: ReminderService,
) -> FunctionResult:
    defaults = ctx.deps.get(AudienceRules) or ReminderRules()
    changes = rule_changes(args.remind_others, args.remind_everyone)
    settings = await settings_after(ctx, service, changes, what="who may set reminders for others")
    if isinstance(settings, FunctionResult):
        return settings
    rules = defaults.for_chat(settings)
    data = {"remind_others": rules.remind_others, "remind_everyone": rules.remind_everyone}
    prefix = "⚙️ Updated. " if changes else ""
    return FunctionResult.direct(
        prefix + _describe_rules(rules), data=data, value=rules, changed=bool(changes)
    )
