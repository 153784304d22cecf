"""A plugin's store, typed and under `update`'s contract, on SQLite and PostgreSQL:
values read as a model (or refused, saying why), models stored as their JSON, `update`
with a plain or an async function, what it gets for a missing key, a raise that leaves
the value as it was, and concurrent updates from two processes that never lose one.

The typed calls here carry no isinstance and no cast: mypy --strict checks this file
(pyproject's `files`), so the overloads are what makes `poll.votes` type-check."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from pydantic import BaseModel

from groupmate.function_calls.plugins import PluginStore, PluginStores
from groupmate.storage import Database, ReminderService
from groupmate.storage.errors import PluginValueError
from groupmate.storage.plugin_data import PluginData
from tests.conftest import FakeClock


class Poll(BaseModel):
    question: str
    votes: dict[str, int] = {}


@dataclasses.dataclass(frozen=True, slots=True)
class Score:
    points: int


def store_of(reminders: ReminderService, clock: FakeClock) -> PluginStore:
    return PluginStores(PluginData(reminders.database, clock)).open("poll", "group-1")


async def test_values_read_as_a_model_or_refused_saying_why(
    reminders: ReminderService, clock: FakeClock
) -> None:
    store = store_of(reminders, clock)
    assert await store.get("poll", Poll) is None  # nothing stored: None, not a Poll
    fallback = Poll(question="none yet")
    assert await store.get("poll", Poll, fallback) is fallback
    await store.set("poll", Poll(question="Lunch?", votes={"pizza": 2}))
    assert await store.get("poll") == {"question": "Lunch?", "votes": {"pizza": 2}}  # JSON
    poll = await store.get("poll", Poll)
    assert poll is not None
    assert poll.votes["pizza"] == 2
    await store.set("score", Score(7))  # a dataclass is stored as its JSON too
    assert await store.get("score", Score) == Score(7)
    await store.set("old", {"title": "Lunch?"})  # written by an older version of the plugin
    with pytest.raises(PluginValueError) as refused:
        await store.get("old", Poll)
    message = str(refused.value)
    assert "'old'" in message and "chat group-1" in message and "Poll" in message
    assert "question: Field required" in message
    with pytest.raises(PluginValueError, match="does not fit int"):
        await store.get("poll", int)
    with pytest.raises(TypeError, match="not both"):
        await store.get("poll", 1, default=2)  # type: ignore[call-overload]


async def test_update_gets_a_model_or_the_default_for_a_missing_key(
    reminders: ReminderService, clock: FakeClock
) -> None:
    store = store_of(reminders, clock)
    seen: list[Poll | None] = []

    def vote(poll: Poll | None) -> Poll:
        seen.append(poll)
        current = poll or Poll(question="Lunch?")
        votes = {**current.votes, "pizza": current.votes.get("pizza", 0) + 1}
        return current.model_copy(update={"votes": votes})

    first = await store.update("poll", vote, Poll)
    assert seen == [None]  # a missing key: the function gets None
    assert first.votes == {"pizza": 1}
    second = await store.update("poll", vote, Poll)
    assert seen[1] == first and second.votes == {"pizza": 2}
    counted = await store.update("count", lambda n: n + 1, int, default=41)
    assert counted == 42  # with a default, the function gets it for a missing key

    def left_alone(poll: Poll | None) -> Poll | None:
        return poll

    assert await store.update("absent", left_alone, Poll) is None  # stores null
    assert await store.get("absent") is None and await store.keys("absent") == ["absent"]
    assert await store.get("absent", Poll) is None  # typed, null is no value
    assert await store.get("absent", Poll, Poll(question="?")) == Poll(question="?")
    assert (await store.update("absent", vote, Poll)).votes == {"pizza": 1}
    assert seen[-1] is None  # and the function gets the default for it
    untyped = await store.update("plain", lambda n: (n or 0) + 1)
    assert untyped == 1 and await store.get("plain") == 1


async def test_an_async_function_updates_too(reminders: ReminderService, clock: FakeClock) -> None:
    store = store_of(reminders, clock)

    async def vote(poll: Poll | None) -> Poll:
        await asyncio.sleep(0)  # a plugin may await (its own service, say) in between
        current = poll or Poll(question="Lunch?")
        return current.model_copy(update={"votes": {"pizza": current.votes.get("pizza", 0) + 1}})

    polls = await asyncio.gather(*(store.update("poll", vote, Poll) for _ in range(15)))
    assert sorted(poll.votes["pizza"] for poll in polls) == list(range(1, 16))
    stored = await store.get("poll", Poll)
    assert stored is not None and stored.votes == {"pizza": 15}

    async def untyped(n: int | None) -> int:
        return (n or 0) + 10

    assert await store.update("n", untyped) == 10


async def test_raising_inside_update_leaves_the_value_as_it_was(
    reminders: ReminderService, clock: FakeClock
) -> None:
    store = store_of(reminders, clock)
    await store.set("poll", Poll(question="Lunch?", votes={"pizza": 1}))

    def closed(poll: Poll | None) -> Poll:
        raise LookupError("the poll is closed")

    async def closed_async(poll: Poll | None) -> Poll:
        raise LookupError("the poll is closed")

    with pytest.raises(LookupError, match="closed"):
        await store.update("poll", closed, Poll)
    with pytest.raises(LookupError, match="closed"):
        await store.update("poll", closed_async, Poll)
    with pytest.raises(LookupError):
        await store.update("new", closed, Poll)  # a missing key stays missing
    with pytest.raises(PluginValueError, match="must be JSON"):
        await store.update("poll", lambda poll: {1, 2})  # not JSON: refused, not written
    with pytest.raises(TypeError, match="async def"):
        await store.update("poll", lambda poll: asyncio.sleep(0))  # an awaitable, undeclared
    assert await store.get("poll") == {"question": "Lunch?", "votes": {"pizza": 1}}
    assert await store.keys() == ["poll"]


async def test_updates_from_two_processes_never_lose_one_another(
    reminders: ReminderService, clock: FakeClock, database_url: str
) -> None:
    """Two `Database`s on one URL are two processes' connections: plain and async
    updates from both, interleaved, all count."""
    other = Database(database_url)
    try:
        here = store_of(reminders, clock)
        there = PluginStores(PluginData(other, clock)).open("poll", "group-1")

        async def add(n: int | None) -> int:
            await asyncio.sleep(0)
            return (n or 0) + 1

        updates = [store.update("n", lambda n: (n or 0) + 1) for store in (here, there) * 10]
        updates += [store.update("n", add) for store in (here, there) * 10]
        results = await asyncio.gather(*updates)
        assert sorted(results) == list(range(1, 41))
        assert await there.get("n") == 40
    finally:
        other.close()
