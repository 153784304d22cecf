"""FunctionCallLLM: the multi-round tool-calling loop over any OpenAI-compatible endpoint.

The loop is here; the request and its error mapping are in `_transport`, the shaping of
messages in native and prompt mode in `_shaping`, the turn's state and the running of
each round's calls in `turn`, and each tool call goes through the `ToolInvoker`.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal, Self, get_args

import openai
from openai import AsyncOpenAI

from groupmate.function_calls import _shaping as shaping
from groupmate.function_calls import _transport as transport
from groupmate.function_calls._answers import failed_writes, found_data, parrots
from groupmate.function_calls._offering import Offering
from groupmate.function_calls._shaping import ChatTurn, Message, ModelReply
from groupmate.function_calls._transport import RequestObserver
from groupmate.function_calls._transport import RequestOutcome as RequestOutcome  # re-exported
from groupmate.function_calls._window import PromptBudget as PromptBudget  # re-exported
from groupmate.function_calls._window import Window
from groupmate.function_calls.claims import owns_up
from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.context_window import (
    ContextOverflowError,
    fit,
    refused_window,
    request_tokens,
    text_tokens,
)
from groupmate.function_calls.errors import LLMUnavailableError
from groupmate.function_calls.internal_text import (
    COULD_NOT_DO,
    NO_ANSWER,
    UNFINISHED,
    internal_marker,
    nothing_done,
)
from groupmate.function_calls.invoker import ToolInvoker
from groupmate.function_calls.prompt_formats import (
    PROMPT_FORMATS,
    PromptFormat,
    frame_text,
)
from groupmate.function_calls.registry import Tool, ToolRegistry
from groupmate.function_calls.schema import SchemaView
from groupmate.function_calls.selection import (
    DEFAULT_MAX_TOOLS,
    FIND_TOOLS,
    ToolOffer,
    ToolSelector,
    finder_tool,
)
from groupmate.function_calls.server_info import ContextWindow
from groupmate.function_calls.system_prompt import DEFAULT_PERSONA, build_context
from groupmate.function_calls.turn import CallMode, Turn, TurnObserver, TurnResult, run_calls
from groupmate.function_calls.usage import Usage
from groupmate.function_calls.vocabulary import ToolMode as ToolMode  # re-exported
from groupmate.function_calls.vocabulary import ToolSchema as ToolSchema  # re-exported

log = logging.getLogger("groupmate.llm")

# Under this window (in tokens), `tool_schema: auto` shows native mode the compact view.
_COMPACT_BELOW = 8192
_NUDGE = "Answer my last message directly in plain text."
_REPEATED = (
    "That repeats an earlier answer from the chat. Answer my last message itself, and "
    "call a tool if one can tell it."
)
_CURRENT_TURN: contextvars.ContextVar[Turn | None] = contextvars.ContextVar(
    "groupmate_turn", default=None
)
_PARSE_IN_THREAD_CHARS = 8_000


@dataclass(frozen=True, slots=True)
class FirstRequest:
    """What a turn sends first: its messages, its `tools` (native mode), and why those
    tools were offered."""

    messages: list[Message]
    tools: list[dict[str, Any]] | None
    offer: ToolOffer | None
    mode: CallMode
    shown: tuple[str, ...]  # the tools the model is shown (the finder too), in either mode


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
        context_counted: float | None = None,
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
        # The window requests are fitted to, where the figure came from, and what a
        # server's refusal of a request as too long taught.
        self._window = Window(
            ContextWindow(context_tokens, context_source, context_counted),
            answer=max_output_tokens or 0,
            persona=persona,
        )
        self._offering = Offering(
            ToolSelector(max_tools=max_tools),
            strict=strict_schemas,
            prompt_format=prompt_format,
            universe=lambda: self.registry.listing(None),
        )
        self._fell_back_to_prompt = False
        self._observers: list[TurnObserver] = []
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
    def window(self) -> ContextWindow:
        """The context window requests are fitted to, and where the figure came from."""
        return self._window.window

    @property
    def context_tokens(self) -> int:
        return self._window.window.tokens

    @property
    def window_problem(self) -> str | None:
        """Why nothing fits the window, where that is so: what the operator must change."""
        return self._window.problem

    @property
    def selector(self) -> ToolSelector:
        return self._offering.selector

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
        listing = self.invoker.listing(ctx)
        mode = self.effective_mode()
        turn = Turn(ctx, {}, mode, self._view(mode), [], available=dict(listing.offered))
        turn.listing = listing
        return turn

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
        turn.messages.append(self._system(turn))
        turn.messages.append({"role": "user", "content": turn.render(turn.history)})

    def _system(self, turn: Turn, *, context: bool = True) -> Message:
        """The turn's system message (in prompt mode the context line comes last)."""
        offering, persona = self._offering, self.persona
        text = (
            offering.system_message(turn, persona)
            if context
            else offering.system_prompt(turn, persona)
        )
        return {"role": "system", "content": text}

    def _offer(self, turn: Turn, text: str) -> None:
        """Choose the tools `text` is offered: the budget is what the window leaves after
        the system prompt, the message and room for the earlier chat."""
        # The call format's explanation comes with the tools in prompt mode.
        frame = text_tokens(frame_text(self.prompt_format)) if turn.mode == "prompt" else 0
        base = self._window.minimum(turn.context_line) + text_tokens(text) + frame
        history = sum(text_tokens(line) for line in turn.history)
        budget = self._window.tool_budget(base=base, frame=frame, history=history)
        self._offering.offer(turn, text, budget=budget)

    def budget(self, tools: Sequence[Tool], ctx: MessageContext) -> PromptBudget:
        """How this model's window is spent on `tools` for a short message in `ctx`."""
        mode = self.effective_mode()
        every = self._offering.all_tools(tools, mode, self._view(mode))
        shown = sum(1 for tool in tools if tool.for_model)
        return self._window.budget(context_line=build_context(ctx), all_tools=every, tools=shown)

    def first_request(
        self, ctx: MessageContext, text: str, history: Sequence[ChatTurn] = ()
    ) -> FirstRequest:
        """What a turn for `text` in `ctx` would send first (nothing is sent): for the
        selection's measurements and the operator's questions."""
        turn = self._new_turn(ctx)
        self._begin(turn, text, history)
        tools = self._fitted(turn)
        return FirstRequest(
            turn.messages,
            tools.definitions if tools else None,
            turn.offer,
            turn.mode,
            tuple(turn.tools),
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
        nudged = repeated = False
        for round_number in range(1, self.max_rounds + 1):
            try:
                reply = await self._ask(turn)
            except LLMUnavailableError as exc:
                return turn.finish(error=exc.user_message, ending="unavailable")
            if not reply.calls and not reply.malformed and parrots(turn, reply.text):
                # A small model shown the chat may copy the bot's last answer instead of
                # answering ("There are no active reminders" to "what time is it in
                # Tokyo?"): told so once; a second copy is no answer, never passed on.
                log.info("chat %s: the model repeated an earlier answer", turn.ctx.chat_id)
                if repeated or round_number == self.max_rounds:
                    return self._no_answer(turn)
                repeated = True
                turn.messages.append(reply.assistant_message)
                turn.messages.append({"role": "user", "content": _REPEATED})
                continue
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
                find=self._offering.finder(turn),
            )
            if len(turn.tools) != shown and turn.mode == "prompt":
                # Tools the model asked for are described in the system prompt.
                turn.messages[0] = {
                    "role": "system",
                    "content": self._offering.system_message(turn, self.persona),
                }
            if stop_message is not None:
                return turn.finish(error=stop_message, ending="repairs_ran_out")
            if done:
                return turn.finish()
        # What ran is in the records (and the tools' own replies are in the answer): the
        # user is not told tool names.
        return turn.finish(error=turn.say(UNFINISHED), ending="out_of_rounds")

    def _no_answer(self, turn: Turn) -> TurnResult:
        """The model gave no answer of its own. What a tool of this turn found, when one
        did (a small model asked the time in Tokyo called the time server, then could not
        phrase its answer): the data as it came, plainly, rather than no answer."""
        if turn.replies:
            return turn.finish(ending="no_answer")
        failed = failed_writes(turn.records)
        if failed is not None:  # the one thing worth saying: nothing was done
            return turn.finish(turn.say(nothing_done(failed.outcome)), ending="no_answer")
        found = found_data(turn)
        if found is not None:
            return turn.finish(found, ending="no_answer")
        return turn.finish(turn.say(NO_ANSWER), ending="no_answer")

    def _answer(self, turn: Turn, text: str) -> TurnResult:
        """The turn ends with the model's text: the one place it becomes the user's answer,
        so the one place internal text is kept from the user."""
        # After the tools' own replies, nothing more is needed: "couldn't do that" under
        # "⏰ Reminder #3 set" would contradict what was done.
        if not text:
            return self._no_answer(turn)
        marker = internal_marker(text, self.registry.names(), shaping.tool_parameters(turn.tools))
        failed = failed_writes(turn.records)
        if failed is not None and (marker is not None or not owns_up(text)):
            # Every write the turn tried failed (a call refused for a time the user never
            # said, say), and the answer may read as done ("Done."): whatever the message's
            # words, a claim without a deed is not passed on. The tool's own words (a
            # refusal it answered the user with) stand, or the plain "nothing was done".
            log.info("chat %s: no write went through; the answer was withheld", turn.ctx.chat_id)
            plain = turn.say(nothing_done(failed.outcome))
            return turn.finish(None if turn.replies else plain, ending="withheld")
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
        """The schema view a turn's tools are shown (and validated) in. `auto`: compact in
        prompt mode, and in native mode under a small window. A small window means a small
        model, which the compact view was made for, and a tight budget, in which the full
        `reminder_set` (about 690 tokens, 370 compact) crowds out the tools beside it."""
        if self.tool_schema == "auto":
            small = self._window.window.tokens < _COMPACT_BELOW
            return "compact" if mode == "prompt" or small else "full"
        return self.tool_schema

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
                tools = self._offering.tool_list(tuple(turn.tools.values()), turn.view)
            try:
                # Room for the answer is kept; what is dropped stays dropped for the turn.
                fit(
                    turn.messages,
                    tools.definitions if tools is not None else None,
                    history=turn.history,
                    render=turn.render,
                    limit=self._window.limit(),
                    tools_size=tools.tokens if tools is not None else None,
                )
                return tools
            except ContextOverflowError as exc:
                used = {record.name for record in turn.records}
                spare = [name for name in reversed(turn.tools) if name not in used]
                if not spare:
                    raise LLMUnavailableError(self._window.overflow(turn, exc)) from None
                del turn.tools[spare[0]]
                if turn.mode == "prompt":
                    turn.messages[0] = {
                        "role": "system",
                        "content": self._offering.system_message(turn, self.persona),
                    }

    async def _ask(self, turn: Turn) -> ModelReply:
        turn.llm_calls += 1
        tools = self._fitted(turn)
        estimated = request_tokens(turn.messages, tools.tokens if tools is not None else 0)
        try:
            choice: Literal["auto", "none"] = "none" if turn.text_only else "auto"
            completion = await self._complete(turn.messages, tools, choice, warm_up=turn.warm_up)
        except openai.APIStatusError as exc:
            said = refused_window(str(exc.message), exc.body)
            if said is not None and not turn.refitted and self._window.learn(said):
                # Learned, refitted and sent again: the user never sees the first refusal.
                turn.refitted = True
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
            turn.messages[0] = {
                "role": "system",
                "content": self._offering.system_prompt(turn, self.persona),
            }
            return await self._ask(turn)
        turn.usage += completion.usage
        self._window.count(estimated, completion.usage)
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
