"""`TestBot`: the real bot with plugins, a scripted model, a temporary database and a
clock the test moves, and no chat platform or network beyond 127.0.0.1."""

from __future__ import annotations

import asyncio
import itertools
import os
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from datetime import datetime, timedelta
from pathlib import Path
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self

from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.bot.messages import IncomingMessage
from groupmate.storage import OutgoingMessage, ReminderScheduler
from groupmate.storage.repository import due_before
from groupmate.testing.clock import FakeClock
from groupmate.testing.model import ScriptedModel
from groupmate.testing.stub_llm import StubLLM

if TYPE_CHECKING:
    from groupmate.function_calls.plugins import PluginStatus, PluginStore

PluginSpec = str | ModuleType | Mapping[str, Any]
"""A plugin to enable, as in config.yaml's `plugins:` list: a module or entry-point
name, a mapping (`{"module": ..., "settings": {...}, "scope": ...}`), or an imported
module (a test module that defines its tools itself)."""

# Many messages in a few milliseconds are a test, not a flood.
_NO_RATE_LIMITS = {
    "user_per_minute": 100_000,
    "chat_per_minute": 100_000,
    "burst": 100_000,
    "command_per_minute": 100_000,
    "command_burst": 100_000,
}
# Deliveries one `advance` may make; more means a reminder firing every few seconds
# over days, which is better advanced in steps.
_MAX_DELIVERIES_PER_ADVANCE = 10_000
_MICROSECOND = timedelta(microseconds=1)


