"""What an OpenAI-compatible server says about itself: the context window it gives a
request, so that `llm.context_tokens` need not be written down twice (once when the
server is started, once in the config).

Asked once at startup, briefly: a server that says nothing (llama-cpp-python, a hosted
API) or does not answer leaves the configured or the default window. Where each server
says it:

- llama.cpp's server: `GET /props` at its root, `default_generation_settings.n_ctx` (the
  window of one slot, which is what one request gets), or `n_ctx` at the top level.
- Ollama: `GET /api/ps` gives the window of a loaded model (`context_length`, what
  `ollama ps` shows, whatever set it); otherwise `POST /api/show` gives the model's own
  `num_ctx` parameter, and without one Ollama's default applies: 4096 tokens (on less
  than 24 GiB of VRAM; more memory gets more, which the bot then leaves unused), never
  more than the model was trained for (`model_info["<arch>.context_length"]`).
- vLLM: `GET /v1/models`, the model's `max_model_len` (llama.cpp also lists `meta.n_ctx`).
- LM Studio: `GET /api/v0/models` at its root, `loaded_context_length` of a loaded model,
  else `max_context_length`.
- Hosted APIs whose model list says it: OpenRouter and Together (`context_length`), Groq
  (`context_window`), Mistral (`max_context_length`).

A hosted API that says nothing (DeepSeek, DashScope/Qwen, Moonshot, Zhipu GLM,
SiliconFlow, Gemini's OpenAI-compatible endpoint) gets the window its documentation
gives (`KNOWN_WINDOWS`). Whatever the source, a server that refuses a request as too long
corrects it while the bot runs (see `context_window.refused_window`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from groupmate.function_calls.usage import estimate_tokens

log = logging.getLogger("groupmate.llm")

# Without word from the server or the config: small enough for any server a self-hoster
# starts (llama.cpp's and Ollama's usual 4k), so that no request overflows the window.
DEFAULT_CONTEXT_TOKENS = 4096
# OpenAI's own API (no base_url) says nothing, and its models hold far more than this;
# it is the cap groupmate used before it asked servers.
OPENAI_CONTEXT_TOKENS = 8192
OLLAMA_DEFAULT_CONTEXT = 4096
PROBE_TIMEOUT = 3.0  # seconds for all the questions together: startup never waits longer
_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)
# Fields of an entry in a `/models` list that give the model's window, and who uses them.
_LISTED_WINDOW = (
    ("max_model_len", "vLLM, max_model_len (/v1/models)"),
    ("context_length", "the server's model list (context_length)"),  # OpenRouter, Together
    ("context_window", "the server's model list (context_window)"),  # Groq
    ("max_context_length", "the server's model list (max_context_length)"),  # Mistral
)


@dataclass(frozen=True, slots=True)
class KnownWindow:
    """What a hosted API's documentation gives a model's window: `host` is a suffix of
    the base URL's host, `model` a prefix of the model's name (lower case; "" for any)."""

    host: str
    model: str
    tokens: int
    source: str


# Most specific first: the first entry whose host and model prefix match wins.
KNOWN_WINDOWS: tuple[KnownWindow, ...] = (
    # DeepSeek, api-docs.deepseek.com "Models & Pricing", read 2026-11: 128K for
    # deepseek-chat and deepseek-reasoner.
    KnownWindow("deepseek.com", "", 128_000, "DeepSeek's documentation (128K)"),
    # DashScope (Alibaba Model Studio) compatible-mode, "Models" page, read 2026-11:
    # qwen-max 32K, qwen-plus 128K, qwen-turbo 1M, open Qwen2.5/Qwen3 128K.
    KnownWindow("aliyuncs.com", "qwen-max", 32_768, "DashScope's documentation (qwen-max)"),
    KnownWindow("aliyuncs.com", "qwen-turbo", 1_000_000, "DashScope's documentation"),
    KnownWindow("aliyuncs.com", "", 131_072, "DashScope's documentation (Qwen, 128K)"),
    # Moonshot, platform.moonshot.cn model list, read 2026-11: the window is in the name
    # of the v1 models; kimi-k2 and kimi-latest 128K.
    KnownWindow("moonshot.cn", "moonshot-v1-8k", 8_192, "Moonshot's documentation"),
    KnownWindow("moonshot.cn", "moonshot-v1-32k", 32_768, "Moonshot's documentation"),
    KnownWindow("moonshot.ai", "moonshot-v1-8k", 8_192, "Moonshot's documentation"),
    KnownWindow("moonshot.ai", "moonshot-v1-32k", 32_768, "Moonshot's documentation"),
    KnownWindow("moonshot.cn", "", 131_072, "Moonshot's documentation (128K)"),
    KnownWindow("moonshot.ai", "", 131_072, "Moonshot's documentation (128K)"),
    # Zhipu GLM, open.bigmodel.cn model overview, read 2026-11: glm-4 family 128K.
    KnownWindow("bigmodel.cn", "", 128_000, "Zhipu's documentation (GLM-4, 128K)"),
    # SiliconFlow, docs.siliconflow.cn model list, read 2026-11: the hosted open models
    # give at least 32K (most Qwen2.5/DeepSeek ones more); 32K for any.
    KnownWindow("siliconflow.cn", "", 32_768, "SiliconFlow's documentation (32K or more)"),
    KnownWindow("siliconflow.com", "", 32_768, "SiliconFlow's documentation (32K or more)"),
    # Groq, console.groq.com/docs/models, read 2026-11: its hosted models give 128K
    # (the model list also says it, as `context_window`).
    KnownWindow("groq.com", "", 131_072, "Groq's documentation (128K)"),
    # Mistral, docs.mistral.ai models overview, read 2026-11: 128K for current models.
    KnownWindow("mistral.ai", "", 128_000, "Mistral's documentation (128K)"),
    # Together, docs.together.ai serverless models, read 2026-11: the chat models listed
    # give 32K or more (the model list says each, as `context_length`).
    KnownWindow("together.xyz", "", 32_768, "Together's documentation (32K or more)"),
    # Gemini's OpenAI-compatible endpoint, ai.google.dev models page, read 2026-11:
    # Gemini 1.5/2.x models take 1M input tokens.
    KnownWindow("googleapis.com", "gemini", 1_048_576, "Gemini's documentation (1M)"),
    # OpenRouter lists `context_length` per model; this is for a list that did not answer.
    KnownWindow("openrouter.ai", "", 32_768, "OpenRouter (32K or more)"),
)


def known_window(base_url: str | None, model: str) -> ContextWindow | None:
    """The documented window of `model` at the hosted API of `base_url`, if we know it."""
    if not base_url:
        return None
    host = (urlsplit(base_url).hostname or "").lower()
    name = model.lower().rsplit("/", 1)[-1]
    for known in KNOWN_WINDOWS:
        if (host == known.host or host.endswith("." + known.host)) and name.startswith(known.model):
            return ContextWindow(known.tokens, known.source)
    return None


@dataclass(frozen=True, slots=True)
class ContextWindow:
    """A context window in tokens, and where the number came from (for the log and
    `groupmate check`; never a URL, which may hold credentials). `counted` is how many
    of the server's own tokens the documented estimate's one comes to, where the server
    counted a sample for us (llama.cpp's `/tokenize`); None where it could not."""

    tokens: int
    source: str
    counted: float | None = None


async def context_window(
    configured: int | None,
    *,
    base_url: str | None,
    model: str,
    api_key: str | None = None,
    within: float = PROBE_TIMEOUT,
) -> ContextWindow:
    """`configured` if set; else what the server at `base_url` says; else what its
    documentation says (`KNOWN_WINDOWS`); else the default."""
    if configured is not None:
        found: ContextWindow | None = ContextWindow(configured, "llm.context_tokens")
    else:
        found = await discover_context(
            base_url, model, api_key=api_key, within=within
        ) or known_window(base_url, model)
    if found is None:
        if base_url:
            found = ContextWindow(DEFAULT_CONTEXT_TOKENS, "default; the server did not say")
            log.info(
                "LLM context window: the server did not say; assuming %d tokens, and each "
                "message is offered the tools it needs within it (a server that refuses a "
                "request as too long corrects the figure)",
                DEFAULT_CONTEXT_TOKENS,
            )
            return found
        found = ContextWindow(OPENAI_CONTEXT_TOKENS, "default for the OpenAI API")
    log.info("LLM context window: %d tokens (%s)", found.tokens, found.source)
    return found


async def served_models(
    base_url: str, *, api_key: str | None = None, within: float = PROBE_TIMEOUT
) -> tuple[str, ...] | None:
    """The names of the models the server at `base_url` lists (GET /models), or None when
    it does not answer within `within` seconds or has no such list. Asked with httpx, as
    the SDK's `models.list()` asks it (the same key, "unused" for a local server that
    takes any), so that `groupmate check` does not import the SDK to say it."""
    headers = {"Authorization": f"Bearer {api_key or 'unused'}"}
    try:
        async with (
            asyncio.timeout(within),
            # Redirects followed, as the SDK's client follows them.
            httpx.AsyncClient(
                headers=headers, timeout=within, follow_redirects=True, verify=_verified()
            ) as client,
        ):
            response = await client.get(f"{base_url.rstrip('/')}/models")
            response.raise_for_status()
            return tuple(model["id"] for model in response.json()["data"])
    except Exception as exc:  # refused, slow, no such route: the caller says nothing then
        log.info("LLM server did not list its models (%s)", type(exc).__name__)
        return None


async def discover_context(
    base_url: str | None, model: str, *, api_key: str | None = None, within: float = PROBE_TIMEOUT
) -> ContextWindow | None:
    """The window the server at `base_url` (an OpenAI-compatible `…/v1`) gives `model`,
    or None when it does not say or does not answer within `within` seconds."""
    if not base_url:
        return None  # OpenAI's own API tells no context window
    api = base_url.rstrip("/")
    root = api.removesuffix("/v1")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with (
            asyncio.timeout(within),
            httpx.AsyncClient(headers=headers, timeout=within, verify=_verified()) as client,
        ):
            return (
                await _llama_cpp(client, root)
                or await _ollama(client, root, model)
                or await _model_list(client, api, model)
                or await _lm_studio(client, root, model)
            )
    except Exception as exc:  # slow, refused, odd answers: never a reason not to start
        # A refused connection ends the questions at once: nothing else would answer.
        log.info("LLM server did not say its context window (%s)", type(exc).__name__)
        return None


@functools.cache
def _verified() -> ssl.SSLContext:
    # httpx's default (its CA bundle, or SSL_CERT_FILE's), loaded once for the probes of
    # one process: each client would load the bundle anew (20 ms), and `check` has two.
    return httpx.create_ssl_context()


def _json(response: httpx.Response) -> dict[str, Any] | None:
    if response.status_code != 200:
        return None
    try:
        data = response.json()
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _tokens(value: Any) -> int | None:
    # 0 is llama.cpp's router mode (no model loaded yet): unknown, not zero.
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _field(data: Any, *path: str) -> Any:
    for key in path:
        data = data.get(key) if isinstance(data, dict) else None
    return data


# What groupmate's requests are made of at their densest, for a server to count: tool
# schemas (the estimate counts them low; chat it counts high).
_SAMPLE = (
    '{"type":"function","function":{"name":"reminder_update","description":"Change one '
    "of this chat's reminders: its time or repeat rule, its text, or who it is for.\","
    '"parameters":{"additionalProperties":false,"properties":{"reminder_id":{"description":'
    '"the ID, e.g. 3 or #3","maxLength":64,"minLength":1,"type":"string"},"when":{"type":'
    '"string","description":"the new time in the user\'s own words, e.g. \'tomorrow at 9\'"'
    '},"who":{"items":{"pattern":"^(me|everyone|@[^ \\t\\r\\n@]{1,64})$","type":"string"},'
    '"maxItems":10,"minItems":1,"type":"array"}},"type":"object","required":["reminder_id"]}}}'
)


async def _llama_cpp(client: httpx.AsyncClient, root: str) -> ContextWindow | None:
    props = _json(await client.get(f"{root}/props"))
    if props is None:
        return None
    tokens = _tokens(_field(props, "default_generation_settings", "n_ctx")) or _tokens(
        props.get("n_ctx")
    )
    if not tokens:
        return None
    return ContextWindow(tokens, "llama.cpp server, /props", await _counted(client, root))


async def _counted(client: httpx.AsyncClient, root: str) -> float | None:
    """The server's tokens per estimated token, from its own tokenizer (`POST /tokenize`),
    or None when it does not answer that."""
    answer = _json(await client.post(f"{root}/tokenize", json={"content": _SAMPLE}))
    counted = answer.get("tokens") if answer is not None else None
    if not isinstance(counted, list) or not counted:
        return None
    return len(counted) / estimate_tokens(_SAMPLE)


async def _ollama(client: httpx.AsyncClient, root: str, model: str) -> ContextWindow | None:
    shown = _json(await client.post(f"{root}/api/show", json={"model": model}))
    if shown is None or not ("model_info" in shown or "parameters" in shown):
        return None
    running = _json(await client.get(f"{root}/api/ps"))
    names = {model, f"{model}:latest"}  # "qwen2.5" runs as "qwen2.5:latest"
    for entry in _field(running, "models") or []:
        if isinstance(entry, dict) and {entry.get("name"), entry.get("model")} & names:
            tokens = _tokens(entry.get("context_length"))
            if tokens:
                return ContextWindow(tokens, "Ollama, the loaded model's (/api/ps)")
    parameters = shown.get("parameters")
    match = _NUM_CTX.search(parameters) if isinstance(parameters, str) else None
    if match:
        return ContextWindow(int(match.group(1)), "Ollama, the model's num_ctx (/api/show)")
    info = shown.get("model_info")
    trained = [
        _tokens(value)
        for key, value in (info.items() if isinstance(info, dict) else ())
        if key.endswith(".context_length")
    ]
    tokens = min([OLLAMA_DEFAULT_CONTEXT, *(t for t in trained if t)])
    return ContextWindow(tokens, "Ollama's default (the model sets no num_ctx)")


async def _model_list(client: httpx.AsyncClient, api: str, model: str) -> ContextWindow | None:
    listed = _field(_json(await client.get(f"{api}/models")), "data")
    entries = [entry for entry in listed or [] if isinstance(entry, dict)]
    mine = [entry for entry in entries if entry.get("id") == model]
    for entry in mine or (entries if len(entries) == 1 else []):
        for key, source in _LISTED_WINDOW:
            tokens = _tokens(entry.get(key))
            if tokens:
                return ContextWindow(tokens, source)
        tokens = _tokens(_field(entry, "meta", "n_ctx"))
        if tokens:
            return ContextWindow(tokens, "llama.cpp server, /v1/models")
    return None


async def _lm_studio(client: httpx.AsyncClient, root: str, model: str) -> ContextWindow | None:
    listed = _field(_json(await client.get(f"{root}/api/v0/models")), "data")
    for entry in listed or []:
        if isinstance(entry, dict) and entry.get("id") == model:
            tokens = _tokens(entry.get("loaded_context_length"))
            if tokens:
                return ContextWindow(tokens, "LM Studio, the loaded model's (/api/v0/models)")
            tokens = _tokens(entry.get("max_context_length"))
            if tokens:
                return ContextWindow(tokens, "LM Studio, the model's (/api/v0/models)")
    return None
