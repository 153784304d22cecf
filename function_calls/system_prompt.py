"""What the model is told besides the chat: a system prompt that never changes between
messages and chats (persona, rules, tool instructions), and a short context block with
the volatile facts (clock, zone, chat, sender).

The split is for the server's prefix cache: llama.cpp, vLLM, Ollama and OpenAI reuse the
longest prompt prefix they saw before, so everything stable comes first, byte for byte
the same, and the clock comes last: at the end of the system prompt in prompt mode (after
the tool list), after the latest message in native mode (where chat templates put the
tools after the system text). With the clock before the rules and tools, a small local
model re-read the whole ~1,200-token prompt on every message.
"""

from __future__ import annotations

from datetime import timedelta

from groupmate.function_calls.context import MessageContext

DEFAULT_PERSONA = (
    "You are groupmate, a helpful assistant that lives in a chat. "
    "Answer briefly and in the language of the message."
)

_TOOL_RULES = (
    "Rules for tools:\n"
    "- Call a tool only when the request needs one. Greetings, thanks, small talk and "
    "general questions get a direct answer, never a tool call.\n"
    "- The [Context: ...] line gives the chat's current local time, time zone, kind of "
    "chat and the sender of the latest message.\n"
    "- For reminder times, pass the user's own words in `when` (e.g. 'tomorrow at 9', "
    "'every monday at 9am', 'in 30 minutes', '明天下午3点'); they are read exactly in the "
    "chat's time zone. Do not compute dates yourself.\n"
    "- The chat and the sender are already known to the tools: never ask for, or pass, chat "
    "or user ids.\n"
    "- Never say a reminder is set unless the tool confirmed it; never invent tool results. "
    "When a tool reports an error, correct the call or explain the problem briefly.\n"
    "- What a tool can tell (the time in another place, this chat's reminders, what a "
    "page says) comes from calling it, never from guessing.\n"
    "- When required details are missing, ask one short question instead of guessing."
)


def _utc_offset(ctx: MessageContext) -> str:
    offset = ctx.now().utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    hours, rest = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours:02d}:{rest:02d}"


def build_system_prompt(*, persona: str = DEFAULT_PERSONA, tool_instructions: str = "") -> str:
    """The system message: the same for every message of every chat that sees the same
    tools, so a server's prefix cache keeps it."""
    parts = [persona, _TOOL_RULES]
    if tool_instructions:
        parts.append(tool_instructions)
    return "\n\n".join(parts)


_MAX_QUOTED = 400  # of a replied-to message, in the context line


def build_context(ctx: MessageContext) -> str:
    """The volatile facts for the latest message: clock, zone, chat and sender."""
    now = ctx.now()
    tomorrow = now + timedelta(days=1)
    where = "group chat" if ctx.chat_type == "group" else "private chat"
    sender = ctx.sender_name or ctx.sender_id
    replying = ""
    if ctx.reply_text:
        quoted = " ".join(ctx.reply_text.split())[:_MAX_QUOTED]
        replying = f' It replies to the message "{quoted}".'
    return (
        f"[Context: now {now:%A, %Y-%m-%d %H:%M} in the chat's time zone {ctx.timezone} "
        f"({_utc_offset(ctx)}); tomorrow is {tomorrow:%A, %Y-%m-%d}. A {where}; the latest "
        f"message is from {sender}.{replying}]"
    )
