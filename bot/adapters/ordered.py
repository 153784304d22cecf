"""Work answered concurrently across chats, in order within each chat, with a
checkpoint that only moves past work that is finished.

A platform that redelivers from a position (a Matrix since-token, a Telegram update
offset) must not save a position past a message still being answered: a crash would
lose it. `OrderedWork` starts each batch's work at once, so a slow answer in one chat
holds up neither other chats nor the next fetch, and says which position is safe.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import Generic, TypeVar

Position = TypeVar("Position")
Item = TypeVar("Item")


class OrderedWork(Generic[Position, Item]):
    """Runs `handle(chat, item)` for each item; one chat's items one after another."""

    def __init__(self, handle: Callable[[Hashable, Item], Awaitable[None]]) -> None:
        self._handle = handle
        self._batches: deque[tuple[Position, list[asyncio.Task[None]]]] = deque()
        self._tails: dict[Hashable, asyncio.Task[None]] = {}  # each chat's newest work
        self._passed: Position | None = None  # done, not yet returned by checkpoint()

    def __len__(self) -> int:
        """Batches started and not yet passed by `checkpoint`."""
        return len(self._batches)

    def add(self, position: Position, work: Sequence[tuple[Hashable, Sequence[Item]]]) -> None:
        """Start a batch: the items of each chat, after that chat's earlier ones. Once the
        batch and all before it are done, `position` is safe to save."""
        self._prune()
        self._batches.append((position, [self._queue(chat, items) for chat, items in work]))

    async def checkpoint(self, *, wait: bool = False) -> Position | None:
        """The newest position whose batch, and every earlier one, is done, if that moved
        since the last call; with `wait`, the oldest batch is waited for first."""
        if wait and self._batches and self._batches[0][1]:
            await asyncio.wait(self._batches[0][1])
        self._prune()
        position, self._passed = self._passed, None
        return position

    def _prune(self) -> None:
        while self._batches and all(_finished(task) for task in self._batches[0][1]):
            self._passed = self._batches.popleft()[0]

    def unfinished(self) -> Position | None:
        """The position of the oldest batch not done yet, if any."""
        for position, tasks in self._batches:
            if not all(_finished(task) for task in tasks):
                return position
        return None

    async def wait_oldest(self, grace: float) -> None:
        """Wait up to `grace` seconds for the oldest unfinished batch."""
        for _, tasks in self._batches:
            running = [task for task in tasks if not task.done()]
            if running:
                await asyncio.wait(running, timeout=grace)
                return

    async def drain(self, grace: float) -> None:
        """Let work in flight finish, for up to `grace` seconds."""
        running = list(self._tails.values())
        if running:
            await asyncio.wait(running, timeout=grace)

    async def cancel(self) -> None:
        """Stop the work still running; its batches are never passed by `checkpoint`."""
        running = list(self._tails.values())
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)

    def _queue(self, chat: Hashable, items: Sequence[Item]) -> asyncio.Task[None]:
        task = asyncio.create_task(self._in_order(chat, items, self._tails.get(chat)))
        self._tails[chat] = task

        def forget(done: asyncio.Task[None]) -> None:
            if self._tails.get(chat) is done:
                del self._tails[chat]  # idle chats keep no task

        task.add_done_callback(forget)
        return task

    async def _in_order(
        self, chat: Hashable, items: Sequence[Item], previous: asyncio.Task[None] | None
    ) -> None:
        if previous is not None:
            await asyncio.wait([previous])
        for item in items:
            await self._handle(chat, item)


def _finished(task: asyncio.Task[None]) -> bool:
    """Done and not cut short: a cancelled answer is replayed after a restart."""
    return task.done() and not task.cancelled()
