"""Each request a turn makes of the model: fitted into the window, sent, and its reply
read into calls. A server's refusal of a request as too long is learned and the request
sent again, refitted; an endpoint that rejects native tools (in `auto` mode) puts the
model in prompt mode for good. FunctionCallLLM runs the turn's rounds with it."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, Literal

from groupmate.function_calls import _shaping as shaping
from groupmate.function_calls import _transport as transport
from groupmate.function_calls._prompting import Prompting
from groupmate.function_calls._shaping import Message, ModelReply
from groupmate.function_calls.context_window import refused_window, request_tokens
from groupmate.function_calls.turn import CallMode, Turn
from groupmate.function_calls.vocabulary import ToolMode

log = logging.getLogger("groupmate.llm")

_PARSE_IN_THREAD_CHARS = 8_000


@dataclass(frozen=True, slots=True)
class RequestSettings:
    """What every request asks of the model besides its messages and tools."""

    model: str
    # For every request, complete_text's (summaries) too: 0 by default, as the eval
    # ran them; None leaves the server's own default.
    temperature: float | None
    # A cap per request: a small model can otherwise ramble until the context is full.
    max_output_tokens: int | None


class ModelRequests:
    """The requests of every turn of one model, through one `ChatTransport`."""

    def __init__(
        self,
        settings: RequestSettings,
        chat_transport: transport.ChatTransport,
        prompting: Prompting,
        *,
        tool_mode: ToolMode,
    ) -> None:
        self.settings = settings
        self.transport = chat_transport
        self.prompting = prompting
        self.tool_mode: ToolMode = tool_mode
        self.fell_back_to_prompt = False

    def mode(self) -> CallMode:
        """The mode the next request uses for this model."""
        if self.tool_mode == "prompt" or self.fell_back_to_prompt:
            return "prompt"
        return "native"

    async def ask(self, turn: Turn) -> ModelReply:
        """One request of `turn`, fitted into the window; its reply read into calls."""
        turn.llm_calls += 1
        tools = self.prompting.fitted(turn)
        estimated = request_tokens(turn.messages, tools.tokens if tools is not None else 0)
        try:
            choice: Literal["auto", "none"] = "none" if turn.text_only else "auto"
            completion = await self.complete(turn.messages, tools, choice, warm_up=turn.warm_up)
        except transport.status_error() as exc:
            said = refused_window(str(exc.message), exc.body)
            if said is not None and not turn.refitted and self.prompting.window.learn(said):
                # Learned, refitted and sent again: the user never sees the first refusal.
                turn.refitted = True
                return await self.ask(turn)
            # Switching is only safe before native tool messages are in the conversation.
            started = any(m["role"] == "tool" for m in turn.messages)
            native = tools is not None and self.tool_mode == "auto"
            if started or not (native and transport.rejects_tools(exc)):
                raise transport.unavailable(exc) from exc
            log.info(
                "model %s rejected native tools; switching to prompt mode", self.settings.model
            )
            self.fell_back_to_prompt = True
            self.prompting.to_prompt_mode(turn)
            return await self.ask(turn)
        turn.usage += completion.usage
        self.prompting.window.count(estimated, completion.usage)
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

    async def complete(
        self,
        messages: list[Message],
        tools: transport.ToolList | None,
        tool_choice: Literal["auto", "none"] = "auto",
        *,
        warm_up: bool = False,
    ) -> transport.Completion:
        """One Chat Completions request; the SDK retries 429/5xx/timeouts honouring Retry-After."""
        body: dict[str, Any] = {"model": self.settings.model, "messages": messages}
        if tools is not None:
            # The API's default once tools are given, but llama-cpp-python's
            # chatml-function-calling format leaves the tools out of the prompt unless
            # it is sent.
            body["tool_choice"] = tool_choice
        if self.settings.temperature is not None:
            body["temperature"] = self.settings.temperature
        if self.settings.max_output_tokens is not None:
            body["max_tokens"] = self.settings.max_output_tokens
        if warm_up:
            # The prompt is what is wanted read, not an answer; and a failed warm-up is
            # not worth retrying: the first message would have to wait for the retries.
            body["max_tokens"] = 1
            return await self.transport.complete(body, tools, retries=0)
        return await self.transport.complete(body, tools)
