"""A plugin's store on SQLite and PostgreSQL: JSON values per plugin and chat, global
ones, keys by prefix, read-change-write updates that never lose one another, limits,
and a chat's deletion taking its values (and nothing else) with it."""

from __future__ import annotations

import asyncio

import pytest

from groupmate.function_calls.plugins import PluginStores
from groupmate.storage import ReminderService
from groupmate.storage.errors import PluginValueError
from groupmate.storage.plugin_data import MAX_VALUE_BYTES, PluginData
from tests.conftest import FakeClock


def stores(reminders: ReminderService, clock: FakeClock) -> PluginStores:
    return PluginStores(PluginData(reminders.database, clock))


async def test_values_are_the_plugins_and_the_chats(
    reminders: ReminderService, clock: FakeClock
) -> None:
    opened = stores(reminders, clock)
    dice = opened.open("dice", "chat-a")
    await dice.set("last", {"by": "Ana", "rolls": [6, 6], "loud": True, "note": None})
    await dice.set("none", None)
    assert await dice.get("last") == {"by": "Ana", "rolls": [6, 6], "loud": True, "note": None}
    assert await dice.get("none", "absent") is None  # stored null is not absent
    assert await dice.get("missing", "absent") == "absent"
    assert await opened.open("dice", "chat-b").get("last") is None  # another chat's
    assert await opened.open("coin", "chat-a").get("last") is None  # another plugin's
    assert await dice.global_.get("last") is None  # the global values are apart
    await dice.global_.set("last", 1)
    assert await opened.open("dice", None).get("last") == 1
    await dice.set("last", "replaced")
    assert await dice.get("last") == "replaced"
    for key in ("a/2", "a/1", "a%", "b"):
        await dice.set(key, key)
    assert await dice.keys("a") == ["a%", "a/1", "a/2"]
    assert await dice.keys("a%") == ["a%"]  # no LIKE: % means itself
    assert await dice.delete("a/1") is True
    assert await dice.delete("a/1") is False
    assert await dice.keys("a/") == ["a/2"]


async def test_concurrent_updates_never_lose_one_another(
    reminders: ReminderService, clock: FakeClock
) -> None:
    store = stores(reminders, clock).open("counter", "chat-a")
    results = await asyncio.gather(*(store.update("n", lambda n: (n or 0) + 1) for _ in range(40)))
    assert sorted(results) == list(range(1, 41))
    assert await store.get("n") == 40
    assert await store.update("fresh", lambda n: n + 5, default=10) == 15


async def test_bad_keys_and_values_are_refused_and_nothing_is_written(
    reminders: ReminderService, clock: FakeClock
) -> None:
    store = stores(reminders, clock).open("dice", "chat-a")
    with pytest.raises(PluginValueError, match="must be JSON"):
        await store.set("k", {1, 2})
    with pytest.raises(PluginValueError, match="must be JSON"):
        await store.set("k", float("nan"))
    with pytest.raises(PluginValueError, match="at most"):
        await store.set("k", "x" * MAX_VALUE_BYTES)
    with pytest.raises(PluginValueError, match="1 to 200"):
        await store.set("", 1)
    with pytest.raises(PluginValueError, match="1 to 200"):
        await store.get("k" * 201)
    with pytest.raises(PluginValueError, match="must be JSON"):
        await store.update("k", lambda _: object())
    assert await store.keys() == []
    with pytest.raises(ValueError, match="needs its plugin and a chat"):
        stores(reminders, clock).open("dice", "")  # "" is the global values' id


async def test_deleting_a_chat_takes_every_plugins_values_for_it(
    reminders: ReminderService, clock: FakeClock
) -> None:
    opened = stores(reminders, clock)
    await opened.open("dice", "chat-a").set("k", 1)
    await opened.open("coin", "chat-a").set("k", 2)
    await opened.open("dice", "chat-b").set("k", 3)
    await opened.open("dice", None).set("k", 4)
    deleted = await reminders.delete_chat_data("chat-a")
    assert deleted.plugin_values == 2
    assert await opened.open("dice", "chat-a").get("k") is None
    assert await opened.open("coin", "chat-a").get("k") is None
    assert await opened.open("dice", "chat-b").get("k") == 3
    assert await opened.open("dice", None).get("k") == 4
