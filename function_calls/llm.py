"""FunctionCallLLM: the multi-round tool-calling loop over any OpenAI-compatible endpoint.

The loop is here; the request and its error mapping are in `_transport`, the shaping of
messages in native and prompt mode in `_shaping`, the turn's state and the running of
each round's calls in `turn`, and each tool call goes through the `ToolInvoker`.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any, Literal, Self, get_args

import openai
from openai import AsyncOpenAI

from function_calls import _shaping as shaping
from function_calls import _transport as transport
from function_calls._shaping import ChatTurn, Message, ModelReply
from function_calls._transport import RequestObserver
from function_calls._transport import RequestOutcome as RequestOutcome  # re-exported
from function_calls.context import MessageContext
from function_calls.context_window import (
    ContextOverflowError,
    fit,
    refused_window,
    text_tokens,
    tools_tokens,
)
from function_calls.errors import LLMUnavailableError
from function_calls.internal_text import (
    COULD_NOT_DO,
    MESSAGE_TOO_LONG,
    MISCONFIGURED,
    NO_ANSWER,
    UNFINISHED,
    internal_marker,
)
from function_calls.invoker import ToolInvoker
from function_calls.prompt_formats import (
    PROMPT_FORMATS,
    PromptFormat,
    WorkedExample,
    frame_text,
    render_tool_instructions,
    tool_text,
)
from function_calls.registry import Tool, ToolRegistry
from function_calls.schema import SchemaView
from function_calls.selection import (
    DEFAULT_MAX_TOOLS,
    FIND_TOOLS,
    ToolOffer,
    ToolSelector,
    finder_tool,
)
from function_calls.server_info import ContextWindow
from function_calls.system_prompt import DEFAULT_PERSONA, build_context, build_system_prompt
from function_calls.turn import CallMode, Turn, TurnObserver, TurnResult, run_calls
from function_calls.usage import Usage

log = logging.getLogger("groupmate.llm")

ToolMode = Literal[CallMode, "auto"]
# Which argument schemas the model is shown: "auto" is compact in prompt mode (small
# local models) and full with native tool calling.
ToolSchema = Literal["auto", SchemaView]
_NUDGE = "Answer my last message directly in plain text."
_CURRENT_TURN: contextvars.ContextVar[Turn | None] = contextvars.ContextVar(
    "groupmate_turn", default=None
)
_PARSE_IN_THREAD_CHARS = 8_000
# Tool lists kept built (one per set of tools visible to a chat, and schema view).
_TOOL_LISTS = 64
# Of the window left after the system prompt and the message, at most this much is kept
# for the earlier chat before tools are chosen (at least _MIN_HISTORY tokens): what a
# follow-up needs ("and snooze it"), without starving the tools.
_HISTORY_SHARE = 0.25
_MIN_HISTORY = 256
# At most this share of the window (less the answer's room) goes to the tools offered
# and, in prompt mode, their call format (in a 4,096-token window, about 1,000 tokens:
# five to eight tools of the usual size).
_TOOL_SHARE = 0.33
# What the estimate may fill of the window: it counted 10 % below a real tokenizer at
# worst (measured against Qwen2.5's: see the README's model section).
_ESTIMATE_SHARE = 0.88
# After a server refused a request as too long without saying its window, the window is
# taken as this share of what was assumed (the estimate was low for this server).
_SHRINK = 0.8


@dataclass(frozen=True, slots=True)
class _BuiltTools:
    tools: tuple[Tool, ...]  # kept so that the ids in its key stay theirs
    listed: transport.ToolList


@dataclass(frozen=True, slots=True)
class PromptBudget:
    """How a model's window is spent, for `groupmate check` and the log: what the bot's
    own instructions take, what every tool would take, and what is left for the tools a
    message is offered."""

    window: ContextWindow
    answer: int  # kept for the answer (llm.max_output_tokens)
    minimal: int  # the system prompt without tools, and the context line
    all_tools: int  # what showing every tool would add
    tools: int  # how many tools the model could be shown
    tool_budget: int  # left for a short message's tools, before any history

    @property
    def fits(self) -> bool:
        """Whether a short message fits at all."""
        return self.minimal + 8 <= self.window.tokens - self.answer

    def describe(self) -> str:
        return (
            f"prompt: {self.minimal} tokens without tools, {self.minimal + self.all_tools} "
            f"with all {self.tools} tools; {self.answer} kept for the answer; each message "
            f"is offered the tools it needs within {max(self.tool_budget, 0)} tokens"
        )


@dataclass(frozen=True, slots=True)
class FirstRequest:
    """What a turn sends first: its messages, its `tools` (native mode), and why those
    tools were offered."""

    messages: list[Message]
    tools: list[dict[str, Any]] | None
    offer: ToolOffer | None
    mode: CallMode


def _worked(tool: Tool) -> list[WorkedExample]:
    """The tool's examples that prompt mode shows as calls."""
    return [
        WorkedExample(example.said, tool.name, example.arguments)
        for example in tool.examples
        if example.arguments is not None
    ]


