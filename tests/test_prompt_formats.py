"""Tests for the prompt-mode tool instructions and tool-result rendering."""

from __future__ import annotations

import json
import re
from types import MappingProxyType
from typing import Any, get_args

import pytest

from groupmate.function_calls.prompt_formats import (
    PROMPT_FORMATS,
    PromptFormat,
    render_tool_instructions,
    render_tool_results,
)
from groupmate.function_calls.prompt_parser import parse_tool_calls
from groupmate.function_calls.tolerant_json import ParsedCall

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "weather",
            "description": "Aktuelles Wetter für eine Stadt (°C).",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "Stadt, z. B. München"},
                    "units": {"type": "string", "enum": ["metric", "imperial"]},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "set_reminder",
            "description": "提醒 — remind the chat at a given time.",
            "parameters": {
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "when": {"type": "string", "format": "date-time"},
                    "repeat": {
                        "type": "object",
                        "properties": {"every": {"type": "integer", "minimum": 1}},
                    },
                },
                "required": ["text", "when"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "summarize_chat",
            "description": "Summarize the recent chat.",
            "parameters": {"type": "object", "properties": {}},
        },
    },
]

EXAMPLE_ARGUMENTS: dict[str, dict[str, Any]] = {
    "weather": {"city": "München", "units": "metric"},
    "set_reminder": {"text": "给妈妈打电话", "when": "2026-11-22T10:00:00", "repeat": {"every": 2}},
    "summarize_chat": {},
}

TOOL_PARAMETERS = {
    tool["function"]["name"]: frozenset(tool["function"]["parameters"]["properties"])
    for tool in TOOLS
}

FORMATS: list[PromptFormat] = ["hermes", "json", "deepseek"]


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _tools_section(instructions: str) -> list[str]:
    match = re.search(r"<(available_tools|tools)>\n(.*?)\n</\1>", instructions, re.DOTALL)
    assert match is not None
    return match.group(2).split("\n")


def _example_call(instructions: str, prompt_format: PromptFormat, name: str) -> str:
    """The call format shown in the instructions, filled in for ``name``."""
    if prompt_format == "hermes":
        match = re.search(r"<tool_call>\n(.*<function-name>.*)\n</tool_call>", instructions)
        assert match is not None
        filled = match.group(0).replace("<function-name>", json.dumps(name, ensure_ascii=False))
    elif prompt_format == "deepseek":
        match = re.search(r"<tool_code>\n(.*<tool-name>.*)\n</tool_code>", instructions)
        assert match is not None
        filled = match.group(0).replace("<tool-name>", json.dumps(name, ensure_ascii=False))
    else:
        (line,) = [line for line in instructions.splitlines() if "<tool-name>" in line]
        filled = line.replace("<tool-name>", json.dumps(name, ensure_ascii=False))
    arguments = json.dumps(EXAMPLE_ARGUMENTS[name], ensure_ascii=False)
    assert "<args-json-object>" in filled
    return filled.replace("<args-json-object>", arguments)


def test_prompt_formats_constant_matches_literal() -> None:
    assert PROMPT_FORMATS == ("hermes", "json", "deepseek")
    assert get_args(PromptFormat) == PROMPT_FORMATS


@pytest.mark.parametrize("prompt_format", FORMATS)
def test_instructions_list_every_tool_compactly(prompt_format: PromptFormat) -> None:
    instructions = render_tool_instructions(TOOLS, prompt_format)

    lines = _tools_section(instructions)
    assert lines == [_compact(tool) for tool in TOOLS]
    assert [json.loads(line) for line in lines] == TOOLS
    for tool in TOOLS:
        function = tool["function"]
        assert function["name"] in instructions
        assert _compact(function["parameters"]) in instructions
    # Non-ASCII is kept as is (cheaper in tokens, readable for the model).
    assert "München" in instructions
    assert "提醒" in instructions
    assert "\\u" not in instructions


@pytest.mark.parametrize("prompt_format", FORMATS)
def test_instructions_mention_parallel_calls_and_responses(prompt_format: PromptFormat) -> None:
    instructions = render_tool_instructions(TOOLS, prompt_format)
    assert "several" in instructions
    tag = "tool_output" if prompt_format == "deepseek" else "tool_response"
    assert f"<{tag}></{tag}>" in instructions
    assert "plain text" in instructions


def test_hermes_follows_qwen_template() -> None:
    instructions = render_tool_instructions(TOOLS, "hermes")
    assert instructions.startswith(
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
    )
    assert (
        "</tools>\n\nFor each function call, return a json object with function name and "
        "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
        '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
    ) in instructions


