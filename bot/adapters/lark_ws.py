"""Lark's long connection (lark-oapi's `ws.Client`), in a thread of its own.

The library's client is built around a module-global event loop: every task it makes
goes on the loop `lark_oapi.ws.client.loop`, and its `start()` blocks that loop for good
and swallows a stop (it catches the loop's RuntimeError and reconnects). So it runs in a
dedicated thread, on a new loop set as that module global (the library's only way to be
given a loop: hence one long connection per process), and the adapter drives the
client's own coroutines there instead of `start()`: `_connect` (the endpoint request,
the handshake, and the receive loop that reads frames, acknowledges each and hands
events over) and `_ping_loop`. Its auto-reconnect is off: when the receive loop ends,
this reconnects (after the jitter and no longer than the interval Lark's endpoint
configures), tells "too many connections" from a refused app, and stopping is one
cancel of the coroutine that does all that. Each event is handed to the bot's loop with
`call_soon_threadsafe`; the client acknowledges the frame as soon as that returns,
whatever the event's type (Lark pushes again what it isn't acknowledged).

lark-oapi 1.7.5's endpoint request is blocking `requests` without a timeout: a stop
during it waits at most `_JOIN_WAIT`, then leaves that thread to end by itself (status
says so, and a new connection waits for it, at most `_OPEN_WAIT` at a time).

Lark pushes each event of the long connection to ONE of the app's connected clients, at
random: with several `groupmate serve` processes on one PostgreSQL database, only the one
holding the database lock "lark-long-connection:<app id>" connects; the others wait in
standby and the next takes over when it stops (its database session ends). On SQLite (one
process) there is nothing to share. Processes on different databases must not share an
app in this mode: use the webhook mode.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

import lark_oapi as lark
import lark_oapi.ws.client as ws_client
from lark_oapi.ws.const import AUTH_FAILED
from lark_oapi.ws.exception import ClientException

from groupmate.bot.adapters.base import BotHost
from groupmate.bot.adapters.lark_api import base_url
from groupmate.bot.adapters.lark_cards import CARD_EVENT
from groupmate.bot.adapters.lark_settings import LarkSettings
from groupmate.storage.chat_locks import ChatLocks
from groupmate.storage.errors import StorageUnavailableError
from groupmate.storage.outgoing import safe_error

log = logging.getLogger(__name__)

_JOIN_WAIT = 10.0  # seconds stop() waits for the connection's thread
_OPEN_WAIT = 30.0  # seconds a new connection waits for this process's previous one
_CLOSE_WAIT = 5.0  # seconds the WebSocket's closing handshake may take
_STANDBY_POLL = 2.0  # seconds between a standby process's asks for the lock
_LEASE_CHECK = 5.0  # seconds between the leader's checks that its lock still holds
_BACKOFF_MAX = 30.0
CARD_WAIT = 2.9  # seconds a card callback's answer is waited for (Lark waits 3)
_running = threading.Lock()  # the library's global loop: one long connection per process


class _Busy(Exception):
    """This process's previous long connection has not ended yet."""


class _Events:
    """The client's event handler: each event's JSON, whatever its type, to `deliver`.
    lark-oapi 1.7.5's receive loop calls `_do_without_validation(payload)` and answers
    the frame 200 when it returns (500, so Lark pushes again, when it raises: which its
    own dispatcher does for every type no handler is registered for), with what it
    returned as the frame's data: a card callback's answer (toast, card)."""

    def __init__(self, deliver: Callable[[bytes], dict[str, Any] | None]) -> None:
        self._do_without_validation = deliver


