"""Who a reminder is for: the sender, named chat members, or everyone, and who may ask.

Names are resolved only against members the platform vouches for: the users the message
itself mentions (`ctx.mentioned`) and, where an adapter provides one, its member
directory (a `MemberDirectory` in `ctx.deps`). A name neither knows is refused, never guessed.
"""

from __future__ import annotations

from collections.abc import Sequence

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.grammar import means_everyone
from groupmate.function_calls.handlers.audience_rules import (
    ReminderRules as ReminderRules,  # re-exported
)
from groupmate.function_calls.handlers.audience_rules import (
    rule_changes as rule_changes,  # re-exported
)
from groupmate.function_calls.services import AudienceRules, MemberDirectory
from groupmate.storage import Member
from groupmate.storage.exceptions import GroupmateError
from groupmate.storage.reminder_rows import Audience
from groupmate.storage.vocabulary import Permission


class AudienceRefused(GroupmateError):
    """The reminder can't be for these people; the message says why, for the user."""


def allowed_by(permission: Permission, ctx: MessageContext) -> bool:
    """The sender may do what `permission` (a chat's rule) governs."""
    return permission == "members" or (permission == "admins" and ctx.is_admin)


async def resolve_audience(
    ctx: MessageContext, who: Sequence[str] | None, rules: AudienceRules
) -> Audience:
    """The mentions for `who` ("me", "@name", "everyone"); raises AudienceRefused."""
    # "@Alice" from Alice is "me" (models often name the sender so).
    own = {ctx.sender_name.casefold(), ctx.sender_id.casefold()} - {""}
    who = ["me" if e.startswith("@") and e[1:].casefold() in own else e for e in who or ()]
    if not who or set(who) == {"me"}:
        return Audience()
    who = [await _as_group(ctx, entry) for entry in who]
    everyone = "everyone" in who
    names = [entry[1:] for entry in who if entry.startswith("@")]
    if ctx.chat_type == "private":
        if not names:
            return Audience()  # "remind us" in a private chat: the chat is the sender's
        raise AudienceRefused("In a private chat I can only remind you.")
    if everyone and rules.remind_others == "off":
        raise AudienceRefused(
            "Reminders for the group or other members are turned off in this chat."
        )
    if names and rules.remind_others == "off":
        raise AudienceRefused(_refusal("others", "off"))
    if names and not allowed_by(rules.remind_others, ctx):
        raise AudienceRefused(_refusal("others", rules.remind_others))
    if everyone and not allowed_by(rules.remind_everyone, ctx):
        # The team is the group: the reminder is still posted in the chat, only without
        # the everyone-mention this member may not use (the confirmation says so).
        everyone = False
        if not names:
            return Audience(creator=False)
    members: list[Member] = []
    for name in dict.fromkeys(names):
        member = await _find(ctx, name)
        if member is None:
            raise AudienceRefused(
                f"I can't find @{name} among this chat's members, so nothing was set. "
                "Mention them so the chat platform links their name."
            )
        members.append(member)
    return Audience(mentions=tuple(members), creator="me" in who, everyone=everyone)


async def _as_group(ctx: MessageContext, entry: str) -> str:
    """ "everyone" for a handle that names the group ("@team", "@all"), unless a member
    the platform vouches for goes by it."""
    if entry == "everyone" or not means_everyone(entry):
        return entry
    if entry.startswith("@") and await _find(ctx, entry[1:]) is not None:
        return entry
    return "everyone"


async def _find(ctx: MessageContext, name: str) -> Member | None:
    wanted = name.casefold()
    for member in ctx.mentioned:
        if wanted in (member.name.casefold().lstrip("@"), member.user_id.casefold()):
            return member
    directory = ctx.deps.get(MemberDirectory)
    if directory is None:
        return None
    return await directory.find(ctx.chat_id, name)


def _refusal(what: str, permission: Permission) -> str:
    target = "everyone" if what == "everyone" else "other members"
    if permission == "off":
        return f"Reminders for {target} are turned off in this chat."
    return f"Only a group admin can set reminders for {target} in this chat."


def asked_for_everyone(who: Sequence[str] | None) -> bool:
    return who is not None and any(means_everyone(entry) for entry in who)


def describe_audience(
    audience: Audience, ctx: MessageContext, *, everyone_asked: bool = False
) -> str:
    """Who the reminder notifies: ' for @Bob and you' / ' for everyone' / '' (just the
    sender); in a group the sender always (`reminder_message` mentions them). With
    `everyone_asked`, says when the everyone-mention was left out, and why."""
    if audience.everyone:
        return " for everyone"
    left_out = everyone_asked and ctx.chat_type == "group"
    if not audience.mentions:
        if left_out:
            return f" for this chat, mentioning only you ({_why_not(ctx)})"
        return ""
    names = [f"@{member.name or member.user_id}" for member in audience.mentions]
    also = ""
    if audience.creator:
        names.append("you")
    elif ctx.chat_type == "group":
        also = " (mentioning you too)"
    note = f" (without mentioning everyone: {_why_not(ctx)})" if left_out else ""
    return " for " + " and ".join(names) + also + note


def _why_not(ctx: MessageContext) -> str:
    if ctx.is_admin:
        return "mentioning everyone is turned off in this chat"
    return "only group admins can mention everyone here"
