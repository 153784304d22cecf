"""One turn of the tool-calling loop: its state, its rounds of tool calls, how it ended."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from groupmate.function_calls import _shaping as shaping
from groupmate.function_calls._shaping import Message, ModelReply
from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.errors import InvocationOutcome, UnknownToolError
from groupmate.function_calls.internal_text import COULD_NOT_DO, PlainSentence, refusal_of
from groupmate.function_calls.invoker import ToolCall, ToolInvocation, ToolInvoker
from groupmate.function_calls.prompt_formats import PromptFormat
from groupmate.function_calls.registry import Tool
from groupmate.function_calls.result import to_compact_json
from groupmate.function_calls.schema import SchemaView
from groupmate.function_calls.selection import FIND_TOOLS, FindToolsArgs, ToolOffer, finder_tool
from groupmate.function_calls.tolerant_json import MalformedCall
from groupmate.function_calls.toolsets import ToolListing
from groupmate.function_calls.usage import Usage
from groupmate.function_calls.validation import InvalidArgumentsError
from groupmate.function_calls.vocabulary import CallMode as CallMode  # re-exported
from groupmate.function_calls.vocabulary import Effect

# How a turn ended. "answered": the model's answer and/or the tools' own replies.
# "no_answer": the model said nothing, even when nudged. "withheld": its answer was
# internal text (a call it could not write, a repair report) and the plain sentence took
# its place. "repairs_ran_out": its calls were refused (invalid, unknown, hidden,
# unreadable) once more than the retries allow; nothing of that round ran and `error`
# is the plain sentence. "out_of_rounds": max_rounds was reached. "unavailable": the
# endpoint failed, or the message does not fit the context window.
TurnEnding = Literal[
    "answered", "no_answer", "withheld", "repairs_ran_out", "out_of_rounds", "unavailable"
]
_MAX_MALFORMED = 3
_LATER = {FIND_TOOLS: "the way to the tools not shown"}


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """What happened to one tool call the model made."""

    name: str
    arguments: Any
    outcome: InvocationOutcome
    detail: str = ""
    data: Any = None  # what the tool reported (FunctionResult.data), when it ran
    direct: bool = False  # the tool's own reply went to the user
    duplicate: bool = False  # a repeat of an earlier call, answered with its result
    # What the tool does ("read", "write", "external"); None for a call of no tool
    # (unknown, unreadable). A write that failed is what the turn must not claim.
    effect: Effect | None = None


@dataclass(slots=True)
class TurnResult:
    """The outcome of one user message: the texts to send, and what ran."""

    replies: list[str]
    calls: list[ToolCallRecord]
    llm_calls: int
    tool_mode: CallMode
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    ending: TurnEnding = "answered"
    # The tools the message was offered, best first, and why each ({tool, score, why}).
    offered: list[dict[str, object]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return "\n\n".join(self.replies)


TurnObserver = Callable[[MessageContext, TurnResult], None]
# The tool finder's search: the tools for a few words of need, best first.
FindTools = Callable[[str], Sequence[Tool]]


@dataclass(slots=True)
class Turn:
    """What one turn has so far: its messages, the replies, and a record of each call."""

    ctx: MessageContext
    # What the model is shown (the message's selection, and what it asked for since);
    # `available` is everything the sender may use here, which a call may still name.
    tools: dict[str, Tool]
    mode: CallMode
    view: SchemaView
    messages: list[Message]
    replies: list[str] = field(default_factory=list)
    records: list[ToolCallRecord] = field(default_factory=list)
    invalid_counts: Counter[str] = field(default_factory=Counter)
    # (tool, canonical arguments) -> what became of it: a call repeated in a later
    # round shares that instead of running twice.
    ran: dict[tuple[str, str], ToolInvocation] = field(default_factory=dict)
    llm_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    # The earlier chat as transcript lines, and the latest message: the user message
    # after the system prompt is render(history); trimming drops the oldest lines.
    history: list[str] = field(default_factory=list)
    latest: str = ""
    asked: str = ""  # the message as the user wrote it: its language is the answer's
    text_only: bool = False  # the next request asks for an answer without tool calls
    warm_up: bool = False  # one request for the prefix cache: max_tokens 1, no retries
    available: dict[str, Tool] = field(default_factory=dict)
    # What the sender could use when this round's request was built, and why not the
    # rest: the round's calls are checked against it (one walk of the tool sets a round,
    # as pydantic-ai lists a run step's tools once); None: taken again when needed.
    listing: ToolListing | None = None
    offer: ToolOffer | None = None  # why the message's tools were chosen
    context_line: str = ""  # the volatile facts (clock, zone, chat, sender)
    refitted: bool = False  # a refusal as too long was learned from and sent again

    def render(self, history: Sequence[str]) -> str:
        return shaping.render_user_message(history, self.latest)

    def say(self, sentence: PlainSentence) -> str:
        return sentence.for_message(self.asked)

    def finish(
        self,
        final: str | None = None,
        *,
        error: str | None = None,
        ending: TurnEnding = "answered",
    ) -> TurnResult:
        replies = list(self.replies)
        if final:
            replies.append(final)
        if error:
            replies.append(error)
        offered = self.offer.describe() if self.offer is not None else []
        shown = {entry["tool"] for entry in offered}
        # The finder, and tools shown later in the turn (found, or called unshown).
        offered += [
            {"tool": n, "score": 0, "why": _LATER.get(n, "asked for by the model")}
            for n in self.tools
            if n not in shown
        ]
        return TurnResult(
            replies,
            list(self.records),
            self.llm_calls,
            self.mode,
            error,
            self.usage,
            ending,
            offered,
        )


async def run_calls(
    turn: Turn,
    reply: ModelReply,
    invoker: ToolInvoker,
    *,
    max_invalid_retries: int,
    prompt_format: PromptFormat,
    find: FindTools | None = None,
) -> tuple[bool, str | None]:
    """Validate and run one reply's calls through the invoker; returns (turn
    complete, stop message). Calls of the tool finder are answered here, by `find`."""
    found: dict[int, str] = {}  # position of a finder call -> what it is told
    calls: list[ToolCall] = []
    failed_names: dict[str, str] = {}  # tool name -> the user message if it gives up
    for position, call in enumerate(reply.calls):
        if find is not None and call.name == FIND_TOOLS:
            content, record = _find(turn, call.raw_arguments, find)
            found[position] = content
            turn.records.append(record)
            if record.outcome != "ok":
                failed_names.setdefault(FIND_TOOLS, turn.say(COULD_NOT_DO))
        else:
            calls.append(ToolCall(call.name, call.raw_arguments))
    listing = turn.listing or invoker.listing(turn.ctx)
    planned = invoker.plan(turn.ctx, calls, turn.view, listing=listing)
    turn.listing = None  # the next round's calls are checked against the sets as they are
    # A refused call's tool as the sender's sets hold it (offered or hidden): its effect.
    held = {**{n: h.tool for n, h in listing.hidden.items()}, **listing.offered}
    for item in planned:
        if item.error is not None:
            failed_names.setdefault(item.call.name, turn.say(refusal_of(item.error)))
        elif item.validated is not None and item.call.name not in turn.tools:
            # A tool the sender may use that this message was not shown: the model named
            # it (from the chat, or the finder); it is shown from now on.
            turn.tools[item.call.name] = item.validated.tool
    malformed = reply.malformed[:_MAX_MALFORMED]
    if malformed:
        failed_names[shaping.UNPARSABLE] = turn.say(COULD_NOT_DO)
    stop_message: str | None = None
    for name, user_message in failed_names.items():
        # Counted once per tool and round: two bad calls in one reply are one attempt.
        turn.invalid_counts[name] += 1
        if turn.invalid_counts[name] > max_invalid_retries:
            stop_message = stop_message or user_message
    if stop_message is not None:
        # Nothing of a round with a hopeless call runs: no half-done requests.
        turn.records.extend(_record(item, held) for item in planned if item.error is not None)
        turn.records.extend(_malformed_record(problem) for problem in malformed)
        return True, stop_message
    # A call repeated from an earlier round gets the old result again: the model
    # needs to see it (and move on) rather than the turn ending on it.
    repeated = any(i.validated is not None and i.validated.key in turn.ran for i in planned)
    done = await invoker.run_planned(turn.ctx, planned, earlier=turn.ran)
    needs_model = bool(failed_names) or repeated or bool(found)
    contents: list[str] = []
    for item in done:
        while len(contents) in found:
            contents.append(found[len(contents)])
        turn.records.append(_record(item, held))
        if item.validated is None:  # refused before it ran: the model is told why
            contents.append(to_compact_json(_rejection(item, turn.tools)))
            continue
        result = item.result
        if not item.duplicate:
            turn.ran[item.validated.key] = item
            if result is not None and result.reply is not None:
                turn.replies.append(result.reply)
        if result is None or result.reply is None:
            needs_model = True
        contents.append(_for_model(item))
    while len(contents) in found:
        contents.append(found[len(contents)])
    turn.records.extend(_malformed_record(problem) for problem in malformed)
    if not needs_model:
        return True, None
    malformed_contents = [to_compact_json(shaping.malformed_payload(p)) for p in malformed]
    turn.messages.extend(
        shaping.result_messages(reply, contents, malformed_contents, prompt_format)
    )
    return False, None


def _find(turn: Turn, arguments: Any, find: FindTools) -> tuple[str, ToolCallRecord]:
    """Answer a call of the tool finder: the tools it found join the turn's."""
    try:
        args = finder_tool().validate(arguments, turn.ctx, turn.view)
    except InvalidArgumentsError as exc:
        payload: dict[str, Any] = {
            "error": f"invalid arguments for {FIND_TOOLS}",
            "issues": [shaping.issue_payload(issue) for issue in exc.issues],
        }
        record = ToolCallRecord(FIND_TOOLS, arguments, "invalid", effect="read")
        return to_compact_json(payload), record
    assert isinstance(args, FindToolsArgs)
    added = [tool for tool in find(args.need) if tool.name not in turn.tools]
    for tool in added:
        turn.tools[tool.name] = tool
    if added:
        payload = {
            "added_tools": [{"name": t.name, "description": t.description} for t in added],
            "next": "Call the one that does what the user asked.",
        }
    else:
        payload = {
            "added_tools": [],
            "next": "No other tool does that: answer the user directly, briefly.",
        }
    data = {"need": args.need, "added": [t.name for t in added]}
    record = ToolCallRecord(FIND_TOOLS, {"need": args.need}, "ok", data=data, effect="read")
    return to_compact_json(payload), record