class LongConnection:
    """Receives the app's events over the long connection while it holds the lease."""

    def __init__(
        self,
        settings: LarkSettings,
        host: BotHost,
        loop: asyncio.AbstractEventLoop,
        accept: Callable[[dict[str, Any]], None],
        answer: Callable[[dict[str, Any]], Coroutine[Any, Any, dict[str, Any]]],
    ) -> None:
        assert settings.app_id is not None and settings.app_secret is not None  # validated
        self._settings = settings
        self._host = host
        self._loop = loop  # the bot's
        self._accept = accept
        self._answer = answer  # a card callback's: on the bot's loop, within Lark's 3 s
        self._thread: threading.Thread | None = None
        self._thread_loop: asyncio.AbstractEventLoop | None = None
        self._driver: asyncio.Task[None] | None = None  # on the thread's loop
        self._started = threading.Event()  # the thread's loop and driver are set
        self._ended = asyncio.Event()  # the thread ended (set on the bot's loop)
        self._leader: asyncio.Task[None] | None = None
        self._standby = False
        self._up = False
        self._came_up = False  # since the last open
        self._auth_failed = False
        self._last_error: str | None = None

    async def start(self) -> None:
        self._leader = asyncio.create_task(self._lead(), name="lark-long-connection")

    async def _lead(self) -> None:
        """Runs the connection while this process may (always on SQLite; while it holds
        the lease on PostgreSQL), and opens it again when it ends, unless Lark refused."""
        database = self._host.database
        locks = ChatLocks(database.url) if database is not None else None
        shared = locks is not None and locks.enabled
        self._standby = shared
        backoff = 1.0
        try:
            while True:
                try:
                    lease = locks.hold(self._lease, longest_wait=_STANDBY_POLL) if locks else None
                    async with lease or contextlib.nullcontext():
                        self._standby = False
                        await self._open()
                        try:
                            await self._until_ended_or_lost(locks if shared else None)
                        finally:  # closed before the lock frees: never two at once
                            await self._close_thread()
                        if self._auth_failed:
                            return  # waiting won't fix a refused app
                        if self._came_up:
                            backoff = 1.0
                except (StorageUnavailableError, _Busy) as exc:
                    self._last_error = f"long connection: {exc}"
                    log.warning("lark: %s; retrying in %.0fs", self._last_error, backoff)
                self._standby = shared
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, _BACKOFF_MAX)
        finally:
            if locks is not None:
                await locks.aclose()

    async def _until_ended_or_lost(self, locks: ChatLocks | None) -> None:
        waits: list[asyncio.Task[Any]] = [asyncio.create_task(self._ended.wait())]
        if locks is not None:
            # Held until stop(), or until the connection holding the lock dies: the
            # server has freed it, another may lead now.
            waits.append(asyncio.create_task(locks.lost(_LEASE_CHECK)))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in waits:
                task.cancel()
            await asyncio.gather(*waits, return_exceptions=True)
        if not self._ended.is_set():
            self._last_error = "long connection: lost its database lock"
            log.warning("lark: %s; standing by", self._last_error)
        elif not self._auth_failed:
            log.warning("lark: the long connection ended (%s); opening it again", self._last_error)

    @property
    def _lease(self) -> str:
        return f"lark-long-connection:{self._settings.app_id}"

    async def _open(self) -> None:
        # The library's loop is one per process: a connection of this process that is
        # still closing (a lease just lost) is waited for, never run beside. Polled: the
        # lock is freed by that connection's thread, and a cancelled acquire in a worker
        # thread could take it after all and never give it back.
        deadline = time.monotonic() + _OPEN_WAIT
        while not _running.acquire(blocking=False):
            if time.monotonic() > deadline:
                raise _Busy("the previous connection is still closing")
            await asyncio.sleep(0.1)
        self._ended.clear()
        self._thread_loop = self._driver = None
        self._started.clear()
        self._came_up = False
        self._thread = threading.Thread(target=self._run, name="lark-ws", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)  # the client makes a task on it when it is built
        ws_client.loop = loop  # see the module docstring: the library reads this global
        client: Any = None
        try:
            secret = self._settings.app_secret
            assert secret is not None
            client = ws_client.Client(
                self._settings.app_id,
                secret.get_secret_value(),
                log_level=lark.LogLevel.WARNING,
                event_handler=_Events(self._deliver),
                domain=base_url(self._settings),
                auto_reconnect=False,  # reconnected by _drive, which can be stopped
            )
            self._driver = loop.create_task(self._drive(client))
            self._thread_loop = loop  # last: _close_thread cancels the driver through it
            self._started.set()
            loop.run_until_complete(self._driver)
        except asyncio.CancelledError:
            pass  # stop()
        except Exception as exc:
            self._last_error = f"long connection: {type(exc).__name__}"
            log.error("lark: %s", self._last_error)
        finally:
            self._up = False
            self._started.set()
            _shut(loop, client)
            _running.release()
            with contextlib.suppress(RuntimeError):  # the bot's loop closed: nobody waits
                self._loop.call_soon_threadsafe(self._ended.set)

    async def _drive(self, client: Any) -> None:
        """Connects, and again whenever the connection ends, until cancelled or refused."""
        wait = 0.0
        pinging: asyncio.Task[None] | None = None
        try:
            while True:
                await asyncio.sleep(wait)
                try:
                    receiving = await _connect(client)
                except ClientException as exc:
                    if exc.code != AUTH_FAILED:  # the endpoint refused the app, or 403
                        self._auth_failed = True
                        self._last_error = f"long connection: refused ({exc.code})"
                        log.error("lark: %s (check app_id/app_secret)", self._last_error)
                        return
                    self._failed("too many connections for this app")  # 514: try later
                    wait = _next_wait(client, wait)
                    continue
                except Exception as exc:  # Lark busy, the network: try again
                    self._failed(safe_error(exc, code=_lark_code))
                    wait = _next_wait(client, wait)
                    continue
                self._up = self._came_up = True
                self._last_error = None
                log.info("lark: the long connection is up")
                if pinging is None:  # as lark-oapi 1.7.5's start(): once, after connecting
                    pinging = asyncio.create_task(client._ping_loop())
                with contextlib.suppress(Exception):  # what ended it: logged by the library
                    await receiving
                self._up = False
                self._failed("lost; reconnecting")
                # Lark's jitter (ReconnectNonce, lark-oapi 1.7.5 keeps it as
                # `_reconnect_nonce`): not every client of a restarted server at once.
                wait = random.random() * float(client._reconnect_nonce)
        finally:
            if pinging is not None:
                pinging.cancel()

    def _failed(self, why: str) -> None:
        self._last_error = f"long connection: {why}"
        log.warning("lark: %s", self._last_error)

    def _deliver(self, payload: bytes) -> dict[str, Any] | None:
        """In the connection's thread: the event, as Lark sent it, to the bot's loop; a
        card callback's answer, waited for here (the frame's answer carries it: this
        thread's loop waits with it, at most Lark's 3 s)."""
        try:
            event = json.loads(payload)
            if not isinstance(event, dict):
                raise ValueError("not an object")
            if (event.get("header") or {}).get("event_type") == CARD_EVENT:
                answer = asyncio.run_coroutine_threadsafe(self._answer(event), self._loop)
                return answer.result(timeout=CARD_WAIT)
            self._loop.call_soon_threadsafe(self._accept, event)
        except (ValueError, RuntimeError) as exc:  # RuntimeError: the bot's loop closed
            log.error("lark: a long-connection event was dropped: %s", type(exc).__name__)
        except TimeoutError:  # LarkPresses answers within ACT_WITHIN: the loop is stuck
            log.error("lark: a card press was not answered in time")
        return None

    async def stop(self) -> None:
        if self._leader is not None:
            self._leader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._leader
        await self._close_thread()

    async def _close_thread(self) -> None:
        thread = self._thread
        if thread is None:
            return
        await asyncio.to_thread(self._started.wait, _JOIN_WAIT)  # started a moment ago?
        loop, driver = self._thread_loop, self._driver
        if loop is not None and driver is not None:
            with contextlib.suppress(RuntimeError):  # closed already: it ended by itself
                loop.call_soon_threadsafe(driver.cancel)
        await asyncio.to_thread(thread.join, _JOIN_WAIT)
        if thread.is_alive():  # blocked in the library's endpoint request: see above
            self._last_error = "long connection: still closing"
            log.warning("lark: %s after %.0fs", self._last_error, _JOIN_WAIT)
            return  # kept: status shows it, and _open waits for it
        self._thread = None

    def status(self) -> dict[str, Any]:
        return {
            "connected": self._up,
            "standby": self._standby,
            "auth_failed": self._auth_failed,
            "last_error": self._last_error,
        }


