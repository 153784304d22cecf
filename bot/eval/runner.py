"""Running eval cases: each in a fresh bot on a throwaway SQLite file, at the case's clock,
through `Bot.handle` (the real router, tools and LLM loop) or through `POST /v1/messages`
of the HTTP API, served on 127.0.0.1 as `groupmate serve` serves it."""

from __future__ import annotations

import asyncio
import secrets
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import httpx
import uvicorn

from bot.adapters.http import create_app
from bot.app import Bot
from bot.config import parse_config
from bot.eval.cases import Case, SearchHit
from bot.eval.judge import State, Verdict, judge
from bot.messages import IncomingMessage
from function_calls import MessageContext, TurnResult
from function_calls.search import SearchAnswer, Source
from function_calls.usage import Usage
from storage import OutgoingMessage

CHAT = {"group": "eval:group", "private": "eval:private"}
OTHER_CHAT = "eval:other"
_REPAIRS = ("invalid", "malformed", "unknown", "hidden")
Via = Literal["handle", "http"]


@dataclass(frozen=True, slots=True)
class EvalSettings:
    base_url: str
    model: str
    mode: str = "native"  # native | prompt
    prompt_format: str = "hermes"  # hermes | json (prompt mode)
    tool_schema: str = "auto"  # auto | full | compact
    # 0 makes a run repeatable; None leaves the server's default (0.8 in llama-cpp-python).
    temperature: float | None = 0.0
    context_tokens: int = 8192  # llm.context_tokens: what the server was started with
    max_output_tokens: int = 1024  # llm.max_output_tokens
    api_key: str | None = None
    request_timeout: float = 600.0
    # How the case's message reaches the bot: `Bot.handle`, or POST /v1/messages.
    via: Via = "handle"

    def label(self) -> str:
        """ "native", "prompt/hermes", ...; a schema view other than the mode's own is named."""
        label = self.mode if self.mode == "native" else f"prompt/{self.prompt_format}"
        if self.tool_schema != "auto":
            label += f" {self.tool_schema}"
        if self.via == "http":
            label += " via HTTP"
        return label


@dataclass(frozen=True, slots=True)
class CaseResult:
    case: Case
    verdict: Verdict
    reply: str
    tools: list[str]
    repairs: int
    latency_s: float
    usage: Usage
    llm_calls: int
    # Every call the model made: name, arguments as sent, outcome, detail.
    trace: list[dict[str, Any]]


class CannedSearch:
    """The eval's search provider: the case's results, no network."""

    name = "canned"

    def __init__(self, hits: list[SearchHit]) -> None:
        self.hits = hits
        self.queries: list[str] = []

    async def search(self, query: str) -> SearchAnswer:
        self.queries.append(query)
        text = " ".join(f"[{n}] {hit.text}" for n, hit in enumerate(self.hits, 1))
        return SearchAnswer(text, [Source(hit.title, hit.url) for hit in self.hits])

    async def aclose(self) -> None:
        return None


class EvalClock:
    """The case's moment, standing still (so "in 30 minutes" is exact); seeds that must
    have gone off are set a little earlier."""

    def __init__(self, now: datetime) -> None:
        self.now = now.astimezone(UTC)

    def __call__(self) -> datetime:
        return self.now


_GONE_OFF_BEFORE = timedelta(minutes=6)  # a gone_off seed is "in 5 minutes" or sooner
_DELIVERY_WAIT = 15.0


async def run_case(case: Case, settings: EvalSettings) -> CaseResult:
    with tempfile.TemporaryDirectory(prefix="groupmate-eval-") as folder:
        token = secrets.token_urlsafe(16)
        config = parse_config(_config(case, settings, Path(folder), token), environ={})
        search = CannedSearch(case.search) if case.search else None
        clock = EvalClock(case.local_now())
        bot = Bot(config, clock=clock, search=search)
        delivered = asyncio.Queue[OutgoingMessage]()

        async def deliver(message: OutgoingMessage) -> str:
            await delivered.put(message)
            return f"sent-{delivered.qsize()}"

        bot.on_outgoing(deliver)
        async with bot:
            chat = CHAT[case.chat]
            await _seed(bot, case, chat, clock, delivered)
            before = await _state(bot, chat)
            turns: list[TurnResult] = []
            assert bot.llm is not None

            def record(_: MessageContext, result: TurnResult) -> None:
                turns.append(result)

            bot.llm.observe(record)
            message = _message(case, chat, case.say)
            started = time.monotonic()
            if settings.via == "http":
                async with _http_api(bot, token, settings.request_timeout) as client:
                    started = time.monotonic()
                    said = await _post(client, message)
            else:
                said = [r.text for r in await bot.handle(message)]
            latency = time.monotonic() - started
            after = await _state(bot, chat)
    reply = "\n".join(said)
    calls = [call for turn in turns for call in turn.calls]
    errors = [turn.error for turn in turns if turn.error and not turn.calls]
    tools = [call.name for call in calls if call.outcome in ("direct", "data", "error")]
    verdict = judge(case, before, after, reply, tools, errors[0] if errors else None)
    usage = sum((turn.usage for turn in turns), Usage())
    return CaseResult(
        case=case,
        verdict=verdict,
        reply=reply,
        tools=tools,
        repairs=sum(call.outcome in _REPAIRS for call in calls),
        latency_s=latency,
        usage=usage,
        llm_calls=sum(turn.llm_calls for turn in turns),
        trace=[
            {"name": c.name, "arguments": c.arguments, "outcome": c.outcome, "detail": c.detail}
            for c in calls
        ],
    )


