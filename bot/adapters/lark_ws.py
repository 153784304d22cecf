"""Lark's long connection (lark-oapi's `ws.Client`), in a thread of its own.

The library's client is built around a module-global event loop: `start()` blocks in
`loop.run_until_complete` and every task it makes goes on that loop, which is the one
current when `lark_oapi.ws.client` was first imported (possibly the bot's own, already
running loop: `start()` would then fail). So it runs in a dedicated thread, on a new loop
set as that module global (the library's only way to be given a loop: hence one long
connection per process), and each event is handed to the bot's loop with
`call_soon_threadsafe`; the client acknowledges the frame as soon as that returns.
The library reconnects by itself, after the jittered wait Lark's endpoint configures.

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
import threading
from collections.abc import Callable
from typing import Any

import lark_oapi as lark
import lark_oapi.ws.client as ws_client
from lark_oapi.ws.exception import ClientException

from bot.adapters.base import BotHost
from bot.adapters.lark_api import base_url
from bot.config import LarkSettings
from storage.chat_locks import ChatLocks
from storage.errors import StorageUnavailableError

log = logging.getLogger(__name__)

_JOIN_WAIT = 10.0  # seconds stop() waits for the connection's thread
_STANDBY_POLL = 2.0  # seconds between a standby process's asks for the lock
_LEASE_CHECK = 5.0  # seconds between the leader's checks that its lock still holds
_BACKOFF_MAX = 30.0
_running = threading.Lock()  # the library's global loop: one long connection per process


class LongConnection:
    """Receives the app's events over the long connection while it holds the lease."""

    def __init__(
        self,
        settings: LarkSettings,
        host: BotHost,
        loop: asyncio.AbstractEventLoop,
        accept: Callable[[dict[str, Any]], None],
    ) -> None:
        assert settings.app_id is not None and settings.app_secret is not None  # validated
        self._settings = settings
        self._host = host
        self._loop = loop  # the bot's
        self._accept = accept
        self._thread: threading.Thread | None = None
        self._thread_loop: asyncio.AbstractEventLoop | None = None
        self._client: Any = None
        self._leader: asyncio.Task[None] | None = None
        self._standby = False
        self._auth_failed = False
        self._reconnecting = False
        self._last_error: str | None = None

    async def start(self) -> None:
        self._leader = asyncio.create_task(self._lead(), name="lark-long-connection")

    async def _lead(self) -> None:
        reminders = self._host.reminders
        locks = ChatLocks(reminders.database.url) if reminders is not None else None
        if locks is None or not locks.enabled:
            await self._open()
            return
        self._standby = True
        backoff = 1.0
        try:
            while True:
                try:
                    async with locks.hold(self._lease, longest_wait=_STANDBY_POLL):
                        self._standby, backoff = False, 1.0
                        await self._open()
                        try:
                            # Held until stop(), or until the connection holding the
                            # lock dies: the server has freed it, another may lead now.
                            await locks.lost(_LEASE_CHECK)
                            self._last_error = "long connection: lost its database lock"
                            log.warning("lark: %s; standing by", self._last_error)
                        finally:  # closed before the lock frees: never two at once
                            await self._close_thread()
                except StorageUnavailableError as exc:
                    self._last_error = f"long connection: {exc}"
                    log.warning("lark: %s; retrying in %.0fs", self._last_error, backoff)
                self._standby = True
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, _BACKOFF_MAX)
        finally:
            await locks.aclose()

    @property
    def _lease(self) -> str:
        return f"lark-long-connection:{self._settings.app_id}"

    async def _open(self) -> None:
        # The library's loop is one per process: a connection of this process that is
        # still closing (a lease just lost) is waited for, never run beside. Polled: the
        # lock is freed by that connection's thread, and a cancelled acquire in a worker
        # thread could take it after all and never give it back.
        while not _running.acquire(blocking=False):  # noqa: ASYNC110
            await asyncio.sleep(0.1)
        self._thread = threading.Thread(target=self._run, name="lark-ws", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        ws_client.loop = loop  # see the module docstring: the library reads this global
        self._thread_loop = loop
        secret = self._settings.app_secret
        assert secret is not None
        handler = (
            lark.EventDispatcherHandler.builder("", "")
            .register_p2_im_message_receive_v1(self._on_message)
            .build()
        )
        client = ws_client.Client(
            self._settings.app_id,
            secret.get_secret_value(),
            # INFO would log the connection's URL, which carries its access ticket.
            log_level=lark.LogLevel.WARNING,
            event_handler=handler,
            domain=base_url(self._settings),
        )
        client.on_reconnecting = self._lost
        client.on_reconnected = self._back
        self._client = client
        try:
            client.start()
        except ClientException as exc:  # Lark refused the app id/secret: no retrying
            self._auth_failed = True
            self._last_error = f"long connection: refused ({exc.code})"
            log.error("lark: %s (check adapters.lark.app_id/app_secret)", self._last_error)
        except RuntimeError:
            pass  # stop() stopped the loop
        except Exception as exc:
            self._last_error = f"long connection: {type(exc).__name__}"
            log.error("lark: %s", self._last_error)
        finally:
            self._shut(loop, client)
            _running.release()

    def _shut(self, loop: asyncio.AbstractEventLoop, client: Any) -> None:
        """Cancel the client's tasks (its receive loop would reconnect), then close its
        WebSocket (lark-oapi 1.7.5 has no public stop: `_disconnect` is its own close)."""
        tasks = asyncio.all_tasks(loop)
        for task in tasks:
            task.cancel()
        with contextlib.suppress(Exception):
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            loop.run_until_complete(client._disconnect())
        loop.close()

    def _on_message(self, data: Any) -> None:
        """In the connection's thread: the event, as Lark sent it, to the bot's loop."""
        try:
            event = json.loads(lark.JSON.marshal(data))
            self._loop.call_soon_threadsafe(self._accept, event)
        except (ValueError, RuntimeError) as exc:  # RuntimeError: the bot's loop closed
            log.error("lark: a long-connection event was dropped: %s", type(exc).__name__)

    def _lost(self) -> None:
        self._reconnecting = True
        self._last_error = "long connection: lost; lark-oapi is reconnecting"
        log.warning("lark: %s", self._last_error)

    def _back(self) -> None:
        self._reconnecting = False
        self._last_error = None

    async def stop(self) -> None:
        if self._leader is not None:
            self._leader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._leader
        await self._close_thread()

    async def _close_thread(self) -> None:
        thread, loop = self._thread, self._thread_loop
        if thread is None:
            return
        while thread.is_alive() and loop is None:  # started a moment ago
            await asyncio.sleep(0.01)
            loop = self._thread_loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # closed already: it ended by itself
                loop.call_soon_threadsafe(loop.stop)
        await asyncio.to_thread(thread.join, _JOIN_WAIT)
        self._thread = None

    def status(self) -> dict[str, Any]:
        # lark-oapi keeps no public "connected" flag: its open WebSocket is `_conn`.
        connected = getattr(self._client, "_conn", None) is not None and not self._reconnecting
        return {
            "connected": connected,
            "standby": self._standby,
            "auth_failed": self._auth_failed,
            "last_error": self._last_error,
        }