async def _connect(client: Any) -> asyncio.Task[None]:
    """lark-oapi's connect (endpoint, handshake, and its receive loop started as a task
    on the module's loop): that task, which ends when the connection does (1.7.5)."""
    before = asyncio.all_tasks()
    await client._connect()
    started = [
        task
        for task in asyncio.all_tasks() - before
        if getattr(task.get_coro(), "__name__", "") == "_receive_message_loop"
    ]
    if len(started) != 1:
        await client._disconnect()  # its _connect would wait for ever on a second call
        raise RuntimeError("lark-oapi's connect started no receive loop")
    return started[0]


def _next_wait(client: Any, last: float) -> float:
    """Seconds before the next connect try after one failed: doubling from 1 s up to
    Lark's interval (ReconnectInterval: `_reconnect_interval` in lark-oapi 1.7.5)."""
    return min(max(last * 2, 1.0), max(float(client._reconnect_interval), 1.0))


def _lark_code(exc: BaseException) -> str | None:
    """Lark's code, for `safe_error`: the error's text may carry the URL and its ticket."""
    code = getattr(exc, "code", None)
    return f"{type(exc).__name__} ({code})" if isinstance(code, int) else None


def _shut(loop: asyncio.AbstractEventLoop, client: Any) -> None:
    """Cancel the client's tasks, then close its WebSocket (lark-oapi 1.7.5 has no public
    stop: `_disconnect` is its own close)."""
    tasks = asyncio.all_tasks(loop)
    for task in tasks:
        task.cancel()
    with contextlib.suppress(Exception):
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
        if client is not None:
            loop.run_until_complete(asyncio.wait_for(client._disconnect(), _CLOSE_WAIT))
    loop.close()