class FunctionCallLLM:
    """Lets an LLM answer a chat message by calling registered tools.

    `tool_mode` "native" uses the API's `tools`; "prompt" describes tools in the
    system prompt and parses calls from text; "auto" starts native and falls back to
    prompt mode (remembered per model) when the endpoint rejects tools.
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        registry: ToolRegistry | None = None,
        invoker: ToolInvoker | None = None,
        tool_mode: ToolMode = "auto",
        prompt_format: PromptFormat = "hermes",
        tool_schema: ToolSchema = "auto",
        persona: str = DEFAULT_PERSONA,
        max_rounds: int = 5,
        max_invalid_retries: int = 1,
        call_timeout: float = 30.0,
        request_timeout: float = 60.0,
        transport_retries: int = 3,
        strict_schemas: bool = True,
        temperature: float | None = 0.0,
        max_output_tokens: int | None = 512,
        context_tokens: int = 8192,
        context_source: str = "given",
        max_tools: int = DEFAULT_MAX_TOOLS,
        http_backend: transport.HttpBackend = "aiohttp",
        client: AsyncOpenAI | None = None,
    ) -> None:
        if max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        if max_invalid_retries < 0:
            raise ValueError("max_invalid_retries must not be negative")
        if tool_mode not in get_args(ToolMode):
            raise ValueError(f"tool_mode must be native, prompt or auto, not {tool_mode!r}")
        if prompt_format not in PROMPT_FORMATS:
            raise ValueError(
                f"prompt_format must be one of {', '.join(PROMPT_FORMATS)}, not {prompt_format!r}"
            )
        if tool_schema not in get_args(ToolSchema):
            raise ValueError(f"tool_schema must be auto, full or compact, not {tool_schema!r}")
        self.model = model
        self.tool_schema: ToolSchema = tool_schema
        if invoker is None:
            registry = registry if registry is not None else ToolRegistry()
            invoker = ToolInvoker(registry, call_timeout=call_timeout)
        elif registry is not None and registry is not invoker.registry:
            raise ValueError("give a registry or an invoker, not both")
        self.invoker = invoker
        self.registry = invoker.registry
        self.tool_mode: ToolMode = tool_mode
        self.prompt_format: PromptFormat = prompt_format
        self.persona = persona
        self.max_rounds = max_rounds
        self.max_invalid_retries = max_invalid_retries
        self.strict_schemas = strict_schemas
        # For every request, complete_text's (summaries) too: 0 by default, as the eval
        # ran them; None leaves the server's own default.
        self.temperature = temperature
        # A cap per request: a small model can otherwise ramble until the context is full.
        self.max_output_tokens = max_output_tokens
        # The window requests are fitted to, and where the figure came from; a server's
        # refusal of a request as too long corrects it (see `_learn_window`).
        self.window = ContextWindow(context_tokens, context_source)
        # Set when even a minimal request does not fit: what the operator must change
        # (the log, /healthz and `groupmate check` say it; the user gets one sentence).
        self.window_problem: str | None = None
        self.selector = ToolSelector(max_tools=max_tools)
        self._costs: dict[tuple[int, CallMode, SchemaView], int] = {}
        self._fell_back_to_prompt = False
        self._observers: list[TurnObserver] = []
        self._tool_lists: dict[tuple[tuple[int, ...], SchemaView], _BuiltTools] = {}
        self._transport = transport.ChatTransport(
            base_url=base_url,
            api_key=api_key,
            transport_retries=transport_retries,
            request_timeout=request_timeout,
            http_backend=http_backend,
            client=client,
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    @property
    def context_tokens(self) -> int:
        """The context window requests are fitted to, in tokens."""
        return self.window.tokens

    @property
    def client(self) -> AsyncOpenAI:
        """The SDK client requests go through."""
        return self._transport.client

    async def aclose(self) -> None:
        await self._transport.aclose()

    def effective_mode(self) -> CallMode:
        """The mode the next request uses for this model."""
        if self.tool_mode == "prompt" or self._fell_back_to_prompt:
            return "prompt"
        return "native"

    def observe(self, observer: TurnObserver) -> None:
        """Call `observer(ctx, result)` after every turn (usage records, the eval)."""
        self._observers.append(observer)

    def observe_requests(self, observer: RequestObserver) -> None:
        """Call `observer(outcome, seconds, usage)` after every request (the metrics)."""
        self._transport.observers.append(observer)

    async def run(
        self, ctx: MessageContext, text: str, history: Sequence[ChatTurn] = ()
    ) -> TurnResult:
        """Answer one chat message; never raises for model, network or handler failures."""
        result = await self._run(ctx, text, history)
        self.selector.remember(ctx.chat_id, [c.name for c in result.calls if c.outcome == "ok"])
        for observer in self._observers:
            try:
                observer(ctx, result)
            except Exception:
                log.exception("a turn observer failed")
        return result

    async def _run(self, ctx: MessageContext, text: str, history: Sequence[ChatTurn]) -> TurnResult:
        turn = self._new_turn(ctx)
        # Handlers run in tasks that copy this context: their own requests find the turn.
        token = _CURRENT_TURN.set(turn)
        try:
            return await self._converse(turn, text, history)
        finally:
            _CURRENT_TURN.reset(token)

    def _new_turn(self, ctx: MessageContext) -> Turn:
        if not ctx.deps.has(ToolRegistry):  # for help and /tools
            ctx = replace(ctx, deps=ctx.deps.with_(ToolRegistry, self.registry))
        available = {tool.name: tool for tool in self.invoker.offered(ctx)}
        mode = self.effective_mode()
        return Turn(ctx, {}, mode, self._view(mode), [], available=available)

    def _begin(self, turn: Turn, text: str, history: Sequence[ChatTurn]) -> None:
        """The turn's first messages: the system prompt, and the chat with `text` last;
        and the tools this message is offered."""
        turn.context_line = build_context(turn.ctx)
        # The volatile context goes last in the system prompt, after everything stable,
        # where the prefix cache still keeps all before it. Not in native mode: chat
        # templates put the tools after the system text, and it would come before them.
        turn.latest = text if turn.mode == "prompt" else f"{text}\n\n{turn.context_line}"
        turn.asked = text
        # The earlier chat goes in as a transcript, not as past user and assistant turns:
        # a model shown its own earlier "⏰ Reminder #2 set" answers (to slash commands)
        # imitated them, and claimed in text what it should have done with a tool. The
        # latest message is as it was written: a 1.5B model answered "Alice: hi" with a
        # tool call, and "hi" with "Hello!", and anything after "hi" (even the context
        # line) made it call the summary tool.
        turn.history = [shaping.transcript_line(item) for item in history]
        self._offer(turn, text)
        turn.messages.append({"role": "system", "content": self._system_message(turn)})
        turn.messages.append({"role": "user", "content": turn.render(turn.history)})

    def _limit(self) -> int:
        """Tokens a request may take, as `estimate_tokens` counts them: the window less a
        margin for the estimate (it counted Qwen2.5's tokens from 10 % low, for dense
        JSON, to 25 % high, for Chinese), less room for the answer."""
        return int(self.window.tokens * _ESTIMATE_SHARE) - (self.max_output_tokens or 0)

    def _offer(self, turn: Turn, text: str) -> None:
        """Choose the tools `text` is offered: the budget is what the window leaves after
        the system prompt, the message and room for the earlier chat."""
        # The call format's explanation comes with the tools in prompt mode.
        frame = text_tokens(frame_text(self.prompt_format)) if turn.mode == "prompt" else 0
        base = (
            text_tokens(build_system_prompt(persona=self.persona))
            + text_tokens(turn.context_line)
            + text_tokens(text)
            + frame
        )
        history = sum(text_tokens(line) for line in turn.history)
        free = self._limit() - base
        # The tools get a share of the window, so that a small one keeps room for the
        # earlier chat and the tool rounds; and never what the history needs.
        budget = min(
            int(self._limit() * _TOOL_SHARE) - frame,
            free - min(history, max(int(free * _HISTORY_SHARE), _MIN_HISTORY)),
        )
        candidates = [tool for tool in turn.available.values() if tool.for_model]
        finder = finder_tool()
        finder_cost = self._cost(finder, turn.mode, turn.view)
        offer = self.selector.select(
            candidates,
            text,
            budget=budget - finder_cost,
            cost=lambda tool: self._cost(tool, turn.mode, turn.view),
            history=turn.history,
            chat_id=turn.ctx.chat_id,
            universe=self._universe(),
        )
        turn.offer = offer
        turn.tools = {tool.name: tool for tool in offer.tools}
        # The way out when the guess was wrong: only beside a guess (small talk is
        # offered nothing), and only where some tools were left out.
        if offer.choices and offer.partial and FIND_TOOLS not in turn.available:
            turn.tools[FIND_TOOLS] = finder

    def budget(self, tools: Sequence[Tool], ctx: MessageContext) -> PromptBudget:
        """How this model's window is spent on `tools` for a short message in `ctx`."""
        mode = self.effective_mode()
        view = self._view(mode)
        minimal = text_tokens(build_system_prompt(persona=self.persona)) + text_tokens(
            build_context(ctx)
        )
        shown = [tool for tool in tools if tool.for_model]
        every = sum(self._cost(tool, mode, view) for tool in shown)
        left = self._limit() - minimal - text_tokens("hi")
        return PromptBudget(
            self.window, self.max_output_tokens or 0, minimal, every, len(shown), left
        )

    def _universe(self) -> list[Tool]:
        """Every tool the model could be shown, whoever asks: the index is built over it
        once (per change of the bot's tools), not once per kind of sender."""
        return [tool for tool in self.registry if tool.for_model]

    def _cost(self, tool: Tool, mode: CallMode, view: SchemaView) -> int:
        """What showing `tool` adds to a request, in estimated tokens (kept per tool)."""
        key = (id(tool), mode, view)
        found = self._costs.get(key)
        if found is None:
            definition = tool.definition(strict=self.strict_schemas, view=view)
            if mode == "native":
                found = tools_tokens([definition])
            else:
                found = text_tokens(tool_text(definition, self.prompt_format, _worked(tool)))
            if len(self._costs) > 4 * _TOOL_LISTS * 16:
                self._costs.clear()
            self._costs[key] = found
        return found

    def _system_message(self, turn: Turn) -> str:
        system = self._system_prompt(turn)
        return f"{system}\n\n{turn.context_line}" if turn.mode == "prompt" else system

    def _find(self, turn: Turn) -> Callable[[str], list[Tool]]:
        """The tool finder's search over what the sender may use here."""

        def find(need: str) -> list[Tool]:
            candidates = [tool for tool in turn.available.values() if tool.for_model]
            ranked = self.selector.rank(candidates, need, universe=self._universe())
            return [choice.tool for choice in ranked[: self.selector.max_tools]]

        return find

    def first_request(
        self, ctx: MessageContext, text: str, history: Sequence[ChatTurn] = ()
    ) -> FirstRequest:
        """What a turn for `text` in `ctx` would send first (nothing is sent): for the
        selection's measurements and the operator's questions."""
        turn = self._new_turn(ctx)
        self._begin(turn, text, history)
        tools = self._fitted(turn)
        return FirstRequest(
            turn.messages, tools.definitions if tools else None, turn.offer, turn.mode
        )

    async def warm_up(self, ctx: MessageContext, text: str = "hi") -> Usage:
        """Send what a turn for `text` in `ctx` sends first (the same system prompt, byte
        for byte) with max_tokens 1 and no retries: the server's prefix cache then holds
        the prompt's stable start (the persona and rules every message begins with), and
        the first real message is not kept waiting while the server reads it. In `auto`
        mode an endpoint that rejects tools switches to prompt mode here, as the first
        message would. Returns the request's usage, which is no chat's; raises
        LLMUnavailableError when the endpoint fails."""
        turn = self._new_turn(ctx)
        turn.warm_up = True
        self._begin(turn, text, ())
        if self.tool_mode == "auto" and turn.mode == "native" and not turn.tools:
            # "hi" is offered no tools; one tool (the smallest) still finds out at start
            # whether the endpoint takes native tools at all.
            turn.tools[FIND_TOOLS] = finder_tool()
        await self._ask(turn)
        return turn.usage

    async def _converse(self, turn: Turn, text: str, history: Sequence[ChatTurn]) -> TurnResult:
        self._begin(turn, text, history)
        nudged = False
        for round_number in range(1, self.max_rounds + 1):
            try:
                reply = await self._ask(turn)
            except LLMUnavailableError as exc:
                return turn.finish(error=exc.user_message, ending="unavailable")
            if not reply.calls and not reply.malformed:
                if reply.text or nudged or round_number == self.max_rounds:
                    return self._answer(turn, reply.text)
                nudged = True
                if turn.mode == "native" and turn.tools:
                    # Asked again for text alone: llama-cpp-python's chatml-function-calling
                    # grammar lets a message say nothing once tools are offered, and an
                    # empty assistant turn in the history breaks its prompt.
                    turn.text_only = True
                    continue
                turn.messages.append(reply.assistant_message)
                turn.messages.append({"role": "user", "content": _NUDGE})
                continue
            turn.messages.append(reply.assistant_message)
            shown = len(turn.tools)
            done, stop_message = await run_calls(
                turn,
                reply,
                self.invoker,
                max_invalid_retries=self.max_invalid_retries,
                prompt_format=self.prompt_format,
                find=self._find(turn),
            )
            if len(turn.tools) != shown and turn.mode == "prompt":
                # Tools the model asked for are described in the system prompt.
                turn.messages[0] = {"role": "system", "content": self._system_message(turn)}
            if stop_message is not None:
                return turn.finish(error=stop_message, ending="repairs_ran_out")
            if done:
                return turn.finish()
        # What ran is in the records (and the tools' own replies are in the answer): the
        # user is not told tool names.
        return turn.finish(error=turn.say(UNFINISHED), ending="out_of_rounds")

    def _answer(self, turn: Turn, text: str) -> TurnResult:
        """The turn ends with the model's text: the one place it becomes the user's answer,
        so the one place internal text is kept from the user."""
        # After the tools' own replies, nothing more is needed: "couldn't do that" under
        # "⏰ Reminder #3 set" would contradict what was done.
        if not text:
            return turn.finish(None if turn.replies else turn.say(NO_ANSWER), ending="no_answer")
        marker = internal_marker(text, self.registry.names(), shaping.tool_parameters(turn.tools))
        if marker is None:
            return turn.finish(text)
        # The text itself stays out of the log: it may quote the chat.
        log.warning(
            "chat %s: the model's answer looked internal (%s, %d chars); withheld",
            turn.ctx.chat_id,
            marker,
            len(text),
        )
        return turn.finish(None if turn.replies else turn.say(COULD_NOT_DO), ending="withheld")

    def _view(self, mode: CallMode) -> SchemaView:
        if self.tool_schema == "auto":
            return "compact" if mode == "prompt" else "full"
        return self.tool_schema

    def _system_prompt(self, turn: Turn) -> str:
        instructions = ""
        if turn.mode == "prompt" and turn.tools:
            tools = turn.tools.values()
            definitions = [tool.definition(strict=False, view=turn.view) for tool in tools]
            worked = [example for tool in tools for example in _worked(tool)]
            instructions = render_tool_instructions(definitions, self.prompt_format, worked)
        return build_system_prompt(persona=self.persona, tool_instructions=instructions)

    async def complete_text(self, system: str, user: str) -> str:
        """One plain completion without tools (summaries, digests).

        Raises LLMUnavailableError with a user-facing message when the endpoint fails.
        """
        messages: list[Message] = [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ]
        try:
            completion = await self._complete(messages, None)
            turn = _CURRENT_TURN.get()
            if turn is not None:  # a tool's request (a summary) counts for the turn
                turn.usage += completion.usage
            return transport.message_text(completion.message).strip()
        except openai.APIStatusError as exc:
            raise transport.unavailable(exc) from exc
        except LLMUnavailableError:
            raise
        except Exception as exc:
            raise transport.unreadable(exc) from exc

    def _fitted(self, turn: Turn) -> transport.ToolList | None:
        """Fit the turn's request into the window: the oldest chat goes first, then long
        tool results are cut, then the least relevant tools not yet used. Raises
        LLMUnavailableError with the plain sentence when even that does not fit."""
        while True:
            tools = None
            if turn.mode == "native" and turn.tools:
                tools = self._definitions(tuple(turn.tools.values()), turn.view)
            try:
                # Room for the answer is kept; what is dropped stays dropped for the turn.
                fit(
                    turn.messages,
                    tools.definitions if tools is not None else None,
                    history=turn.history,
                    render=turn.render,
                    limit=self._limit(),
                    tools_size=tools.tokens if tools is not None else None,
                )
                return tools
            except ContextOverflowError as exc:
                used = {record.name for record in turn.records}
                spare = [name for name in reversed(turn.tools) if name not in used]
                if not spare:
                    raise LLMUnavailableError(self._overflow(turn, exc)) from None
                del turn.tools[spare[0]]
                if turn.mode == "prompt":
                    turn.messages[0] = {"role": "system", "content": self._system_message(turn)}

    def _overflow(self, turn: Turn, exc: ContextOverflowError) -> str:
        """The sentence for a request that does not fit even bare: the user's message is
        too long only when the bot's own minimum fits and the message does not."""
        minimum = text_tokens(build_system_prompt(persona=self.persona)) + text_tokens(
            turn.context_line
        )
        limit = self._limit()
        if minimum + text_tokens("hi") > limit:
            problem = (
                f"the model's context window is {self.window.tokens} tokens "
                f"({self.window.source}); less {self.max_output_tokens or 0} kept for the "
                f"answer (llm.max_output_tokens), {limit} are left, and the system prompt "
                f"alone takes about {minimum}. Start the server with a larger window (and "
                "set llm.context_tokens to it), lower llm.max_output_tokens, or shorten "
                "llm.persona"
            )
            if problem != self.window_problem:
                log.error("LLM misconfigured: %s", problem)
            self.window_problem = problem
            return turn.say(MISCONFIGURED)
        if minimum + text_tokens(turn.asked) > limit:
            return turn.say(MESSAGE_TOO_LONG)
        log.warning(
            "chat %s: the turn's tool rounds outgrew the context window (%s)",
            turn.ctx.chat_id,
            exc,
        )
        return turn.say(UNFINISHED)

    def _learn_window(self, said: int) -> None:
        """A server refused a request as too long: take the window it named (or, when it
        named none or one no smaller than assumed, less than assumed), for the rest of
        this process."""
        assumed = self.window.tokens
        if 0 < said < assumed:
            learned = ContextWindow(said, "said by the server when it refused a request")
        else:
            shrunk = max(int(assumed * _SHRINK), 1024)
            learned = ContextWindow(shrunk, "lowered after the server refused a request")
        log.warning(
            "LLM context window: the server refused a request as too long; %d tokens from "
            "now on (was %d, %s). Set llm.context_tokens to what the server was started "
            "with to skip this",
            learned.tokens,
            assumed,
            self.window.source,
        )
        self.window = learned

    async def _ask(self, turn: Turn) -> ModelReply:
        turn.llm_calls += 1
        tools = self._fitted(turn)
        try:
            choice: Literal["auto", "none"] = "none" if turn.text_only else "auto"
            completion = await self._complete(turn.messages, tools, choice, warm_up=turn.warm_up)
        except openai.APIStatusError as exc:
            said = refused_window(str(exc.message), exc.body)
            if said is not None and not turn.refitted and self.window.tokens > 1024:
                # Learned, refitted and sent again: the user never sees the first refusal.
                turn.refitted = True
                self._learn_window(said)
                return await self._ask(turn)
            # Switching is only safe before native tool messages are in the conversation.
            started = any(m["role"] == "tool" for m in turn.messages)
            native = tools is not None and self.tool_mode == "auto"
            if started or not (native and transport.rejects_tools(exc)):
                raise transport.unavailable(exc) from exc
            log.info("model %s rejected native tools; switching to prompt mode", self.model)
            self._fell_back_to_prompt = True
            turn.mode = "prompt"
            turn.view = self._view("prompt")
            if turn.warm_up:
                turn.tools.clear()  # its one tool only asked the question just answered
            # The context line is already in the latest message (native mode put it there).
            turn.messages[0] = {"role": "system", "content": self._system_prompt(turn)}
            return await self._ask(turn)
        turn.usage += completion.usage
        message = completion.message
        try:
            native_calls = [] if turn.mode == "prompt" else shaping.native_calls(message)
            content = transport.message_text(message)
            if native_calls:
                return shaping.reply_from_native(content, native_calls)
        except Exception as exc:  # the SDK does not validate response shapes
            raise transport.unreadable(exc) from exc
        # Also in native mode: some servers leave hermes-style calls in the text. A call
        # may name any tool the sender may use, shown or not.
        known = {**turn.available, **turn.tools}
        if len(content) > _PARSE_IN_THREAD_CHARS:
            # Pathological text costs the tolerant parser real CPU; keep the loop free.
            return await asyncio.to_thread(shaping.reply_from_text, content, known)
        return shaping.reply_from_text(content, known)

    def _definitions(self, tools: tuple[Tool, ...], view: SchemaView) -> transport.ToolList:
        """The `tools=[...]` of a request, built once per tool set (every request of every
        chat sends one; the list is never changed once sent)."""
        key = (tuple(id(tool) for tool in tools), view)
        cached = self._tool_lists.get(key)
        if cached is not None and all(a is b for a, b in zip(cached.tools, tools, strict=True)):
            return cached.listed
        definitions = [tool.definition(strict=self.strict_schemas, view=view) for tool in tools]
        if len(self._tool_lists) >= _TOOL_LISTS:
            self._tool_lists.clear()
        built = _BuiltTools(tools, transport.ToolList.of(definitions))
        self._tool_lists[key] = built
        return built.listed

    async def _complete(
        self,
        messages: list[Message],
        tools: transport.ToolList | None,
        tool_choice: Literal["auto", "none"] = "auto",
        *,
        warm_up: bool = False,
    ) -> transport.Completion:
        """One Chat Completions request; the SDK retries 429/5xx/timeouts honouring Retry-After."""
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools is not None:
            # The API's default once tools are given, but llama-cpp-python's
            # chatml-function-calling format leaves the tools out of the prompt unless
            # it is sent.
            body["tool_choice"] = tool_choice
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_output_tokens is not None:
            body["max_tokens"] = self.max_output_tokens
        if warm_up:
            # The prompt is what is wanted read, not an answer; and a failed warm-up is
            # not worth retrying: the first message would have to wait for the retries.
            body["max_tokens"] = 1
            return await self._transport.complete(body, tools, retries=0)
        return await self._transport.complete(body, tools)
