"""OpenAPI tool servers: a real FastAPI app on 127.0.0.1, its operations as tools."""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.bot.messages import IncomingMessage
from groupmate.function_calls import (
    InvalidArgumentsError,
    ToolFailedError,
    ToolInvoker,
    ToolTimeoutError,
)
from groupmate.function_calls.remote import OpenApiSettings, OpenApiToolSet
from groupmate.function_calls.remote.results import MAX_RESULT_CHARS
from groupmate.testing.stub_llm import Reply, StubLLM, calls, text
from groupmate.testing.threaded_server import ThreadedServer
from tests.conftest import make_ctx
from tests.openapi_time_server import API_KEY, app


@pytest.fixture(scope="module")
def time_server() -> Iterator[str]:
    server = ThreadedServer(app)
    port = server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


def settings(*servers: dict[str, Any], environ: dict[str, str] | None = None) -> OpenApiSettings:
    return parse_config({"openapi": {"servers": list(servers)}}, environ=environ or {}).openapi


@pytest.fixture
async def invoker(time_server: str) -> AsyncIterator[ToolInvoker]:
    tools = OpenApiToolSet(settings({"url": time_server, "timeout": 2}))
    await tools.start()
    yield ToolInvoker(tools.toolset, call_timeout=600)
    await tools.aclose()


async def run(invoker: ToolInvoker, name: str, arguments: Any) -> Any:
    return (await invoker.run(make_ctx(), name, arguments)).data


async def test_every_operation_is_a_tool_named_by_its_operation_id(invoker: ToolInvoker) -> None:
    names = set(invoker.registry.names())
    assert {
        "get_current_utc_time",
        "get_current_local_time",
        "format_time",
        "zone_count_zones__region__count_get",  # FastAPI's generated id, kept as it is
    } <= names
    local = invoker.registry.get("get_current_local_time")
    assert local.parameters["required"] == ["timezone"]
    assert "Current time in a time zone" in local.description


async def test_query_parameter_call(invoker: ToolInvoker) -> None:
    said = json.loads(
        await run(
            invoker,
            "get_current_local_time",
            {"timezone": "Asia/Tokyo"},
        )
    )
    stamp = datetime.fromisoformat(said["local_time"])
    assert stamp.utcoffset() == timedelta(hours=9)
    assert abs(stamp - datetime.now(UTC)) < timedelta(minutes=1)


async def test_a_json_body_with_refs_is_merged_and_sent(invoker: ToolInvoker) -> None:
    fmt = invoker.registry.get("format_time")
    assert set(fmt.parameters["properties"]) == {"format", "timezone"}
    assert "$ref" not in json.dumps(fmt.parameters)  # resolved, inlined
    said = json.loads(await run(invoker, "format_time", {"format": "%Z"}))
    assert said == {"formatted_time": "UTC"}
    converted = json.loads(
        await run(invoker, "convert", {"value": 2, "unit": {"name": "m", "factor": 0.5}})
    )
    assert converted == {"result": 1.0, "unit": "m"}
    with pytest.raises(InvalidArgumentsError):  # the nested $ref's schema checks, too
        await run(invoker, "convert", {"value": 2, "unit": {"name": "m"}})


async def test_a_path_parameter_is_put_in_the_path(invoker: ToolInvoker) -> None:
    said = json.loads(await run(invoker, "zone_count_zones__region__count_get", {"region": "Asia"}))
    assert said["count"] > 50


async def test_a_non_2xx_answer_is_an_error_report(invoker: ToolInvoker) -> None:
    with pytest.raises(ToolFailedError) as failed:
        await run(
            invoker,
            "get_current_local_time",
            {"timezone": "Mars/Olympus"},
        )
    assert "HTTP 400" in str(failed.value) and "Invalid timezone" in str(failed.value)
    assert not failed.value.internal


async def test_a_huge_answer_is_cut_with_a_note(invoker: ToolInvoker) -> None:
    said = await run(invoker, "huge", {})
    assert len(said) < MAX_RESULT_CHARS + 200
    assert said.endswith("characters; this is the start]")


async def test_a_slow_server_times_out(invoker: ToolInvoker) -> None:
    began = time.monotonic()
    with pytest.raises(ToolTimeoutError):
        await run(invoker, "slow", {})
    assert time.monotonic() - began < 4


