"""mcp.servers and openapi.servers in config.yaml; names and schemas of remote tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from groupmate.bot.config import ConfigError, load_config, parse_config
from groupmate.function_calls import InvalidArgumentsError, ToolDefinitionError
from groupmate.function_calls.remote import ToolFilter, exposed_name
from groupmate.function_calls.remote.external import external_tool
from groupmate.function_calls.result import FunctionResult
from groupmate.function_calls.schema import external_parameters_schema


def server(entry: dict[str, Any], environ: dict[str, str] | None = None) -> Any:
    config = parse_config({"mcp": {"servers": {"s": entry}}}, environ=environ or {})
    return config.mcp.servers["s"]


@pytest.mark.parametrize(
    ("spelling", "kind"),
    [
        ("stdio", "stdio"),
        ("streamable-http", "http"),
        ("streamable_http", "http"),
        ("streamableHttp", "http"),
        ("http", "http"),
        ("sse", "sse"),
        ("SSE", "sse"),
    ],
)
def test_every_transport_spelling(spelling: str, kind: str) -> None:
    for key in ("type", "transport"):
        entry: dict[str, Any] = {key: spelling}
        entry.update({"command": "x"} if kind == "stdio" else {"url": "http://h/mcp"})
        assert server(entry).kind == kind


def test_a_url_without_a_type_is_streamable_http_unless_it_ends_in_sse() -> None:
    assert server({"url": "https://h/mcp"}).kind == "http"
    assert server({"url": "https://h/sse"}).kind == "sse"


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        ({"command": "x", "url": "http://h"}, "either `command`"),
        ({}, "either `command`"),
        ({"command": "x", "type": "sse"}, "runs over stdio"),
        ({"url": "http://h", "type": "stdio"}, "needs a `command`"),
        ({"url": "ftp://h"}, "http://"),
        ({"command": "x", "type": "websocket"}, "unknown transport"),
        ({"command": "x", "timeout": 0}, "greater than 0"),
        ({"command": "x", "scope": "everywhere"}, "scope"),
        ({"command": "x", "prefix": "bad prefix!"}, "prefix"),
        ({"command": "x", "tools": {"allow": ["a"], "block": ["b"]}}, "block"),
    ],
)
def test_bad_server_entries_are_refused_by_name(entry: dict[str, Any], problem: str) -> None:
    with pytest.raises(ConfigError) as refused:
        server(entry)
    assert "mcp.servers.s" in str(refused.value) and problem in str(refused.value)


def test_other_clients_keys_are_ignored_and_secrets_hidden() -> None:
    entry = server(
        {"command": "x", "env": {"KEY": "${K}"}, "autoApprove": ["a"], "alwaysAllow": []},
        environ={"K": "s3cret"},
    )
    assert entry.ignored_keys() == ["alwaysAllow", "autoApprove"]
    assert "s3cret" not in repr(entry) and entry.plain_env() == {"KEY": "s3cret"}


def test_an_mcp_servers_json_file_relative_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "claude.json").write_text(
        json.dumps({"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}})
    )
    (tmp_path / "config.yaml").write_text("mcp:\n  servers: claude.json\n")
    config = load_config(tmp_path / "config.yaml", environ={})
    assert config.mcp.servers["time"].args == ("mcp-server-time",)
    (tmp_path / "config.yaml").write_text("mcp:\n  servers: missing.json\n")
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "config.yaml", environ={})


def test_a_pasted_mcp_servers_mapping_works_too() -> None:
    config = parse_config({"mcp": {"servers": {"mcpServers": {"t": {"command": "x"}}}}}, {})
    assert list(config.mcp.servers) == ["t"]


def test_tool_filters() -> None:
    assert ToolFilter.model_validate(["get_*"]).admits("get_time")
    assert not ToolFilter.model_validate(["get_*"]).admits("set_time")
    both = ToolFilter(allow=("*",), deny=("drop_*",))
    assert both.admits("read") and not both.admits("drop_table")


def test_exposed_names_stay_within_64_characters_and_distinct() -> None:
    assert exposed_name("time__", "get.current/time") == "time__get_current_time"
    long_a, long_b = exposed_name("srv__", "a" * 80), exposed_name("srv__", "a" * 81)
    assert len(long_a) == len(long_b) == 64 and long_a != long_b
    assert exposed_name("srv__", "a" * 80) == long_a  # stable


def test_external_schemas_are_cleaned_and_refs_resolved() -> None:
    raw = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Args",
        "type": "object",
        "properties": {"when": {"$ref": "#/definitions/When"}},
        "required": ["when"],
        "definitions": {"When": {"title": "When", "type": "string", "minLength": 1}},
    }
    assert external_parameters_schema(raw) == {
        "type": "object",
        "properties": {"when": {"type": "string", "minLength": 1}},
        "required": ["when"],
        "additionalProperties": False,
    }
    with pytest.raises(ValueError, match="does not define"):
        external_parameters_schema({"type": "object", "properties": {"x": {"$ref": "#/x"}}})
    with pytest.raises(ValueError, match="not 'object'"):
        external_parameters_schema({"type": "array"})


async def _never(ctx: Any, args: dict[str, Any]) -> FunctionResult:
    raise AssertionError("not called")


def test_an_unusable_schema_is_a_definition_error_in_one_line() -> None:
    with pytest.raises(ToolDefinitionError) as refused:
        external_tool("t", "d", {"type": "object", "properties": {"x": {"type": 5}}}, _never)
    assert "\n" not in str(refused.value)


def test_a_free_form_nested_object_takes_any_keys() -> None:
    schema = external_parameters_schema(
        {"type": "object", "properties": {"meta": {"type": "object"}}, "required": ["meta"]}
    )
    tool = external_tool("t", "d", schema, _never)
    assert tool.validate({"meta": {"k": "v"}}).model_dump() == {"meta": {"k": "v"}}
    with pytest.raises(InvalidArgumentsError):
        tool.validate({"meta": {}, "invented": 1})  # the top level stays closed
