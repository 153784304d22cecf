from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from function_calls import FunctionCallLLM, MessageContext, ToolRegistry
from tests.stub_llm import StubLLM

FIXED_NOW = datetime(2026, 11, 21, 13, 5, tzinfo=UTC)


@pytest.fixture(scope="session")
def _stub_server() -> Iterator[StubLLM]:
    stub = StubLLM()
    stub.start()
    yield stub
    stub.stop()


@pytest.fixture
def stub(_stub_server: StubLLM) -> Iterator[StubLLM]:
    _stub_server.reset()
    yield _stub_server
    _stub_server.reset()


def make_ctx(**overrides: Any) -> MessageContext:
    values: dict[str, Any] = {
        "chat_id": "chat-1",
        "chat_type": "group",
        "sender_id": "u-alice",
        "sender_name": "Alice",
        "timezone": "Europe/Berlin",
        "clock": lambda: FIXED_NOW,
    }
    values.update(overrides)
    return MessageContext(**values)


@pytest.fixture
def ctx() -> MessageContext:
    return make_ctx()


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry()


@pytest.fixture
async def make_llm(stub: StubLLM) -> AsyncIterator[Any]:
    created: list[FunctionCallLLM] = []

    def factory(registry: ToolRegistry, **options: Any) -> FunctionCallLLM:
        options.setdefault("transport_retries", 0)
        llm = FunctionCallLLM(
            model=options.pop("model", "stub-model"),
            base_url=stub.base_url,
            api_key="sk-test-secret",
            registry=registry,
            **options,
        )
        created.append(llm)
        return llm

    yield factory
    for llm in created:
        await llm.aclose()
