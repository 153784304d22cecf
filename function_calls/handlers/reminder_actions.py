"""Reminders that run a command when they fire ("/remind every day at 18:00 /summary",
"post a summary of the day every evening at 6"): which of a reminder's words name an
action, and whether its creator may schedule it. The run itself is the bot's
(`bot.actions`): as the creator, in the chat, through the same gate as any call."""

from __future__ import annotations

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.services import ScheduledCommands
from groupmate.storage import ScheduledAction
from groupmate.storage.exceptions import GroupmateError


class ActionRefused(GroupmateError):
    """The reminder names a command it may not run; the message says why, for the user."""


def scheduled_action(ctx: MessageContext, content: str) -> ScheduledAction | None:
    """The action `content` names ("/search python release notes"), or None for a plain
    text. Words that only look like a command ("/etc/hosts backup") are a text, as typed.

    Raises ActionRefused when it names a command that can't run on a schedule, or that
    the sender may not run here now."""
    words = content.strip()
    if not words.startswith("/"):
        return None
    commands = ctx.deps.get(ScheduledCommands)
    if commands is None:  # no chat commands here (a tools-only process)
        return None
    head, _, rest = words[1:].partition(" ")
    name = head.split("@", 1)[0].lower()  # "/summary@groupmate" names this bot's
    if not name or not commands.known(name):
        return None
    why = commands.refusal(ctx, name)
    if why is not None:
        raise ActionRefused(why)
    return ScheduledAction(name, rest.strip())


def shown(content: str, action: ScheduledAction | None) -> str:
    """A reminder's words in a listing: "▶ /summary" for an action, else its text."""
    return f"▶ {action.shown}" if action is not None else content
