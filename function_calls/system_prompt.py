"""The system prompt: persona, the chat's local date and time, and the rules for tools."""

from __future__ import annotations

from datetime import timedelta

from function_calls.context import MessageContext

DEFAULT_PERSONA = (
    "You are groupmate, a helpful assistant that lives in a chat. "
    "Answer briefly and in the language of the message."
)

_TOOL_RULES = (
    "Rules for tools:\n"
    "- Call a tool only when the request needs one; otherwise answer directly.\n"
    "- Resolve relative dates and times ('tomorrow at 9', 'next Monday') against the current "
    "local time above and pass absolute local values in the chat's time zone.\n"
    "- The chat and the sender are already known to the tools: never ask for, or pass, chat "
    "or user ids.\n"
    "- Never invent tool results. When a tool reports an error, correct the call or explain "
    "the problem briefly.\n"
    "- When required details are missing, ask one short question instead of guessing."
)


def _utc_offset(ctx: MessageContext) -> str:
    offset = ctx.now().utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    hours, rest = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours:02d}:{rest:02d}"


def build_system_prompt(
    ctx: MessageContext, *, persona: str = DEFAULT_PERSONA, tool_instructions: str = ""
) -> str:
    """The system message for one turn in the chat of `ctx`."""
    now = ctx.now()
    tomorrow = now + timedelta(days=1)
    where = "a group chat" if ctx.chat_type == "group" else "a private chat"
    sender = ctx.sender_name or ctx.sender_id
    parts = [
        persona,
        f"Now it is {now:%A, %Y-%m-%d %H:%M} in the chat's time zone {ctx.timezone} "
        f"({_utc_offset(ctx)}); tomorrow is {tomorrow:%A, %Y-%m-%d}.",
        f"This is {where}; the latest message is from {sender}. "
        "Group messages are prefixed with the sender's name.",
        _TOOL_RULES,
    ]
    if tool_instructions:
        parts.append(tool_instructions)
    return "\n\n".join(parts)