def _record(item: ToolInvocation, held: Mapping[str, Tool]) -> ToolCallRecord:
    """The turn's record of one call."""
    if item.validated is None:  # refused before it ran; the reasons went to the model
        tool = held.get(item.call.name)
        effect = tool.effect if tool is not None else None
        return ToolCallRecord(item.call.name, item.call.arguments, item.outcome, effect=effect)
    result = item.result
    return ToolCallRecord(
        item.validated.tool.name,
        item.validated.arguments.model_dump(mode="json"),
        item.outcome,
        str(item.error) if item.error is not None else "",
        result.data if result is not None else None,
        direct=result is not None and result.reply is not None,
        duplicate=item.duplicate,
        effect=item.validated.tool.effect,
    )


def _malformed_record(problem: MalformedCall) -> ToolCallRecord:
    return ToolCallRecord(shaping.UNPARSABLE, problem.raw, "malformed")


def _rejection(item: ToolInvocation, offered: Mapping[str, Tool]) -> dict[str, Any]:
    """What the model is told about a call refused before it ran, to fix its next one."""
    error, name = item.error, item.call.name
    if isinstance(error, InvalidArgumentsError):
        return {
            "error": f"invalid arguments for {name}",
            "issues": [shaping.issue_payload(issue) for issue in error.issues],
            "fix": f"Correct these arguments and call {name} again.",
        }
    if isinstance(error, UnknownToolError):
        return {"error": f"unknown tool {name!r}", "available_tools": list(offered)}
    return {"error": str(error), "available_tools": list(offered)}


def _for_model(item: ToolInvocation) -> str:
    """What the model is told about a call that ran: the user's reply and the data, or
    the data alone for it to phrase, or the error. Text (an MCP server's answer, say)
    reaches the model as text, not as a JSON string full of escaped quotes."""
    result = item.result
    payload: Any
    if result is not None and result.reply is not None:
        payload = {"shown_to_user": result.reply}
        if result.data is not None:
            payload["data"] = result.data
    elif result is not None:
        payload = result.data
    else:
        payload = {"error": str(item.error)}
    return payload if isinstance(payload, str) else to_compact_json(payload)