def test_json_format_asks_for_tool_calls_object_only() -> None:
    instructions = render_tool_instructions(TOOLS, "json")
    assert '{"tool_calls": [{"name": <tool-name>, "parameters": <args-json-object>}]}' in (
        instructions
    )
    assert "ONLY" in instructions
    assert "<tool_call>" not in instructions


@pytest.mark.parametrize("prompt_format", FORMATS)
@pytest.mark.parametrize("name", list(EXAMPLE_ARGUMENTS))
def test_documented_call_format_round_trips(prompt_format: PromptFormat, name: str) -> None:
    instructions = render_tool_instructions(TOOLS, prompt_format)
    reply = _example_call(instructions, prompt_format, name)

    parsed = parse_tool_calls(reply, TOOL_PARAMETERS)

    assert parsed.calls == (ParsedCall(name, EXAMPLE_ARGUMENTS[name]),)
    assert parsed.malformed == ()
    assert parsed.text == ""


@pytest.mark.parametrize("prompt_format", FORMATS)
def test_several_documented_calls_round_trip(prompt_format: PromptFormat) -> None:
    instructions = render_tool_instructions(TOOLS, prompt_format)
    if prompt_format == "hermes":
        reply = "\n".join(_example_call(instructions, "hermes", name) for name in EXAMPLE_ARGUMENTS)
    else:
        entries = [{"name": name, "parameters": args} for name, args in EXAMPLE_ARGUMENTS.items()]
        reply = json.dumps({"tool_calls": entries}, ensure_ascii=False)

    parsed = parse_tool_calls(reply, TOOL_PARAMETERS)

    assert parsed.calls == tuple(ParsedCall(n, a) for n, a in EXAMPLE_ARGUMENTS.items())
    assert parsed.text == ""


@pytest.mark.parametrize("prompt_format", FORMATS)
def test_instructions_themselves_are_not_calls(prompt_format: PromptFormat) -> None:
    # A model that parrots its instructions must not trigger the listed tools.
    instructions = render_tool_instructions(TOOLS, prompt_format)
    assert parse_tool_calls(instructions, TOOL_PARAMETERS).calls == ()


def test_no_tools_renders_nothing() -> None:
    assert render_tool_instructions([], "hermes") == ""
    assert render_tool_instructions([], "json") == ""


def test_unknown_format_is_rejected() -> None:
    with pytest.raises(ValueError, match="unknown prompt format"):
        render_tool_instructions(TOOLS, "xml")  # type: ignore[arg-type]


def test_read_only_mappings_are_serialized() -> None:
    frozen = MappingProxyType(
        {
            "type": "function",
            "function": MappingProxyType(
                {"name": "ping", "parameters": {"type": "object", "required": ("host",)}}
            ),
        }
    )
    lines = _tools_section(render_tool_instructions([frozen], "hermes"))
    assert lines == [
        '{"type":"function","function":{"name":"ping",'
        '"parameters":{"type":"object","required":["host"]}}}'
    ]


# --------------------------------------------------------------------------- results


def test_tool_result_with_json_content() -> None:
    rendered = render_tool_results([("weather", '{"temp_c": 21, "sky": "sonnig"}')])
    assert rendered == (
        '<tool_response>\n{"name": "weather", "content": {"temp_c": 21, "sky": "sonnig"}}\n'
        "</tool_response>"
    )


def test_tool_result_with_plain_text_content() -> None:
    rendered = render_tool_results([("summarize_chat", 'Anna said "hi" — 你好')])
    assert rendered == (
        '<tool_response>\n{"name": "summarize_chat", "content": "Anna said \\"hi\\" — 你好"}\n'
        "</tool_response>"
    )


def test_several_tool_results_joined_by_newlines() -> None:
    rendered = render_tool_results(
        [("weather", '{"temp_c": 3}'), ("get_time", '"12:00"'), ("broken", "{not json")]
    )
    blocks = re.findall(r"<tool_response>\n(.*?)\n</tool_response>", rendered)
    assert [json.loads(block) for block in blocks] == [
        {"name": "weather", "content": {"temp_c": 3}},
        {"name": "get_time", "content": "12:00"},
        {"name": "broken", "content": "{not json"},
    ]
    assert rendered.count("</tool_response>\n<tool_response>") == 2
    assert not rendered.endswith("\n")


def test_no_results_renders_nothing() -> None:
    assert render_tool_results([]) == ""


def test_tool_results_are_not_parsed_as_calls() -> None:
    # The rendered results are sent back as a user message; if the model echoes them,
    # they must not be mistaken for new calls.
    rendered = render_tool_results([("weather", '{"city": "Berlin"}')])
    parsed = parse_tool_calls(rendered, TOOL_PARAMETERS)
    assert parsed.calls == ()
    assert parsed.text == ""
