"""The OpenAI-compatible transport: one Chat Completions request through the official
SDK, and its failures mapped to a short message for the chat (the log gets the details).

The SDK (0.5 s of imports, most of it its types) is imported with the first request's
client, not with this module: `groupmate check` fits the bot's prompt to the window
through FunctionCallLLM and sends nothing."""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from groupmate.function_calls.context_window import tools_tokens
from groupmate.function_calls.errors import LLMUnavailableError
from groupmate.function_calls.usage import Usage, usage_of

if TYPE_CHECKING:
    import openai
    from openai import AsyncOpenAI, DefaultAsyncHttpxClient, RequestOptions

log = logging.getLogger("groupmate.llm")

Message = dict[str, Any]
HttpBackend = Literal["aiohttp", "httpx"]
# What became of one request (the metrics' `outcome`): answered; too slow; the endpoint
# could not be reached; it said 429; another error status; an answer that can't be read.
RequestOutcome = Literal["ok", "timeout", "unreachable", "rate_limited", "error", "unreadable"]
RequestObserver = Callable[[RequestOutcome, float, Usage | None], None]
"""Told of each request as it ends: its outcome, its seconds (the SDK's retries in them),
and an answered one's usage. It must not raise or block."""

# How Ollama, vLLM, llama.cpp and others say "no native tool support". Kept specific:
# a schema error that merely mentions tools must not switch modes for good.
TOOLS_UNSUPPORTED = re.compile(
    r"does not support (?:tools|function|tool)|tools? (?:is|are) not supported"
    r"|tools param requires|tool choice requires|enable-auto-tool-choice"
    r"|(?:function|tool)[ _-]?call(?:ing|s)? (?:is |are )?not (?:supported|enabled)",
    re.IGNORECASE,
)


def _dumps(value: Any) -> bytes:
    # The SDK's own encoding of a request body (compact, UTF-8, no NaN).
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


@dataclass(frozen=True, slots=True)
class ToolList:
    """A request's `tools`, encoded once per tool set: every request of every chat sends
    one, and encoding it each time cost eight times the rest of the body (0.16 ms of the
    event loop per request, measured). Never changed once built."""

    definitions: list[dict[str, Any]]
    encoded: bytes
    tokens: int  # the context window's estimate for it

    @classmethod
    def of(cls, definitions: list[dict[str, Any]]) -> ToolList:
        return cls(definitions, _dumps(definitions), tools_tokens(definitions))


def encode_body(body: dict[str, Any], tools: ToolList | None) -> bytes:
    """The request's JSON: `body` (with its model, without tools), and the tools' bytes
    spliced in as they are."""
    if "model" not in body or "tools" in body:
        raise ValueError("a request body has its model and no tools of its own")
    encoded = _dumps(body)
    if tools is None:
        return encoded
    return b"".join((encoded[:-1], b',"tools":', tools.encoded, b"}"))


# The SDK tells the endpoint the host's OS, CPU and Python version on every request
# (besides its User-Agent). A self-hosted bot keeps that to itself; each header also
# cost the event loop time in the SDK's and aiohttp's header handling (measured).
_UNSENT_HEADERS = (
    "X-Stainless-Lang",
    "X-Stainless-Package-Version",
    "X-Stainless-OS",
    "X-Stainless-Arch",
    "X-Stainless-Runtime",
    "X-Stainless-Runtime-Version",
    "X-Stainless-Async",
)


@dataclass(frozen=True, slots=True)
class Completion:
    message: Any  # the response's message as `Fields`, shape-checked by the caller
    usage: Usage


class Fields:
    """A JSON object of a response read by attribute, as the SDK's models are read
    (`message.tool_calls[0].function.name`; a missing key reads as None), without
    building those models: that cost more than the rest of the request's handling.

    `content` and `arguments` stay as they came: text, content parts, or an object."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy, pickle and friends probe for these
            raise AttributeError(name)
        value = self._data.get(name)
        return value if name in _AS_SENT else _fields(value)

    def __repr__(self) -> str:
        return f"Fields({self._data!r})"


_AS_SENT = frozenset({"content", "arguments"})


def _fields(value: Any) -> Any:
    if isinstance(value, dict):
        return Fields(value)
    if isinstance(value, list):
        return [_fields(item) for item in value]
    return value


def _aiohttp_client() -> DefaultAsyncHttpxClient | None:
    """The SDK's aiohttp transport: its pool stays cheap with many concurrent chats,
    where httpx's pool scan grows with every open connection. Without aiohttp (installed
    without the `speed` extra), None: the SDK's own httpx transport, which works the same."""
    from openai import DefaultAioHttpClient

    try:
        return DefaultAioHttpClient()
    except RuntimeError:  # how the SDK says it was installed without its aiohttp extra
        log.debug("aiohttp is not installed: the LLM is asked through httpx")
        return None


