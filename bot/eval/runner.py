"""Running eval cases: each in a fresh bot on a throwaway SQLite file, at the case's clock
(or the real one, for a case without `now`), through `Bot.handle` (the real router, tools
and LLM loop) or through `POST /v1/messages` of the HTTP API, served on 127.0.0.1 as
`groupmate serve` serves it."""

from __future__ import annotations

import asyncio
import contextlib
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

from groupmate.bot.adapters.http import create_app
from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.bot.eval.cases import Case, SearchHit
from groupmate.bot.eval.judge import State, Verdict, judge
from groupmate.bot.eval.relative import Moment
from groupmate.bot.messages import IncomingMessage
from groupmate.function_calls import MessageContext, TurnResult
from groupmate.function_calls.search import SearchAnswer, Source
from groupmate.function_calls.usage import Usage
from groupmate.storage import OutgoingMessage, utc_now

CHAT = {"group": "eval:group", "private": "eval:private"}
OTHER_CHAT = "eval:other"
_REPAIRS = ("invalid", "malformed", "unknown", "hidden")
Via = Literal["handle", "http"]
# "tuned": the eval's own settings below go into llm. "minimal": a new user's config, only
# llm.base_url, model and tool_mode (`mode`), everything else LLMSettings' defaults, and
# every sender an ordinary member of the group.
Profile = Literal["tuned", "minimal"]
_WARMING = "warming"


@dataclass(frozen=True, slots=True)
class EvalSettings:
    base_url: str
    model: str
    mode: str = "native"  # native | prompt
    prompt_format: str = "hermes"  # hermes | json (prompt mode)
    tool_schema: str = "auto"  # auto | full | compact
    # 0 makes a run repeatable; None leaves the server's default (0.8 in llama-cpp-python).
    temperature: float | None = 0.0
    # llm.context_tokens: what the server was started with; None asks the server.
    context_tokens: int | None = 8192
    max_output_tokens: int = 1024  # llm.max_output_tokens
    api_key: str | None = None
    request_timeout: float = 600.0
    # How the case's message reaches the bot: `Bot.handle`, or POST /v1/messages.
    via: Via = "handle"
    profile: Profile = "tuned"
    # reminders.fast_path of a tuned run: off, the model is what is measured (as for the
    # docs/design/evaluation.md's figures); on, a request the grammar reads whole never reaches it.
    fast_path: bool = False

    def label(self) -> str:
        """ "native", "prompt/hermes", ...; a schema view other than the mode's own is named."""
        label = self.mode if self.mode == "native" else f"prompt/{self.prompt_format}"
        if self.profile == "minimal":
            label = f"minimal {self.mode}"  # the format and view are the defaults'
        elif self.tool_schema != "auto":
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
    if settings.profile == "minimal":
        # A new user's group: nobody there administers the bot.
        case = case.model_copy(update={"sender": case.sender.model_copy(update={"admin": False})})
    with tempfile.TemporaryDirectory(prefix="groupmate-eval-") as folder:
        token = secrets.token_urlsafe(16)
        config = parse_config(eval_config(case, settings, Path(folder), token), environ={})
        search = CannedSearch(case.search) if case.search else None
        # No `now`: the bot's own clock, the real one, as for a user's message.
        clock = None if case.real_clock else EvalClock(case.local_now())
        bot = Bot(config, clock=clock or utc_now, search=search)
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
            await _warmed(bot, settings.request_timeout)
            begun, started = utc_now(), time.monotonic()
            if settings.via == "http":
                async with _http_api(bot, token, settings.request_timeout) as client:
                    begun, started = utc_now(), time.monotonic()
                    said = await _post(client, message)
            else:
                said = [r.text for r in await bot.handle(message)]
            latency = time.monotonic() - started
            # The bot read its clock somewhere in between (a fixed clock stands still).
            moment = Moment.at(clock.now) if clock else Moment(begun, utc_now())
            after = await _state(bot, chat)
    reply = "\n".join(said)
    calls = [call for turn in turns for call in turn.calls]
    errors = [turn.error for turn in turns if turn.error and not turn.calls]
    tools = [
        call.name
        for call in calls
        if not call.duplicate and call.outcome in ("ok", "refused", "failed", "timeout")
    ]
    verdict = judge(case, before, after, reply, tools, errors[0] if errors else None, moment)
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


async def _warmed(bot: Bot, within: float) -> None:
    """Wait out the bot's start-up warm-up of the server's prompt cache (llm.warm_up), so
    that a case measures a message in a running bot; bench/first_message.py measures the
    first one after a restart. A warm-up longer than `within` is not waited out."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(within):
            # The bot shows a status (what /healthz reports), not an event to wait on.
            while bot.llm_status == _WARMING:  # noqa: ASYNC110
                await asyncio.sleep(0.05)


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


def eval_config(case: Case, settings: EvalSettings, folder: Path, token: str) -> dict[str, Any]:
    """The bot's config for one case, as a parsed YAML document."""
    llm: dict[str, Any] = {
        "base_url": settings.base_url,
        "model": settings.model,
        "tool_mode": settings.mode,
    }
    if settings.api_key:  # a hosted endpoint's; a local server takes none
        llm["api_key"] = settings.api_key
    if settings.profile == "minimal":
        # What a new user writes; the harness keeps only its storage, the group's zone
        # and the token of its HTTP client.
        return {
            "storage": {"url": f"sqlite:///{folder / 'eval.db'}"},
            "bot": {"timezone": case.zone},
            "llm": llm,
            "adapters": {"webhook": {"token": token}},
            "logging": {"level": "WARNING"},
            # Harness, not a setting a user meets: at a case's standing clock only the
            # watchdog finds a seed due that "went off" before the message.
            "reminders": {"watchdog_interval": "100ms"},
        }
    llm |= {
        "prompt_format": settings.prompt_format,
        "tool_schema": settings.tool_schema,
        "temperature": settings.temperature,
        "context_tokens": settings.context_tokens,
        "max_output_tokens": settings.max_output_tokens,
        "request_timeout": settings.request_timeout,
        # The tuned runs measure as they did before the warm-up existed: one request a case.
        "warm_up": False,
    }
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
        "reminders": {"watchdog_interval": "100ms", "fast_path": settings.fast_path},
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
    clock: EvalClock | None,
    delivered: asyncio.Queue[OutgoingMessage],
) -> None:
    """The case's reminders (set with /remind, as the operator) and logged history. Only
    a fixed clock can go back for a seed that went off (cases.py holds the real one to it)."""
    for seed in case.reminders:
        target = OTHER_CHAT if seed.chat == "other" else chat
        if clock is not None:
            moment = clock.now
            clock.now = moment - _GONE_OFF_BEFORE if seed.gone_off else moment
        replies = await bot.handle(
            _message(case, target, f"/remind {seed.remind}", from_operator=True)
        )
        if clock is not None:
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