class TestBot:
    """The real `bot.app.Bot`, started for one test::

        async with TestBot(plugins=["groupmate_weather"], tmp_path=tmp_path) as bot:
            bot.model.calls("weather", {"city": "Berlin"})
            assert await bot.say("weather in Berlin?") == ["Berlin: sunny"]

    It runs on a SQLite file in `tmp_path` (a temporary folder by default), the scripted
    model (`bot.model`: its own server unless one is given), the clock `bot.clock`
    (`advance` moves it and delivers what fell due) and an outbox: what the bot sends on
    its own, reminders say, is in `bot.sent`.

    - `plugins`: what config.yaml's `plugins:` would list (see `PluginSpec`).
    - `config`: merged over the test defaults section by section, as config.yaml would
      be written (`{"bot": {"timezone": "Europe/Berlin"}}` changes only that setting).
    - `clock`: a `FakeClock` to start from another moment (default: `DEFAULT_START`).
    - `model`: a `ScriptedModel` to share (the `groupmate_bot` fixture gives each bot of
      a test the test's `groupmate_model`).

    docs/developers/test-kit.md has an example of each thing a test does with it.
    """

    __test__ = False  # not a test class, whatever its name

    def __init__(
        self,
        *,
        plugins: Sequence[PluginSpec] = (),
        config: Mapping[str, Any] | None = None,
        tmp_path: str | os.PathLike[str] | None = None,
        clock: FakeClock | None = None,
        model: ScriptedModel | None = None,
    ) -> None:
        self.clock = clock if clock is not None else FakeClock()
        self._plugins = [_plugin_entry(plugin) for plugin in plugins]
        self._overrides = dict(config or {})
        self._tmp_path = Path(tmp_path) if tmp_path is not None else None
        self._model = model
        self._app: Bot | None = None
        self._stack = AsyncExitStack()
        self.outbox: list[OutgoingMessage] = []
        """Every message the bot sent on its own (not replies), whole: chat, text, ids."""
        # Unique across bots on one database: a restarted bot must not take a new
        # message for one it already answered (the chat log is idempotent by id).
        self._message_ids = itertools.count(1)
        self._run = uuid.uuid4().hex[:8]

    # --- lifecycle -----------------------------------------------------------------

    async def __aenter__(self) -> Self:
        try:
            await self._start()
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop the bot (and the model server, if it started its own)."""
        self._app = None
        await self._stack.aclose()

    async def _start(self) -> None:
        if self._tmp_path is None:
            folder = self._stack.enter_context(tempfile.TemporaryDirectory(prefix="groupmate-"))
            self._tmp_path = Path(folder)
        if self._model is None:
            server = StubLLM()
            await asyncio.to_thread(server.start)
            self._stack.push_async_callback(asyncio.to_thread, server.stop)
            self._model = ScriptedModel(server)
        self._tmp_path.mkdir(parents=True, exist_ok=True)
        config = parse_config(self.config_data(), base=self._tmp_path)
        app = Bot(config, clock=self.clock)
        app.on_outgoing(self._send)
        await self._stack.enter_async_context(app)
        self._app = app

    def config_data(self) -> dict[str, Any]:
        """The configuration the bot starts with, as config.yaml would say it."""
        if self._tmp_path is None or self._model is None:
            raise RuntimeError("the configuration is made when the bot starts")
        defaults: dict[str, Any] = {
            "bot": {"rate_limits": _NO_RATE_LIMITS},
            "storage": {"url": f"sqlite:///{self._tmp_path / 'groupmate.db'}"},
            "llm": {
                "base_url": self._model.base_url,
                "api_key": "sk-groupmate-test",
                "model": "groupmate-test-model",
                "tool_mode": "native",
                "context_tokens": 8192,
                "warm_up": False,
            },
            "adapters": {"console": {"enabled": False}},
        }
        data = _merged(defaults, self._overrides)
        if self._plugins:
            data["plugins"] = [*data.get("plugins", []), *self._plugins]
        return data

    # --- the parts -------------------------------------------------------------------

    @property
    def app(self) -> Bot:
        """The running `bot.app.Bot`."""
        if self._app is None:
            raise RuntimeError("use the test bot inside `async with` (or groupmate_bot)")
        return self._app

    @property
    def model(self) -> ScriptedModel:
        """The scripted model: `bot.model.calls(...)`, `.answers(...)`, `.requests`."""
        if self._model is None:
            raise RuntimeError("the model server starts with the bot: use it inside `async with`")
        return self._model

    @property
    def plugins(self) -> list[PluginStatus]:
        """Each configured plugin's status, as the bot reports it (loaded or failed, why)."""
        return list(self.app.plugins)

    def store(self, plugin: str, chat: str | None = None) -> PluginStore:
        """A plugin's store: a chat's (`chat`, the chat id `say` used), or with no chat
        the plugin-wide one (`store.global_` in the handler)."""
        return self.app.plugin_store(plugin, chat)

    @property
    def sent(self) -> list[str]:
        """The texts of what the bot sent on its own (reminders, notices), oldest first.
        Replies to a message are what `say` returns."""
        return [message.text for message in self.outbox]

    # --- acting ------------------------------------------------------------------------

    async def say(
        self,
        text: str,
        *,
        sender: str = "alice",
        chat: str | None = None,
        admin: bool = False,
        private: bool = False,
        mention: bool = True,
        sender_name: str | None = None,
    ) -> list[str]:
        """Send a chat message to the bot; the texts of its replies.

        - `sender`: the sender's id ("alice"); its name is the id capitalised ("Alice")
          unless `sender_name` is given.
        - `chat`: the chat's id; by default "group-1", or "private-<sender>" with
          `private`.
        - `admin`: the platform says the sender administers the chat (what admin-only
          tools and settings ask).
        - `private`: a one-to-one chat with the bot (every message is meant for it).
        - `mention`: in a group the message mentions the bot unless this is False: a
          message the bot only reads (no reply, `[]`), but it is in the chat's history.

        Replies are returned in order; what the bot sends later on its own (a reminder)
        is in `sent`.
        """
        if chat is None:
            chat = f"private-{sender}" if private else "group-1"
        message = IncomingMessage(
            chat_id=chat,
            chat_type="private" if private else "group",
            sender_id=sender,
            sender_name=sender_name or sender[:1].upper() + sender[1:],
            text=text,
            mentions_bot=mention and not private,
            message_id=f"test-{self._run}-{next(self._message_ids)}",
            timestamp=self.clock.now,
            sender_is_admin=admin,
        )
        return [reply.text for reply in await self.app.handle(message)]

    async def advance(self, delta: timedelta) -> list[str]:
        """Move the clock `delta` forward and deliver every reminder due meanwhile, each
        at its own moment (a daily one three times in three days), as the running bot
        would; returns the texts sent meanwhile. Delivery is done when this returns."""
        if delta < timedelta(0):
            raise ValueError("the clock only moves forward")
        scheduler = self._scheduler()
        target = self.clock.now + delta
        before = len(self.outbox)
        stuck: datetime | None = None  # due, but not claimed there: look past it
        for _ in range(_MAX_DELIVERIES_PER_ADVANCE):
            due = await self._next_due(until=target, after=stuck)
            if due is None:
                break
            if due > self.clock.now:
                self.clock.set(due)
            stats = await scheduler.run_due()
            stuck = None if stats.claimed or stats.reclaimed else due
        else:
            raise RuntimeError(
                f"more than {_MAX_DELIVERIES_PER_ADVANCE} deliveries in one advance: "
                "advance in smaller steps"
            )
        self.clock.set(target)
        await scheduler.run_due()
        return [message.text for message in self.outbox[before:]]

    # --- internals -----------------------------------------------------------------------

    async def _send(self, message: OutgoingMessage) -> str:
        """The chat platform's side: keep the message, answer with its id."""
        self.outbox.append(message)
        return f"sent-{len(self.outbox)}"

    def _scheduler(self) -> ReminderScheduler:
        reminders = self.app.reminders
        if reminders is None or reminders.scheduler is None:
            raise RuntimeError("this bot delivers no reminders")
        return reminders.scheduler

    async def _next_due(self, *, until: datetime, after: datetime | None) -> datetime | None:
        """When the next active reminder is due, up to `until` (inclusive), after `after`."""
        reminders = self.app.reminders
        assert reminders is not None
        rows = await reminders.database.read(lambda s: due_before(s, until + _MICROSECOND))
        return next((at for _, at in rows if after is None or at > after), None)


class BotFactory(Protocol):
    """The `groupmate_bot` fixture: `bot = await groupmate_bot(plugins=[...])` starts a
    `TestBot` (closed when the test ends)."""

    async def __call__(
        self,
        *,
        plugins: Sequence[PluginSpec] = (),
        config: Mapping[str, Any] | None = None,
        clock: FakeClock | None = None,
    ) -> TestBot: ...


def _plugin_entry(plugin: PluginSpec) -> str | dict[str, Any]:
    if isinstance(plugin, ModuleType):
        return plugin.__name__
    if isinstance(plugin, str):
        return plugin
    return dict(plugin)


def _merged(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """`override` over `base`, mappings merged key by key, anything else replaced."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = value
    return merged