class ChatTransport:
    """Chat Completions requests to one endpoint; the SDK retries 429/5xx/timeouts,
    honouring Retry-After."""

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str | None,
        transport_retries: int,
        request_timeout: float,
        http_backend: HttpBackend,
        client: AsyncOpenAI | None,
    ) -> None:
        if http_backend not in ("aiohttp", "httpx"):
            raise ValueError(f"http_backend must be aiohttp or httpx, not {http_backend!r}")
        # A client of our own gets the body as bytes. One passed in (an Azure client,
        # say) gets it as a dict, as its own code may read the body to route the request.
        self._as_bytes = client is None
        self._client = client
        self._settings = (base_url, api_key, transport_retries, request_timeout, http_backend)
        self._building = threading.Lock()
        self._key_prefix = f"groupmate-{uuid.uuid4().hex}"
        self._request_numbers = itertools.count(1)
        self.observers: list[RequestObserver] = []

    @property
    def client(self) -> AsyncOpenAI:
        """The SDK client, built (and the SDK imported) when first asked for: by a thread
        at the bot's start (`FunctionCallLLM.load_client`), or by the first request."""
        client = self._client
        if client is None:
            with self._building:  # the thread's and a first request's: one client
                client = self._client = self._client or _sdk_client(*self._settings)
        return client

    async def aclose(self) -> None:
        if self._client is not None:  # never built: nothing was sent, nothing to close
            await self._client.close()

    def _request_options(self) -> RequestOptions:
        # The SDK makes an idempotency key for every request (OpenAI's endpoint is not
        # sent it) by reading the OS's randomness (uuid4), which hands the GIL to the
        # database threads and waits to get it back: 7% of the event loop's time under
        # load, measured. One of ours, unique per request, costs nothing.
        return {"idempotency_key": f"{self._key_prefix}-{next(self._request_numbers)}"}

    async def complete(
        self, body: dict[str, Any], tools: ToolList | None = None, *, retries: int | None = None
    ) -> Completion:
        """One request of `body` and `tools`; raises openai.APIStatusError as is (the loop
        decides on a mode switch), LLMUnavailableError for everything else. `retries`
        overrides the client's number of retries for this request. Each observer is told
        how it ended."""
        began = time.perf_counter()
        try:
            completion = await self._complete(body, tools, retries)
        except Exception as exc:  # a cancelled request has no outcome: not counted
            self._observe(request_outcome(exc), time.perf_counter() - began, None)
            raise
        self._observe("ok", time.perf_counter() - began, completion.usage)
        return completion

    def _observe(self, outcome: RequestOutcome, seconds: float, usage: Usage | None) -> None:
        """Tells each observer; one that fails (a metrics bug, an endpoint's absurd usage)
        is logged and never costs the request its answer or its own error."""
        for observer in self.observers:
            try:
                observer(outcome, seconds, usage)
            except Exception as exc:
                # The exception's type alone: its text could quote what the request carried.
                log.warning("request observer %r failed: %s", observer, type(exc).__name__)

    async def _complete(
        self, body: dict[str, Any], tools: ToolList | None, retries: int | None
    ) -> Completion:
        import openai  # imported by now, with the client

        # Encoded before the request: a body that cannot be is our bug, not the model's.
        content = encode_body(body, tools) if self._as_bytes else None
        try:
            # `client.post` is the SDK's documented raw-request path: same auth, retries and
            # errors as `chat.completions.create`, without re-walking our already plain-JSON
            # body through its TypedDict transform (about 2 ms per request, measured); the
            # body goes as bytes (`content`), so that the tools are not encoded again.
            # `cast_to=object` hands back the parsed JSON rather than a ChatCompletion
            # built field by field, which the bot reads a handful of fields of.
            path, options = "/chat/completions", self._request_options()
            if retries is not None:
                options["max_retries"] = retries
            if content is not None:
                data = await self.client.post(
                    path, content=content, cast_to=object, options=options
                )
            else:
                whole = body if tools is None else {**body, "tools": tools.definitions}
                data = await self.client.post(path, body=whole, cast_to=object, options=options)
            completion = _fields(data)
        except openai.APIStatusError:
            raise
        except openai.OpenAIError as exc:
            raise unavailable(exc) from exc
        except Exception as exc:  # a 200 response whose body is not JSON, or absurdly nested
            raise unreadable(exc) from exc
        choices = getattr(completion, "choices", None)
        if not isinstance(choices, list) or not choices:
            raise unreadable(None)
        message = getattr(choices[0], "message", None)
        if not isinstance(message, Fields):
            raise unreadable(None)
        tokens = tools.tokens if tools is not None else 0
        return Completion(message, usage_of(completion, body, tokens, message_text(message)))


