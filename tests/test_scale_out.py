"""Two `groupmate serve` processes on one PostgreSQL database: a chat's messages, sent to
both in turn, are handled one at a time and in order, and a message redelivered to the
other process is answered once."""

from __future__ import annotations

import asyncio
import functools
import itertools
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from groupmate.testing.stub_llm import Reply, StubLLM, earlier_chat, latest_message, text
from tests.conftest import eventually
from tests.postgres import create_database, drop_database
from tests.processes import serve

pytestmark = pytest.mark.slow

LLM_SECONDS = 0.3
CHATS = 3
MESSAGES = 6


class _Timeline:
    """When the model was asked about each message, from the stub's side."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.asked: list[tuple[str, float, list[str]]] = []  # message, when, earlier chat

    def was_asked(self, said: str) -> bool:
        with self.lock:
            return any(message == said for message, _, _ in self.asked)

    def __call__(self, body: dict[str, Any]) -> Reply:
        said = latest_message(body)
        with self.lock:
            self.asked.append((said, time.monotonic(), earlier_chat(body)))
        return text(f"answer to {said}", delay=LLM_SECONDS)


@pytest.fixture
def shared_database(pg_server: str) -> Iterator[str]:
    url = create_database(pg_server)
    yield url
    drop_database(pg_server, url)


def _config(url: str, stub: StubLLM) -> dict[str, Any]:
    unlimited = {"user_per_minute": 1e6, "chat_per_minute": 1e6, "burst": 10**6}
    return {
        "storage": {"url": url},
        "llm": {"base_url": stub.base_url, "api_key": "sk-test"},
        "bot": {"rate_limits": unlimited},
    }


def _body(chat: int, number: int) -> dict[str, Any]:
    return {
        "chat_id": f"c{chat}",
        "chat_type": "private",
        "sender_id": f"u{chat}",
        "sender_name": f"User {chat}",
        "text": f"c{chat} message {number}",
        "message_id": f"c{chat}-m{number}",
    }


async def _post(base_url: str, body: dict[str, Any]) -> list[str]:
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        response = await client.post("/v1/messages", json=body)
    assert response.status_code == 200, response.text
    return [reply["text"] for reply in response.json()["replies"]]


async def _chat(chat: int, processes: list[str], timeline: _Timeline) -> list[list[str]]:
    """The chat's messages, each to the other process than the one before, each sent
    once the model is being asked about the one before (people type one after another;
    they do not wait for the answer)."""
    sends = []
    for number in range(MESSAGES):
        body = _body(chat, number)
        sends.append(asyncio.create_task(_post(processes[number % 2], body)))
        await eventually(functools.partial(timeline.was_asked, body["text"]), within=30)
    return list(await asyncio.gather(*sends))


async def test_two_processes_handle_a_chat_in_order_and_once(
    shared_database: str, stub: StubLLM
) -> None:
    timeline = _Timeline()
    stub.fallback = timeline
    config = _config(shared_database, stub)
    with serve(config) as first, serve(config) as second:
        processes = [first, second]
        answers = await asyncio.gather(*(_chat(c, processes, timeline) for c in range(CHATS)))
        # Redelivered to the process that did not take it first: the answer logged then.
        again = await _post(second, _body(0, 0))
        again_too = await _post(first, _body(0, 1))
        # A webhook retry that reaches the other process while the first still handles it.
        retried = _body(CHATS, 0)
        original = asyncio.create_task(_post(first, retried))
        await eventually(lambda: timeline.was_asked(retried["text"]), within=30)
        duplicate = await _post(second, retried)
        assert await original == [f"answer to {retried['text']}"]

    for chat, replies in enumerate(answers):
        assert replies == [[f"answer to c{chat} message {n}"] for n in range(MESSAGES)]
    assert again == [] and again_too == []  # answered and delivered: nothing to repeat
    assert duplicate == []  # it waited for the chat, then found the message answered
    assert len(stub.requests) == CHATS * MESSAGES + 1  # each message asked about once

    for chat in range(CHATS):
        asked = [(said, at, earlier) for said, at, earlier in timeline.asked if f"c{chat} " in said]
        # In the order sent, each after the answer before it was written...
        assert [said for said, _, _ in asked] == [f"c{chat} message {n}" for n in range(MESSAGES)]
        for (_, before, _), (_, after, _) in itertools.pairwise(asked):
            assert after - before >= LLM_SECONDS * 0.9  # one at a time, across processes
        # ...so each saw every earlier message of its chat and its answer, in order.
        for number, (_, _, earlier) in enumerate(asked):
            expected = []
            for n in range(number):
                expected += [
                    f"User {chat}: c{chat} message {n}",
                    f"groupmate: answer to c{chat} message {n}",
                ]
            assert earlier == expected
