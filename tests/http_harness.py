"""The bot with its HTTP API on real uvicorn (127.0.0.1, a free port), in the test's loop."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from starlette.types import ASGIApp

from groupmate.bot.adapters import configured
from groupmate.bot.adapters.http import create_app
from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.testing.stub_llm import StubLLM
from tests import bots

TOKEN = "t0k-secret"
_ids = itertools.count(1)


@dataclass(frozen=True, slots=True)
class Api:
    client: httpx.AsyncClient
    bot: Bot
    base_url: str
    app: ASGIApp  # what uvicorn serves (create_app's)

    async def say(self, text: str, **fields: Any) -> list[dict[str, Any]]:
        body = {
            "chat_id": "g1",
            "chat_type": "group",
            "sender_id": "u-alice",
            "sender_name": "Alice",
            "text": text,
            "message_id": f"m{next(_ids)}",
        }
        body.update(fields)
        response = await self.client.post("/v1/messages", json=body)
        assert response.status_code == 200, response.text
        replies: list[dict[str, Any]] = response.json()["replies"]
        return replies


def _merge(base: dict[str, Any], overrides: dict[str, Any]) -> None:
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value


def make_config(tmp_path: Path, **sections: Any) -> dict[str, Any]:
    """The test config; sections are merged in key by key (`token: None` removes it)."""
    config: dict[str, Any] = {
        "bot": {
            "name": "groupmate",
            "timezone": "Europe/Berlin",
            "admins": ["u-admin"],
            "rate_limits": {"user_per_minute": 1000, "burst": 100},
        },
        "storage": {"url": f"sqlite:///{tmp_path / 'bot.db'}"},
        "adapters": {"webhook": {"token": TOKEN, "max_body_bytes": 4096}},
        "reminders": {"watchdog_interval": "200ms", "retry_base": "50ms", "retry_max": "100ms"},
    }
    _merge(config, sections)
    return config


def llm_section(stub: StubLLM) -> dict[str, Any]:
    return {"base_url": stub.base_url, "api_key": "sk-test", "tool_mode": "native"}


class Servers:
    """Starts bots with their HTTP API; `aclose` stops them all."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self._running: list[tuple[Bot, uvicorn.Server, asyncio.Task[None], httpx.AsyncClient]] = []

    async def start(
        self,
        clock: Callable[[], datetime] | None = None,
        *,
        host: str = "127.0.0.1",
        **sections: Any,
    ) -> Api:
        """A bot on the given config overrides, served on `host`; its client (on
        127.0.0.1) sends the token."""
        config = parse_config(make_config(self.tmp_path, **sections), environ={})
        bot = Bot(config, clock=clock) if clock else Bot(config)
        for adapter in configured(config):  # as `groupmate serve` does
            bot.add_adapter(adapter)
        await bot.__aenter__()
        app = create_app(bot)
        server = uvicorn.Server(
            uvicorn.Config(
                app,
                host=host,
                port=0,
                lifespan="on",
                log_level="warning",
                timeout_graceful_shutdown=3,  # open event streams end then
            )
        )
        task = asyncio.create_task(server.serve())
        from tests.conftest import eventually  # conftest imports this module

        with contextlib.suppress(AssertionError):
            await eventually(lambda: server.started or task.done(), within=10, every=0.01)
        if not server.started:
            await bot.__aexit__(None, None, None)
            raise RuntimeError("the HTTP API did not start")
        port = server.servers[0].sockets[0].getsockname()[1]
        base_url = f"http://127.0.0.1:{port}"
        client = httpx.AsyncClient(base_url=base_url, headers={"Authorization": f"Bearer {TOKEN}"})
        self._running.append((bot, server, task, client))
        return Api(client, bot, base_url, app)

    async def aclose(self) -> None:
        for bot, server, task, client in self._running:
            await client.aclose()
            server.should_exit = True
            await task
            await bot.__aexit__(None, None, None)
        self._running.clear()


async def delivered_ids(bot: Bot, *, at_least: int = 1, within: float = 10.0) -> list[str]:
    """The platform message ids the reminder engine recorded for its deliveries, oldest
    first, once there are `at_least`: the outcome (with the id the adapter's send
    returned) is written after the send, so a reply to a reminder waits for it."""
    from sqlalchemy import select

    from groupmate.storage.models import Delivery
    from tests.conftest import eventually

    assert bot.reminders is not None
    database = bot.reminders.database
    query = select(Delivery.message_id).where(Delivery.message_id.is_not(None))
    found: list[str] = []

    async def recorded() -> bool:
        rows = await database.read(
            lambda session: list(session.scalars(query.order_by(Delivery.id)))
        )
        found[:] = [str(row) for row in rows]
        return len(found) >= at_least

    await eventually(recorded, within=within)
    return found


async def make_due(bot: Bot, *, ago: timedelta = timedelta(seconds=1)) -> None:
    """Every reminder of the running bot falls due `ago` before now: with the real clock,
    the way to make one go off at once (the watchdog finds it within 200 ms)."""
    from sqlalchemy import update

    from groupmate.storage.models import Reminder

    assert bot.reminders is not None
    due = datetime.now(UTC) - ago
    await bot.reminders.database.write(
        lambda session: session.execute(update(Reminder).values(next_fire_at=due))
    )


def fell_due_while_down(servers: Servers, *, ago: timedelta = timedelta(minutes=5)) -> None:
    """With the bots stopped: every reminder in their SQLite file fell due `ago` before
    now, while nothing ran (so it goes off late, with the note, when one starts)."""
    from sqlalchemy import create_engine, update

    from groupmate.storage.models import Reminder

    engine = create_engine(f"sqlite:///{servers.tmp_path / 'bot.db'}")
    with engine.begin() as connection:
        connection.execute(update(Reminder).values(next_fire_at=datetime.now(UTC) - ago))
    engine.dispose()


def echo_bot(
    database_url: str,
    stub: StubLLM,
    clock: Callable[[], datetime] | None = None,
    **bot_section: Any,
) -> Bot:
    """A Bot (not started) whose model answers "echo: <the message>", for tests of what
    reaches the model and how often; rate limits out of the way."""
    from groupmate.testing.stub_llm import latest_message, text

    stub.fallback = lambda body: text(f"echo: {latest_message(body)}")
    bot = {"rate_limits": {"user_per_minute": 1000, "burst": 100}, **bot_section}
    return bots.make_bot(database_url, stub, llm={"warm_up": False}, bot=bot, clock=clock)
