"""Calling a tool from chat: a command, a "yes" to an offer, the grammar's fast path or a
scheduled action goes through the `ToolInvoker` (visibility, both validation stages, the
handler under its timeout) exactly like a call the model made, and each failure becomes
a sentence the sender can act on (`CommandError`).

The parse table (`bot.commands`) is built on this; answering, actions and offers use it
without the table.
"""

from __future__ import annotations

from typing import Any

from groupmate.function_calls import (
    FunctionResult,
    InvalidArgumentsError,
    MessageContext,
    ToolCall,
    ToolFailedError,
    ToolInvocationError,
    ToolInvoker,
    ToolTimeoutError,
    UnknownToolError,
    ValidatedToolCall,
)
from groupmate.function_calls.grammar import DEFAULT_TIME
from groupmate.function_calls.handlers.reminder_words import refusal
from groupmate.function_calls.internal_text import refusal_of
from groupmate.function_calls.language import PlainSentence, as_sentence, is_chinese
from groupmate.storage import StorageUnavailableError
from groupmate.storage.exceptions import GroupmateError

NOT_HERE = PlainSentence("That isn't available on this bot.", "这个机器人没有这个功能。")
# A tool's refusal, or what was wrong with the arguments, said to the user: a sentence
# whose own last mark is kept (see `as_sentence`).
DIDNT_WORK = PlainSentence("That didn't work: {problem}", "没有成功：{problem}")
UNUSABLE_WORDS = PlainSentence(
    "That didn't work: I couldn't use those words for it. See /help for examples.",
    "没有成功：我没法用这些词来做这件事。用法示例见 /help。",
)


class CommandError(GroupmateError):
    """The command could not be understood; the message says how to write it."""


class ChatTools:
    """Runs the invoker's tools on behalf of a chat message; refusals and failures are
    raised as `CommandError` in words (the database being down is raised as it is: the
    router answers that)."""

    def __init__(self, invoker: ToolInvoker) -> None:
        self.invoker = invoker

    def has_tool(self, name: str) -> bool:
        """Whether this bot has the tool at all (its family may be switched off)."""
        return name in self.invoker.registry

    async def call(self, ctx: MessageContext, tool_name: str, raw: dict[str, Any]) -> str:
        """The registry path: visibility, both validation stages, the handler."""
        return result_text(await self.run_tool(ctx, tool_name, raw))

    async def run_tool(
        self, ctx: MessageContext, tool_name: str, raw: dict[str, Any]
    ) -> FunctionResult:
        """`call`, returning the tool's whole result."""
        try:
            validated = self.invoker.validate_tool_call(ctx, ToolCall(tool_name, raw))
        except UnknownToolError:  # its family is switched off (`builtins:`)
            raise CommandError(NOT_HERE.for_message(ctx.text)) from None
        except InvalidArgumentsError as exc:
            raise CommandError(invalid_sentence(exc, ctx.text)) from None
        except ToolInvocationError as exc:  # hidden, switched off
            raise CommandError(refusal_of(exc).for_message(ctx.text)) from None
        return await self.execute(ctx, validated)

    async def execute(self, ctx: MessageContext, validated: ValidatedToolCall) -> FunctionResult:
        """Run a validated call through the invoker; its failures as a CommandError."""
        try:
            return await self.invoker.execute_tool_call(ctx, validated)
        except ToolTimeoutError:
            raise CommandError("That took too long; please try again later.") from None
        except ToolFailedError as exc:
            if isinstance(exc.__cause__, StorageUnavailableError):
                raise exc.__cause__ from None  # the router answers that the database is down
            if exc.internal:
                raise CommandError("Sorry, that failed on my side; please try again.") from None
            raise CommandError(didnt_work(str(exc), ctx.text)) from None
        except ToolInvocationError as exc:  # over the policy's rate limit
            raise CommandError(refusal_of(exc).for_message(ctx.text)) from None

    async def set_reminder(
        self, ctx: MessageContext, raw: dict[str, Any], default_time: bool = False
    ) -> str:
        """reminder_set with the grammar's arguments; the reply notes a default time. A
        reading the rules refuse ("in 9000 hours") is refused in words, not in the
        validation's."""
        try:
            validated = self.invoker.validate_tool_call(ctx, ToolCall("reminder_set", raw))
        except InvalidArgumentsError as exc:
            raise CommandError(refusal(exc, ctx.text)) from None
        except ToolInvocationError as exc:
            raise CommandError(refusal_of(exc).for_message(ctx.text)) from None
        result = await self.execute(ctx, validated)
        created = isinstance(result.data, dict) and "full_id" in result.data
        return result_text(result) + (_default_time_note(ctx) if created and default_time else "")


def _default_time_note(ctx: MessageContext) -> str:
    if is_chinese(ctx.text):
        return f"\n（没有说具体时间，所以定在 {DEFAULT_TIME:%H:%M}。）"
    return f"\n(No time was given, so it is at {DEFAULT_TIME:%H:%M}.)"


def invalid_sentence(exc: InvalidArgumentsError, typed: str) -> str:
    """Why a command's arguments were refused, in words a user can act on: the argument
    models' own sentences, and a schema's only about an argument the user named
    ("/settings remind_others nobody"); never a path or a limit of the schema alone."""
    problems = "; ".join(
        dict.fromkeys(
            f"{i.path}: {i.problem}" if i.path and i.path in typed else i.problem
            for i in exc.issues
            if i.own_words or (i.path and i.path in typed)
        )
    )
    if not problems:
        return UNUSABLE_WORDS.for_message(typed)
    return didnt_work(problems, typed)


def didnt_work(problem: str, typed: str) -> str:
    """'That didn't work: Pick a number from 1 to 3.', in the language of `typed`."""
    return DIDNT_WORK.for_message(typed).format(problem=as_sentence(problem))


def result_text(result: FunctionResult) -> str:
    """What a tool's result says in chat: its reply, else its data."""
    if result.reply is not None:
        return result.reply
    return str(result.data)
