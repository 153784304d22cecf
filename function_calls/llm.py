"""FunctionCallLLM: the multi-round tool-calling loop over any OpenAI-compatible endpoint.

The loop is here; what a turn shows the model (its messages and tools, fitted into the
window) is in `_prompting`, each request it makes in `_asking` (sent through
`_transport`), what the user is told at the end in `_answers`, the shaping of messages
in native and prompt mode in `_shaping`, the turn's state and the running of each
round's calls in `turn`, and each tool call goes through the `ToolInvoker`.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, get_args

from groupmate.function_calls import _transport as transport
from groupmate.function_calls._answers import final_answer, no_answer, parrots
from groupmate.function_calls._asking import ModelRequests, RequestSettings
from groupmate.function_calls._offering import Offering
from groupmate.function_calls._prompting import Prompting
from groupmate.function_calls._shaping import ChatTurn, Message
from groupmate.function_calls._transport import RequestObserver
from groupmate.function_calls._transport import RequestOutcome as RequestOutcome  # re-exported
from groupmate.function_calls._window import PromptBudget as PromptBudget  # re-exported
from groupmate.function_calls._window import Window
from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.errors import LLMUnavailableError
from groupmate.function_calls.internal_text import UNFINISHED
from groupmate.function_calls.invoker import ToolInvoker
from groupmate.function_calls.prompt_formats import PROMPT_FORMATS, PromptFormat
from groupmate.function_calls.registry import Tool, ToolRegistry
from groupmate.function_calls.selection import (
    DEFAULT_MAX_TOOLS,
    FIND_TOOLS,
    ToolOffer,
    ToolSelector,
    finder_tool,
)
from groupmate.function_calls.server_info import ContextWindow
from groupmate.function_calls.system_prompt import DEFAULT_PERSONA
from groupmate.function_calls.turn import CallMode, Turn, TurnObserver, TurnResult, run_calls
from groupmate.function_calls.usage import Usage
from groupmate.function_calls.vocabulary import ToolMode as ToolMode  # re-exported
from groupmate.function_calls.vocabulary import ToolSchema as ToolSchema  # re-exported

if TYPE_CHECKING:
    from openai import AsyncOpenAI

log = logging.getLogger("groupmate.llm")

_NUDGE = "Answer my last message directly in plain text."
_REPEATED = (
    "That repeats an earlier answer from the chat. Answer my last message itself, and "
    "call a tool if one can tell it."
)
_CURRENT_TURN: contextvars.ContextVar[Turn | None] = contextvars.ContextVar(
    "groupmate_turn", default=None
)


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
        if invoker is None:
            registry = registry if registry is not None else ToolRegistry()
            invoker = ToolInvoker(registry, call_timeout=call_timeout)
        elif registry is not None and registry is not invoker.registry:
            raise ValueError("give a registry or an invoker, not both")
        self.invoker = invoker
        self.registry = invoker.registry
        self.max_rounds = max_rounds
        self.max_invalid_retries = max_invalid_retries
        self.strict_schemas = strict_schemas
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
        self._prompting = Prompting(
            window=self._window,
            offering=self._offering,
            persona=persona,
            prompt_format=prompt_format,
            tool_schema=tool_schema,
        )
        self._observers: list[TurnObserver] = []
        self._requests = ModelRequests(
            RequestSettings(model, temperature, max_output_tokens),
            transport.ChatTransport(
                base_url=base_url,
                api_key=api_key,
                transport_retries=transport_retries,
                request_timeout=request_timeout,
                http_backend=http_backend,
                client=client,
            ),
            self._prompting,
            tool_mode=tool_mode,
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
    def model(self) -> str:
        return self._requests.settings.model

    @property
    def tool_mode(self) -> ToolMode:
        return self._requests.tool_mode

    @property
    def temperature(self) -> float | None:
        return self._requests.settings.temperature

    @property
    def max_output_tokens(self) -> int | None:
        return self._requests.settings.max_output_tokens

    @property
    def persona(self) -> str:
        return self._prompting.persona

    @property
    def prompt_format(self) -> PromptFormat:
        return self._prompting.prompt_format

    @property
    def tool_schema(self) -> ToolSchema:
        return self._prompting.tool_schema

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
        return self._requests.transport.client

    async def load_client(self) -> None:
        """Build the client now, in a thread (the SDK's imports take half a second): the
        event loop answers meanwhile, and the first request does not wait for them."""
        await asyncio.to_thread(lambda: self.client)

    async def aclose(self) -> None:
        await self._requests.transport.aclose()

    def effective_mode(self) -> CallMode:
        """The mode the next request uses for this model."""
        return self._requests.mode()

    def observe(self, observer: TurnObserver) -> None:
        """Call `observer(ctx, result)` after every turn (usage records, the eval)."""
        self._observers.append(observer)

    def observe_requests(self, observer: RequestObserver) -> None:
        """Call `observer(outcome, seconds, usage)` after every request (the metrics)."""
        self._requests.transport.observers.append(observer)

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
        turn = Turn(ctx, {}, mode, self._prompting.view(mode), [], available=dict(listing.offered))
        turn.listing = listing
        return turn

    def budget(self, tools: Sequence[Tool], ctx: MessageContext) -> PromptBudget:
        """How this model's window is spent on `tools` for a short message in `ctx`."""
        return self._prompting.budget(tools, ctx, self.effective_mode())

    def first_request(
        self, ctx: MessageContext, text: str, history: Sequence[ChatTurn] = ()
    ) -> FirstRequest:
        """What a turn for `text` in `ctx` would send first (nothing is sent): for the
        selection's measurements and the operator's questions."""
        turn = self._new_turn(ctx)
        self._prompting.begin(turn, text, history)
        tools = self._prompting.fitted(turn)
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
        await self.load_client()
        turn = self._new_turn(ctx)
        turn.warm_up = True
        self._prompting.begin(turn, text, ())
        if self.tool_mode == "auto" and turn.mode == "native" and not turn.tools:
            # "hi" is offered no tools; one tool (the smallest) still finds out at start
            # whether the endpoint takes native tools at all.
            turn.tools[FIND_TOOLS] = finder_tool()
        await self._requests.ask(turn)
        return turn.usage

    async def _converse(self, turn: Turn, text: str, history: Sequence[ChatTurn]) -> TurnResult:
        self._prompting.begin(turn, text, history)
        nudged = repeated = False
        for round_number in range(1, self.max_rounds + 1):
            try:
                reply = await self._requests.ask(turn)
            except LLMUnavailableError as exc:
                return turn.finish(error=exc.user_message, ending="unavailable")
            if not reply.calls and not reply.malformed and parrots(turn, reply.text):
                # A small model shown the chat may copy the bot's last answer instead of
                # answering ("There are no active reminders" to "what time is it in
                # Tokyo?"): told so once; a second copy is no answer, never passed on.
                log.info("chat %s: the model repeated an earlier answer", turn.ctx.chat_id)
                if repeated or round_number == self.max_rounds:
                    return no_answer(turn)
                repeated = True
                turn.messages.append(reply.assistant_message)
                turn.messages.append({"role": "user", "content": _REPEATED})
                continue
            if not reply.calls and not reply.malformed:
                if reply.text or nudged or round_number == self.max_rounds:
                    return final_answer(turn, reply.text, self.registry.names())
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
            if len(turn.tools) != shown:  # the model asked for more tools
                self._prompting.tools_changed(turn)
            if stop_message is not None:
                return turn.finish(error=stop_message, ending="repairs_ran_out")
            if done:
                return turn.finish()
        # What ran is in the records (and the tools' own replies are in the answer): the
        # user is not told tool names.
        return turn.finish(error=turn.say(UNFINISHED), ending="out_of_rounds")

    async def complete_text(self, system: str, user: str) -> str:
        """One plain completion without tools (summaries, digests).

        Raises LLMUnavailableError with a user-facing message when the endpoint fails.
        """
        messages: list[Message] = [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ]
        try:
            completion = await self._requests.complete(messages, None)
            turn = _CURRENT_TURN.get()
            if turn is not None:  # a tool's request (a summary) counts for the turn
                turn.usage += completion.usage
            return transport.message_text(completion.message).strip()
        except transport.status_error() as exc:
            raise transport.unavailable(exc) from exc
        except LLMUnavailableError:
            raise
        except Exception as exc:
            raise transport.unreadable(exc) from exc