async def test_allow_list_headers_and_a_spec_file(
    time_server: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(app.openapi()))
    server = {
        "url": time_server,
        "spec": str(spec),
        "headers": {"X-Api-Key": "${TIME_KEY}"},
        "tools": ["secret_*", "get_current_utc_*"],
    }
    tools = OpenApiToolSet(settings(server, environ={"TIME_KEY": API_KEY}))
    await tools.start()
    try:
        registry = tools.toolset
        assert sorted(registry.names()) == [
            "get_current_utc_time",
            "secret_time",
        ]
        said = json.loads(await run(ToolInvoker(registry), "secret_time", {}))
        assert "utc" in said
        assert "x_api_key" not in registry.get("secret_time").parameters["properties"]
    finally:
        await tools.aclose()
    assert API_KEY not in caplog.text


async def test_an_unreachable_server_offers_nothing_and_startup_goes_on() -> None:
    tools = OpenApiToolSet(settings({"url": "http://127.0.0.1:9", "timeout": 2}))
    await tools.start()
    try:
        assert list(tools.servers[0]) == []
    finally:
        await tools.aclose()


async def test_what_time_is_it_in_tokyo_through_the_bot(
    tmp_path: Path, stub: StubLLM, time_server: str
) -> None:
    tool = "get_current_local_time"

    def answer(body: dict[str, Any]) -> Reply:
        said = json.loads(body["messages"][-1]["content"])
        return text(f"It is {said['local_time']} in Tokyo.")

    stub.script(calls((tool, {"timezone": "Asia/Tokyo"})), answer)
    data = {
        "storage": {"url": f"sqlite:///{tmp_path / 'bot.db'}"},
        "llm": {"base_url": stub.base_url, "api_key": "sk-test"},
        "openapi": {"servers": [{"url": time_server}]},
    }
    async with Bot(parse_config(data, environ={})) as bot:
        message = IncomingMessage(
            chat_id="g1",
            chat_type="group",
            sender_id="u1",
            sender_name="Ann",
            text="@groupmate what time is it in Tokyo?",
            message_id="m1",
        )
        (reply,) = await bot.handle(message)
    found = re.search(r"It is (\S+) in Tokyo", reply.text)
    assert found is not None, reply.text
    assert datetime.fromisoformat(found.group(1)).utcoffset() == timedelta(hours=9)


async def test_a_path_value_cannot_step_up_to_another_endpoint(invoker: ToolInvoker) -> None:
    for value in ("..", "."):
        with pytest.raises(ToolFailedError, match="cannot be"):
            await run(invoker, "file_content", {"name": value})
    said = json.loads(await run(invoker, "file_content", {"name": "notes.txt"}))
    assert said == {"name": "notes.txt"}


async def test_list_query_values_repeat_the_key(invoker: ToolInvoker) -> None:
    said = json.loads(await run(invoker, "echo_tags", {"tags": ["a", "b"]}))
    assert said == {"tags": ["a", "b"]}


async def test_a_whole_body_beside_a_parameter_named_body(invoker: ToolInvoker) -> None:
    tool = invoker.registry.get("sum_list")
    assert set(tool.parameters["properties"]) == {"body", "request_body"}
    said = json.loads(await run(invoker, "sum_list", {"request_body": [1, 2, 3], "body": "query"}))
    assert said == {"sum": 6, "body": "query"}


async def test_an_endless_answer_is_read_only_up_to_the_cap(invoker: ToolInvoker) -> None:
    said = await run(invoker, "enormous", {})
    assert len(said) < MAX_RESULT_CHARS + 200
    assert "the answer was over 1,000,000 bytes" in said


async def test_a_malformed_spec_costs_only_its_bad_operations(
    tmp_path: Path, time_server: str, caplog: pytest.LogCaptureFixture
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        """
openapi: 3.1.0
info: {title: t, version: "1"}
paths:
  /get_current_utc_time:
    get:
      operationId: get_current_utc_time
      parameters:
        - {name: since, in: query, schema: {type: string, example: 2024-01-01}}
  /weird:
    post:
      operationId: weird
      requestBody: {content: [not, a, mapping]}
  /clash/{x}:
    get:
      operationId: clash
      parameters:
        - {name: x, in: path, required: true, schema: {type: string}}
        - {name: x, in: query, schema: {type: string}}
"""
    )
    tools = OpenApiToolSet(settings({"url": time_server, "spec": str(spec)}))
    await tools.start()
    try:
        assert tools.toolset.names() == ["get_current_utc_time"]
    finally:
        await tools.aclose()
    assert "POST /weird" in caplog.text and "both a path and a query parameter" in caplog.text