@asynccontextmanager
async def _http_api(bot: Bot, token: str, read_timeout: float) -> AsyncIterator[httpx.AsyncClient]:
    """The bot's HTTP API on a free port of 127.0.0.1, and a client that sends the token."""
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(bot), host="127.0.0.1", port=0, lifespan="on", log_level="warning"
        )
    )
    task = asyncio.create_task(server.serve())
    try:
        async with asyncio.timeout(10):
            while not server.started:
                if task.done():
                    raise RuntimeError("the HTTP API did not start")
                await asyncio.sleep(0.01)
        port = server.servers[0].sockets[0].getsockname()[1]
        async with httpx.AsyncClient(
            base_url=f"http://127.0.0.1:{port}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=read_timeout,
        ) as client:
            yield client
    finally:
        server.should_exit = True
        await task


async def _post(client: httpx.AsyncClient, message: IncomingMessage) -> list[str]:
    """The message as a platform would post it; the texts of the replies."""
    body = {
        "chat_id": message.chat_id,
        "chat_type": message.chat_type,
        "sender_id": message.sender_id,
        "sender_name": message.sender_name,
        "text": message.text,
        "mentions_bot": message.mentions_bot,
        "sender_is_admin": message.sender_is_admin,
    }
    response = await client.post("/v1/messages", json=body)
    response.raise_for_status()
    return [reply["text"] for reply in response.json()["replies"]]


def _config(case: Case, settings: EvalSettings, folder: Path, token: str) -> dict[str, Any]:
    llm: dict[str, Any] = {
        "base_url": settings.base_url,
        "model": settings.model,
        "tool_mode": settings.mode,
        "prompt_format": settings.prompt_format,
        "tool_schema": settings.tool_schema,
        "temperature": settings.temperature,
        "context_tokens": settings.context_tokens,
        "max_output_tokens": settings.max_output_tokens,
        "request_timeout": settings.request_timeout,
    }
    if settings.api_key:
        llm["api_key"] = settings.api_key
    return {
        "storage": {"url": f"sqlite:///{folder / 'eval.db'}"},
        "bot": {
            "timezone": case.zone,
            "rate_limits": {"user_per_minute": 10_000, "burst": 10_000},
            "admins": [case.sender.id] if case.sender.admin else [],
        },
        "llm": llm,
        # The token makes the HTTP API trust `sender_is_admin`, as a platform bridge's would.
        "adapters": {"webhook": {"token": token}},
        "logging": {"level": "WARNING"},
        "reminders": {"watchdog_interval": "100ms"},
    }


def _message(case: Case, chat: str, text: str, **fields: Any) -> IncomingMessage:
    values: dict[str, Any] = {
        "chat_id": chat,
        "chat_type": case.chat,
        "sender_id": case.sender.id,
        "sender_name": case.sender.name,
        "text": text,
        "mentions_bot": case.chat == "group",
        "sender_is_admin": case.sender.admin,
    }
    return IncomingMessage(**(values | fields))


async def _seed(
    bot: Bot,
    case: Case,
    chat: str,
    clock: EvalClock,
    delivered: asyncio.Queue[OutgoingMessage],
) -> None:
    """The case's reminders (set with /remind, as the operator) and logged history."""
    moment = clock.now
    for seed in case.reminders:
        target = OTHER_CHAT if seed.chat == "other" else chat
        clock.now = moment - _GONE_OFF_BEFORE if seed.gone_off else moment
        replies = await bot.handle(
            _message(case, target, f"/remind {seed.remind}", from_operator=True)
        )
        clock.now = moment
        if not any(r.text.startswith("⏰") for r in replies):
            raise ValueError(f"case {case.id}: seed {seed.remind!r} was not set: {replies}")
        if seed.gone_off:  # the watchdog finds it due at the case's moment
            await asyncio.wait_for(delivered.get(), _DELIVERY_WAIT)
    for number, said in enumerate(case.history):
        await bot.handle(
            _message(
                case,
                chat,
                said.text,
                sender_id=f"u-{said.name.lower()}",
                sender_name=said.name,
                mentions_bot=False,
                message_id=f"history-{number}",
            )
        )


async def _state(bot: Bot, chat: str) -> State:
    service = bot.reminders
    assert service is not None
    mine, _ = await service.list_for_chat(chat, limit=500)
    other, _ = await service.list_for_chat(OTHER_CHAT, limit=500)
    return State(
        reminders=tuple(mine),
        other=tuple((r.id, r.version) for r in other),
        timezone=await service.timezone_of(chat),
    )


async def run_eval(
    cases: list[Case],
    settings: EvalSettings,
    progress: Callable[[CaseResult], None] | None = None,
) -> list[CaseResult]:
    results = []
    for case in cases:
        result = await run_case(case, settings)
        if progress is not None:
            progress(result)
        results.append(result)
    return results
