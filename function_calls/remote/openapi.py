"""OpenAPI tool servers (as Open WebUI has them): every operation becomes a tool.

`openapi.servers: [{url, spec?, headers?, tools?}]`. The spec (default
`<url>/openapi.json`; a path or URL, JSON or YAML) is read at startup. Each operation is
a tool named by its `operationId`; its path, query and JSON-body parameters are merged
into one argument schema, with `$ref`s resolved. A call is validated by the same
`ToolInvoker` as every tool, then sent with httpx under the server's timeout; a non-2xx
answer comes back to the model as an error report, and a huge one is cut with a note.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import yaml

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.errors import ToolDefinitionError, ToolError
from groupmate.function_calls.remote.external import as_configured, external_tool
from groupmate.function_calls.remote.openapi_config import (
    OpenApiServerConfig as OpenApiServerConfig,
)
from groupmate.function_calls.remote.openapi_config import OpenApiSettings as OpenApiSettings
from groupmate.function_calls.remote.openapi_spec import Operation, operations
from groupmate.function_calls.remote.results import MAX_RESULT_CHARS, limited
from groupmate.function_calls.result import FunctionResult, to_compact_json
from groupmate.function_calls.tools import Tool
from groupmate.function_calls.toolsets import (
    AbstractToolset,
    CombinedToolset,
    ListingMemo,
    ToolListing,
)
from groupmate.storage.outgoing import safe_error

log = logging.getLogger(__name__)

_RETRY_SPEC = 60.0
_MAX_ERROR_TEXT = 500
# Read at most this much of an answer; the model is shown far less (MAX_RESULT_CHARS).
_MAX_BYTES = 1_000_000
_CUT_NOTE = f"\n[cut: the answer was over {_MAX_BYTES:,} bytes; this is the start]"


class OpenApiTools(AbstractToolset):
    """The tools of one OpenAPI server, named by their operationIds (`as_configured`
    narrows and prefixes them); none until its spec is read."""

    def __init__(self, config: OpenApiServerConfig, *, client: httpx.AsyncClient) -> None:
        self.config = config
        self._client = client
        self._tools: tuple[Tool, ...] = ()
        self._everyone = ListingMemo()
        self._task: asyncio.Task[None] | None = None

    @property
    def label(self) -> str:
        return f"OpenAPI server {self.config.url}"

    def listing(self, ctx: MessageContext | None) -> ToolListing:
        return self._everyone.own(self._tools, ctx)

    async def load(self) -> bool:
        """Read the spec and build the tools; False (logged) when the spec can't be read."""
        try:
            async with asyncio.timeout(self.config.timeout):  # a trickling server, too
                spec = await self._spec()
        except Exception as exc:
            log.warning("%s: cannot read its spec (%s)", self.label, safe_error(exc))
            return False
        built: list[Tool] = []
        for found in operations(spec):
            if isinstance(found, str):
                log.warning("%s: operation left out: %s", self.label, found)
                continue
            tool = self._tool(found)
            if tool is not None:
                built.append(tool)
        self._tools = tuple(built)
        log.info("%s offers %d tools", self.label, len(built))
        return True

    def start_retrying(self) -> None:
        """Keep trying to read the spec of a server that was down at startup."""

        async def retry() -> None:
            loaded = False
            while not loaded:
                await asyncio.sleep(_RETRY_SPEC)
                loaded = await self.load()

        self._task = asyncio.create_task(retry(), name=f"openapi:{self.config.url}")

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _spec(self) -> Mapping[str, Any]:
        location = self.config.spec_location()
        if urlsplit(location).scheme in ("http", "https"):
            # The configured headers are for the tool server: a spec elsewhere gets none.
            same_origin = _origin(location) == _origin(self.config.url)
            headers = self.config.plain_headers() if same_origin else {}
            answer = await self._client.get(location, headers=headers, timeout=self.config.timeout)
            answer.raise_for_status()
            text = answer.text
        else:
            text = await asyncio.to_thread(_read_text, location)
        spec = yaml.safe_load(text)  # JSON is YAML too
        if not isinstance(spec, Mapping) or not isinstance(spec.get("paths"), Mapping):
            raise ValueError("not an OpenAPI document (no paths)")
        return spec

    async def _send(self, request: httpx.Request) -> tuple[httpx.Response, bytes, bool]:
        """The answer, and at most `_MAX_BYTES` of its body (and whether it was cut): a
        huge answer is never read whole."""
        answer = await self._client.send(request, stream=True)
        try:
            chunks: list[bytes] = []
            size = 0
            async for chunk in answer.aiter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size > _MAX_BYTES:
                    return answer, b"".join(chunks)[:_MAX_BYTES], True
            return answer, b"".join(chunks), False
        finally:
            await answer.aclose()

    def _tool(self, operation: Operation) -> Tool | None:
        try:
            return external_tool(
                operation.operation_id,
                operation.description[:1024],
                operation.schema,
                lambda ctx, args: self._call(operation, ctx, args),
                timeout=self.config.timeout,
                # A GET changes nothing (HTTP's own promise) but sends its arguments to
                # another server; any other method may change things there.
                effect="external" if operation.method.upper() in ("GET", "HEAD") else "write",
            )
        except ToolDefinitionError as exc:
            log.warning("%s: %s is skipped: %s", self.label, operation.operation_id, exc)
            return None

    async def _call(
        self, operation: Operation, ctx: MessageContext, arguments: dict[str, Any]
    ) -> FunctionResult:
        path = operation.path
        query: dict[str, Any] = {}
        body: Any = None
        for name, value in arguments.items():
            place = operation.places.get(name)
            if place == "path":
                segment = str(value)
                if segment in ("", ".", ".."):
                    # "..", even quoted, is a step up the server's paths: another endpoint.
                    raise ToolError(f"{operation.operation_id}: {name} cannot be {segment!r}")
                path = path.replace(f"{{{name}}}", quote(segment, safe=""))
            elif place == "query":
                # Lists go as repeated keys (OpenAPI's default, form + explode).
                query[name] = json.dumps(value) if isinstance(value, dict) else value
            elif operation.whole_body:
                body = value
            else:
                body = {**(body or {}), name: value}
        request = self._client.build_request(
            operation.method.upper(),
            f"{self.config.url}{path}",
            params=query,
            json=body,
            headers=self.config.plain_headers(),
            timeout=httpx.Timeout(self.config.timeout, connect=min(self.config.timeout, 10)),
        )
        try:
            answer, raw, cut = await self._send(request)
        except httpx.TimeoutException:
            raise ToolError(
                f"{operation.operation_id}: the server did not answer in time"
            ) from None
        except httpx.HTTPError as exc:
            raise ToolError(
                f"{operation.operation_id}: the server could not be reached ({safe_error(exc)})"
            ) from None
        text = raw.decode(answer.encoding or "utf-8", errors="replace")
        if not answer.is_success:
            detail = text[:_MAX_ERROR_TEXT]
            raise ToolError(
                f"{operation.operation_id} answered HTTP {answer.status_code}: {detail}"
            )
        if cut:
            return FunctionResult.for_model(text[:MAX_RESULT_CHARS] + _CUT_NOTE)
        if "json" in answer.headers.get("content-type", ""):
            with contextlib.suppress(ValueError):
                text = to_compact_json(json.loads(text))
        return FunctionResult.for_model(limited(text))


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urlsplit(url)
    return parts.scheme, parts.hostname, parts.port


def _read_text(location: str) -> str:
    return Path(location).expanduser().read_text(encoding="utf-8")


class OpenApiToolSet:
    """Every configured OpenAPI server, with one shared HTTP client."""

    def __init__(self, settings: OpenApiSettings) -> None:
        self._client = httpx.AsyncClient(follow_redirects=False)
        self.servers = [OpenApiTools(config, client=self._client) for config in settings.servers]
        # Every server's tools as its config has them, in the config's order.
        self.toolset = CombinedToolset(
            [as_configured(server, server.config, server.config.prefix) for server in self.servers]
        )

    async def start(self) -> None:
        loaded = await asyncio.gather(*(server.load() for server in self.servers))
        for server, ok in zip(self.servers, loaded, strict=True):
            if not ok:
                server.start_retrying()

    async def aclose(self) -> None:
        await asyncio.gather(*(server.aclose() for server in self.servers))
        await self._client.aclose()
