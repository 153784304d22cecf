"""OrderedWork: chats concurrently, each chat in order, and a checkpoint that never
passes a message still being answered."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable

from groupmate.bot.adapters.ordered import OrderedWork
from tests.conftest import eventually


class Recorder:
    """Handles items; an item named in `held` waits until released."""

    def __init__(self, *held: str) -> None:
        self.done: list[tuple[Hashable, str]] = []
        self.gates = {name: asyncio.Event() for name in held}

    async def handle(self, chat: Hashable, item: str) -> None:
        gate = self.gates.get(item)
        if gate is not None:
            await gate.wait()
        await asyncio.sleep(0)
        self.done.append((chat, item))


async def test_a_held_chat_holds_up_only_itself_and_keeps_its_order() -> None:
    recorder = Recorder("a1")
    work: OrderedWork[int, str] = OrderedWork(recorder.handle)
    work.add(1, [("a", ["a1"]), ("b", ["b1"])])
    work.add(2, [("a", ["a2"]), ("b", ["b2", "b3"])])
    await eventually(lambda: len(recorder.done) == 3)
    assert recorder.done == [("b", "b1"), ("b", "b2"), ("b", "b3")]
    assert await work.checkpoint() is None  # batch 1 is not finished
    assert work.unfinished() == 1
    recorder.gates["a1"].set()
    await eventually(lambda: len(recorder.done) == 5)
    assert recorder.done[3:] == [("a", "a1"), ("a", "a2")]  # a2 waited for a1
    assert await work.checkpoint() == 2
    assert await work.checkpoint() is None  # reported once
    assert work.unfinished() is None and len(work) == 0


async def test_the_checkpoint_stops_before_the_oldest_unfinished_batch() -> None:
    recorder = Recorder("b2")
    work: OrderedWork[int, str] = OrderedWork(recorder.handle)
    work.add(1, [("a", ["a1"])])
    work.add(2, [("b", ["b2"])])
    work.add(3, [("a", ["a3"])])
    work.add(4, [])  # nothing to answer
    await eventually(lambda: len(recorder.done) == 2)
    assert await work.checkpoint() == 1
    assert work.unfinished() == 2
    recorder.gates["b2"].set()
    assert await work.checkpoint(wait=True) == 4


async def test_cancelled_work_is_never_passed() -> None:
    recorder = Recorder("a1")
    work: OrderedWork[int, str] = OrderedWork(recorder.handle)
    work.add(1, [("a", ["a1"])])
    work.add(2, [("b", ["b1"])])
    await work.drain(0.05)
    await work.cancel()
    assert await work.checkpoint() is None
    assert work.unfinished() == 1
    assert recorder.done == [("b", "b1")]