def _sdk_client(
    base_url: str | None,
    api_key: str | None,
    transport_retries: int,
    request_timeout: float,
    http_backend: HttpBackend,
) -> AsyncOpenAI:
    from openai import AsyncOpenAI, Omit

    unsent: dict[str, Any] = {name: Omit() for name in _UNSENT_HEADERS}
    return AsyncOpenAI(
        base_url=base_url,
        # Local servers (Ollama, vLLM) need no key, but the SDK insists on one.
        api_key=api_key or os.environ.get("OPENAI_API_KEY") or "no-key",
        max_retries=transport_retries,
        timeout=request_timeout,
        default_headers=unsent,
        http_client=_aiohttp_client() if http_backend == "aiohttp" else None,
    )


def status_error() -> type[openai.APIStatusError]:
    """The SDK's error for an answer with an error status, which `complete` raises as is.
    For `except`, which looks its class up only once something was raised: by then the
    SDK has been imported, with the request's client."""
    import openai

    return openai.APIStatusError


def message_text(message: Any) -> str:
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts, as some servers send them
        texts = [part.get("text") if isinstance(part, dict) else None for part in content]
        return "".join(text for text in texts if isinstance(text, str))
    return ""


def request_outcome(exc: Exception) -> RequestOutcome:
    """How a request that raised `exc` (from `complete`) ended, as `unavailable` words it."""
    import openai

    cause = exc if isinstance(exc, openai.OpenAIError) else exc.__cause__
    if isinstance(cause, openai.RateLimitError):
        return "rate_limited"
    if isinstance(cause, openai.APITimeoutError) and not is_connection_failure(cause):
        return "timeout"
    if isinstance(cause, openai.APIConnectionError):
        return "unreachable"
    if isinstance(exc, LLMUnavailableError) and not isinstance(cause, openai.OpenAIError):
        return "unreadable"  # a 200 whose body is no completion
    return "error"


def rejects_tools(exc: openai.APIStatusError) -> bool:
    return exc.status_code in (400, 404, 422, 500, 501) and bool(
        TOOLS_UNSUPPORTED.search(str(exc.message) + " " + str(exc.body))
    )


def is_connection_failure(exc: BaseException) -> bool:
    """Whether the cause chain shows a refused or dropped connection, not a slow server.

    The aiohttp transport reports connection failures as connect timeouts.
    """
    cause = exc.__cause__
    while cause is not None:
        if isinstance(cause, OSError) and not isinstance(cause, TimeoutError):
            return True
        cause = cause.__cause__
    return False


def unreadable(exc: Exception | None) -> LLMUnavailableError:
    log.warning("unreadable LLM response: %s", type(exc).__name__ if exc else "no message")
    return LLMUnavailableError(
        "The language model sent an empty or unreadable answer. Please try again."
    )


def unavailable(exc: Exception) -> LLMUnavailableError:
    """Map an SDK error to a short message for the chat; the log gets the details."""
    import openai

    status = getattr(exc, "status_code", None)
    log.warning("LLM request failed: %s (status %s)", type(exc).__name__, status)
    if isinstance(exc, openai.APITimeoutError) and not is_connection_failure(exc):
        text = "The language model took too long to answer. Please try again in a moment."
    elif isinstance(exc, openai.APIConnectionError):
        text = "I can't reach the language model right now. Please try again in a moment."
    elif isinstance(exc, openai.RateLimitError):
        text = "The language model is rate-limiting me right now. Please try again in a minute."
    elif isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        text = "The language model rejected the bot's credentials; an admin should check them."
    elif isinstance(exc, openai.NotFoundError):
        text = "The configured language model was not found; an admin should check llm.model."
    elif isinstance(exc, openai.BadRequestError):
        text = "The language model rejected this request. Please try a shorter message."
    elif isinstance(exc, openai.APIStatusError):
        text = "The language model service had an error. Please try again in a moment."
    else:
        text = "The language model sent an unreadable answer. Please try again."
    return LLMUnavailableError(text)
