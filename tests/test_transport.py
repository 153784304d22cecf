from __future__ import annotations

import json
import logging
import time

import pytest
from openai import AsyncAzureOpenAI

from groupmate.function_calls import (
    FunctionCallLLM,
    FunctionResult,
    MessageContext,
    ToolRegistry,
    tool_function,
)
from groupmate.function_calls._transport import ToolList, encode_body
from groupmate.testing import stub_llm as s
from tests.conftest import make_ctx
from tests.ports import free_port


async def test_rate_limit_is_retried_honouring_retry_after(stub, make_llm, registry) -> None:
    # Without the header the SDK would wait 0.375-0.5 s before its first retry
    # (openai._constants.INITIAL_RETRY_DELAY, less up to 25 % jitter): 2 s tells them apart.
    stub.script(s.error(429, "slow down", headers={"retry-after": "2"}), s.text("Hi!"))
    started = time.perf_counter()
    result = await make_llm(registry, transport_retries=2).run(make_ctx(), "hi")
    elapsed = time.perf_counter() - started
    assert result.text == "Hi!" and result.error is None
    assert len(stub.requests) == 2
    assert 2.0 <= elapsed < 3.5, f"retried after {elapsed:.2f} s, not the 2 s asked for"


async def test_server_errors_are_retried_then_explained(stub, make_llm, registry) -> None:
    stub.fallback = s.error(503, "overloaded", headers={"retry-after-ms": "10"})
    result = await make_llm(registry, transport_retries=2).run(make_ctx(), "hi")
    assert len(stub.requests) == 3  # one try plus two retries, then give up
    assert result.error == "The language model service had an error. Please try again in a moment."
    assert result.replies == [result.error]


async def test_transient_server_error_recovers(stub, make_llm, registry) -> None:
    stub.script(s.error(500, "oops", headers={"retry-after-ms": "10"}), s.text("Recovered."))
    result = await make_llm(registry, transport_retries=1).run(make_ctx(), "hi")
    assert result.text == "Recovered."


async def test_connection_refused_gives_a_clear_reply(registry: ToolRegistry) -> None:
    async with FunctionCallLLM(
        model="m",
        base_url=f"http://127.0.0.1:{free_port()}/v1",
        api_key="k",
        registry=registry,
        transport_retries=1,
    ) as llm:
        result = await llm.run(make_ctx(), "hi")
    assert (
        result.error == "I can't reach the language model right now. Please try again in a moment."
    )


async def test_request_timeout_gives_a_clear_reply(stub, make_llm, registry) -> None:
    stub.fallback = s.text("late", delay=2)
    started = time.perf_counter()
    result = await make_llm(registry, request_timeout=0.3).run(make_ctx(), "hi")
    assert time.perf_counter() - started < 1.5
    assert result.error and "took too long" in result.error


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (s.error(401, "bad key"), "rejected the bot's credentials"),
        (s.error(404, "no such model"), "check llm.model"),
        (s.raw("this is not json"), "unreadable"),
        (s.raw('{"id": "x", "choices": []}'), "empty or unreadable"),
        (s.raw('{"choices": {"0": {}}}'), "empty or unreadable"),
        (s.raw('{"choices": [{"message": "hi"}]}'), "empty or unreadable"),
        (
            s.raw(
                '{"choices": [{"message": {"role": "assistant", "tool_calls": [{"function": 1}]}}]}'
            ),
            "empty or unreadable",
        ),
        (s.raw('{"choices": ' + "[" * 3000 + "]" * 3000 + "}"), "unreadable"),
    ],
    ids=[
        "401",
        "404",
        "not-json",
        "no-choices",
        "choices-dict",
        "message-str",
        "function-str",
        "deep",
    ],
)
async def test_bad_responses_become_clear_replies(
    stub, make_llm, registry, reply: s.Reply, expected: str
) -> None:
    stub.script(reply)
    result = await make_llm(registry).run(make_ctx(), "hi")
    assert result.error is not None and expected in result.error


async def test_api_key_never_appears_in_logs(stub, make_llm, registry, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    stub.script(s.error(401, "bad key"))
    await make_llm(registry).run(make_ctx(), "hi")
    assert caplog.records, "expected the failure to be logged"
    assert "sk-test-secret" not in caplog.text


async def test_content_parts_are_read_as_text(stub, make_llm, registry) -> None:
    body = (
        '{"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", '
        '"content": [{"type": "text", "text": "Hello "}, {"type": "text", "text": "there"}]}}]}'
    )
    stub.script(s.raw(body))
    result = await make_llm(registry).run(make_ctx(), "hi")
    assert result.text == "Hello there" and len(stub.requests) == 1


def test_a_body_is_encoded_with_its_tools_spliced_in() -> None:
    tools = [{"type": "function", "function": {"name": "wetter", "description": "Köln ☀"}}]
    body = {"model": "m", "messages": [{"role": "user", "content": "天气\u2028?"}]}
    sent = encode_body(body, ToolList.of(tools))
    assert json.loads(sent) == {**body, "tools": tools}
    assert "Köln ☀".encode() in sent  # UTF-8 as the SDK sends it, not \u escapes
    assert json.loads(encode_body(body, None)) == body
    with pytest.raises(ValueError):  # tools go in once, beside a body that has a model
        encode_body({**body, "tools": tools}, ToolList.of(tools))


async def test_a_supplied_azure_client_still_routes_by_deployment(stub, registry) -> None:
    # An Azure client builds its URL from the model in the body: it is handed the body
    # as a dict, not as bytes.
    @tool_function(description="List notes", registry=registry)
    async def list_notes(ctx: MessageContext) -> FunctionResult:
        return FunctionResult.direct("none")

    root = stub.base_url.removesuffix("/v1")
    client = AsyncAzureOpenAI(azure_endpoint=root, api_key="azure-key", api_version="2024-06-01")
    llm = FunctionCallLLM(model="gpt4o", client=client, registry=registry, transport_retries=0)
    stub.script(s.text("Hello from Azure."))
    try:
        result = await llm.run(make_ctx(), "list my notes")
    finally:
        await llm.aclose()
    assert result.text == "Hello from Azure."
    assert stub.paths == ["/openai/deployments/gpt4o/chat/completions"]
    assert [tool["function"]["name"] for tool in stub.requests[0]["tools"]] == ["list_notes"]
