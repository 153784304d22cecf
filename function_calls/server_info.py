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
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass
from typing import Any

import httpx

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


@dataclass(frozen=True, slots=True)
class ContextWindow:
    """A context window in tokens, and where the number came from (for the log and
    `groupmate check`; never a URL, which may hold credentials)."""

    tokens: int
    source: str


async def context_window(
    configured: int | None,
    *,
    base_url: str | None,
    model: str,
    api_key: str | None = None,
    within: float = PROBE_TIMEOUT,
) -> ContextWindow:
    """`configured` if set; else what the server at `base_url` says; else the default."""
    if configured is not None:
        found: ContextWindow | None = ContextWindow(configured, "llm.context_tokens")
    else:
        found = await discover_context(base_url, model, api_key=api_key, within=within)
    if found is None:
        if base_url:
            found = ContextWindow(DEFAULT_CONTEXT_TOKENS, "default; the server did not say")
            log.warning(
                "LLM context window: the server did not say; assuming %d tokens (set "
                "llm.context_tokens to what it was started with)",
                DEFAULT_CONTEXT_TOKENS,
            )
            return found
        found = ContextWindow(OPENAI_CONTEXT_TOKENS, "default for the OpenAI API")
    log.info("LLM context window: %d tokens (%s)", found.tokens, found.source)
    return found


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
            httpx.AsyncClient(headers=headers, timeout=within) as client,
        ):
            return (
                await _llama_cpp(client, root)
                or await _ollama(client, root, model)
                or await _model_list(client, api, model)
            )
    except Exception as exc:  # slow, refused, odd answers: never a reason not to start
        # A refused connection ends the questions at once: nothing else would answer.
        log.info("LLM server did not say its context window (%s)", type(exc).__name__)
        return None


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


async def _llama_cpp(client: httpx.AsyncClient, root: str) -> ContextWindow | None:
    props = _json(await client.get(f"{root}/props"))
    if props is None:
        return None
    tokens = _tokens(_field(props, "default_generation_settings", "n_ctx")) or _tokens(
        props.get("n_ctx")
    )
    return ContextWindow(tokens, "llama.cpp server, /props") if tokens else None


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
        tokens = _tokens(entry.get("max_model_len"))
        if tokens:
            return ContextWindow(tokens, "vLLM, max_model_len (/v1/models)")
        tokens = _tokens(_field(entry, "meta", "n_ctx"))
        if tokens:
            return ContextWindow(tokens, "llama.cpp server, /v1/models")
    return None
