"""Corpus and robustness tests for the prompt-mode tool-call parser."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

import pytest

from groupmate.function_calls.prompt_parser import ParsedReply, _parse, parse_tool_calls
from groupmate.function_calls.tolerant_json import MalformedCall, ParsedCall

TOOLS: dict[str, frozenset[str]] = {
    "weather": frozenset({"city", "units"}),
    "get_time": frozenset({"timezone"}),
    "web_search": frozenset({"query", "max_results", "safe", "region"}),
    "set_reminder": frozenset({"text", "when"}),
    "save_note": frozenset({"title", "content"}),
    "summarize_chat": frozenset({"last_n"}),
    "create_poll": frozenset({"question", "options", "settings"}),
    "rename_chat": frozenset({"name"}),  # a tool that really has a "name" argument
}


class Contains(str):
    """Expected text given as a substring, where the exact layout does not matter."""

    __slots__ = ()


@dataclass(frozen=True)
class Case:
    raw: str
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    malformed: bool = False
    text: str = ""


def _call(tool: str, /, **arguments: Any) -> tuple[str, dict[str, Any]]:
    return tool, arguments


def _j(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


BERLIN = _call("weather", city="Berlin")

CORPUS: dict[str, Case] = {
    # ---------------------------------------------------------------- reasoning
    "qwen3_think_then_call": Case(
        "<think>\nThe user wants the weather in Berlin. I should call the weather tool.\n"
        "</think>\n\n<tool_call>\n"
        '{"name": "weather", "arguments": {"city": "Berlin"}}\n</tool_call>',
        [BERLIN],
    ),
    "call_inside_think_is_not_a_call": Case(
        '<think>Maybe <tool_call>{"name": "weather", "arguments": {"city": "Paris"}}'
        "</tool_call>? No, the user is just saying hi.</think>Hi! How can I help?",
        text="Hi! How can I help?",
    ),
    "think_call_ignored_real_call_kept": Case(
        '<think>I could do <tool_call>{"name": "weather", "arguments": {"city": "Paris"}}'
        "</tool_call> but they asked about Lyon.</think>\n"
        '<tool_call>{"name": "weather", "arguments": {"city": "Lyon"}}</tool_call>',
        [_call("weather", city="Lyon")],
    ),
    "unclosed_think_is_all_reasoning": Case(
        "<think>\nThe user wants the time. Let me call "
        '{"name": "get_time", "arguments": {"timezone": "UTC"}} and then',
    ),
    "deepseek_r1_close_tag_only_then_call": Case(
        "Okay, the user asks for the time in Tokyo. I'll call "
        '<tool_call>{"name": "get_time", "arguments": {}}</tool_call> maybe.\n</think>\n\n'
        '<tool_call>{"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}</tool_call>',
        [_call("get_time", timezone="Asia/Tokyo")],
    ),
    "deepseek_r1_close_tag_only_answer": Case(
        "The user greets me in German, so I answer in German.\n</think>\n\n"
        "Hallo! Wie kann ich dir heute helfen?",
        text="Hallo! Wie kann ich dir heute helfen?",
    ),
    "qwen3_empty_think_plain_answer": Case(
        "<think>\n\n</think>\n\nSure — the capital of France is Paris.",
        text="Sure — the capital of France is Paris.",
    ),
    # ---------------------------------------------------------------- fences
    "fence_inside_tags": Case(
        '<tool_call>\n```json\n{"name": "web_search", "arguments": '
        '{"query": "python 3.13 release date"}}\n```\n</tool_call>',
        [_call("web_search", query="python 3.13 release date")],
    ),
    "fence_instead_of_tags": Case(
        "I'll look that up.\n```json\n"
        '{"name": "web_search", "arguments": {"query": "Bundesliga Tabelle"}}\n```',
        [_call("web_search", query="Bundesliga Tabelle")],
        text="I'll look that up.",
    ),
    "plain_fence_json_format": Case(
        '```\n{"tool_calls": [{"name": "get_time", "parameters": '
        '{"timezone": "Europe/Berlin"}}]}\n```',
        [_call("get_time", timezone="Europe/Berlin")],
    ),
    "tags_inside_fence": Case(
        '```xml\n<tool_call>\n{"name": "weather", "arguments": {"city": "Oslo"}}\n'
        "</tool_call>\n```",
        [_call("weather", city="Oslo")],
    ),
    "unrelated_code_fence_kept": Case(
        "Here is the snippet:\n```python\nprint({'a': 1})\n```\n"
        '<tool_call>{"name":"save_note","arguments":{"title":"snippet","content":"print"}}'
        "</tool_call>",
        [_call("save_note", title="snippet", content="print")],
        text="Here is the snippet:\n```python\nprint({'a': 1})\n```",
    ),
    # ---------------------------------------------------------------- several calls
    "two_hermes_blocks": Case(
        '<tool_call>\n{"name": "weather", "arguments": {"city": "Berlin"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "weather", "arguments": {"city": "München"}}\n</tool_call>',
        [BERLIN, _call("weather", city="München")],
    ),
    "prose_before_and_after_calls": Case(
        "Let me check both for you.\n"
        '<tool_call>{"name": "weather", "arguments": {"city": "Berlin"}}</tool_call>\n'
        '<tool_call>{"name": "get_time", "arguments": {"timezone": "Europe/Berlin"}}'
        "</tool_call>\nOne moment!",
        [BERLIN, _call("get_time", timezone="Europe/Berlin")],
        text="Let me check both for you.\n\nOne moment!",
    ),
    "json_format_two_entries": Case(
        '{"tool_calls": [{"name": "weather", "parameters": {"city": "Rome"}}, '
        '{"name": "get_time", "parameters": {"timezone": "Europe/Rome"}}]}',
        [_call("weather", city="Rome"), _call("get_time", timezone="Europe/Rome")],
    ),
    "json_format_with_prose_before": Case(
        "Sure, checking the weather now.\n"
        '{"tool_calls": [{"name": "weather", "parameters": {"city": "Rome", "units": "metric"}}]}',
        [_call("weather", city="Rome", units="metric")],
        text="Sure, checking the weather now.",
    ),
    "llama_bare_objects_on_lines": Case(
        '{"name": "weather", "parameters": {"city": "Paris"}}\n'
        '{"name": "get_time", "parameters": {"timezone": "Europe/Paris"}}',
        [_call("weather", city="Paris"), _call("get_time", timezone="Europe/Paris")],
    ),
    "bare_objects_comma_separated": Case(
        '{"name": "weather", "arguments": {"city": "Bonn"}}, '
        '{"name": "weather", "arguments": {"city": "Köln"}}',
        [_call("weather", city="Bonn"), _call("weather", city="Köln")],
    ),
    "two_objects_in_one_block": Case(
        '<tool_call>\n{"name": "weather", "arguments": {"city": "Berlin"}}\n'
        '{"name": "get_time", "arguments": {"timezone": "Europe/Berlin"}}\n</tool_call>',
        [BERLIN, _call("get_time", timezone="Europe/Berlin")],
    ),
    "array_in_tags": Case(
        '<tool_call>[{"name": "weather", "arguments": {"city": "Berlin"}}, '
        '{"name": "summarize_chat", "arguments": {"last_n": 50}}]</tool_call>',
        [BERLIN, _call("summarize_chat", last_n=50)],
    ),
    "mistral_tool_calls_marker": Case(
        '[TOOL_CALLS][{"name": "web_search", "arguments": {"query": "Mistral AI funding"}}]',
        [_call("web_search", query="Mistral AI funding")],
    ),
    "llama_python_tag": Case(
        '<|python_tag|>{"name": "web_search", "parameters": {"query": "Llama 3.1 release"}}'
        "<|eom_id|>",
        [_call("web_search", query="Llama 3.1 release")],
    ),
    # ---------------------------------------------------------------- unclosed tags
    "unclosed_final_block": Case(
        '<tool_call>\n{"name": "set_reminder", "arguments": '
        '{"text": "Müll rausbringen", "when": "2024-06-01T19:00"}}',
        [_call("set_reminder", text="Müll rausbringen", when="2024-06-01T19:00")],
    ),
    "closed_then_unclosed_block": Case(
        '<tool_call>{"name": "weather", "arguments": {"city": "Berlin"}}</tool_call>\n'
        '<tool_call>{"name": "weather", "arguments": {"city": "Wien"}}',
        [BERLIN, _call("weather", city="Wien")],
    ),
    "unclosed_block_followed_by_block": Case(
        '<tool_call>{"name": "weather", "arguments": {"city": "Berlin"}}\n'
        '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>',
        [BERLIN, _call("get_time")],
    ),
    "unclosed_block_then_prose": Case(
        '<tool_call>{"name": "get_time", "arguments": {}}\nI\'ll get back to you.',
        [_call("get_time")],
        text="I'll get back to you.",
    ),
    "stray_closing_tag_after_bare_call": Case(
        '{"name": "weather", "arguments": {"city": "Kiel"}}</tool_call>',
        [_call("weather", city="Kiel")],
    ),
    # ---------------------------------------------------------------- tolerant decoding
    "single_quoted_dict": Case(
        "<tool_call>{'name': 'weather', 'arguments': {'city': 'Zürich'}}</tool_call>",
        [_call("weather", city="Zürich")],
    ),
    "trailing_commas": Case(
        '<tool_call>{"name": "create_poll", "arguments": {"question": "Pizza heute?", '
        '"options": ["ja", "nein",],},}</tool_call>',
        [_call("create_poll", question="Pizza heute?", options=["ja", "nein"])],
    ),
    "python_literals_true_none": Case(
        "<tool_call>{'name': 'web_search', 'arguments': {'query': 'news', 'max_results': 3, "
        "'safe': True, 'region': None}}</tool_call>",
        [_call("web_search", query="news", max_results=3, safe=True, region=None)],
    ),
    "bare_python_literal_call": Case(
        "{'name': 'web_search', 'arguments': {'query': 'Wetter morgen', 'safe': False}}",
        [_call("web_search", query="Wetter morgen", safe=False)],
    ),
    "json5_unquoted_keys_and_comment": Case(
        '<tool_call>{name: "weather", arguments: {city: "Lyon"} // in Frankreich\n}</tool_call>',
        [_call("weather", city="Lyon")],
    ),
    "json5_comment_hiding_a_brace": Case(
        '<tool_call>{name: "weather", // uses {city}\n arguments: {city: "Ulm"}}</tool_call>',
        [_call("weather", city="Ulm")],
    ),
    # ---------------------------------------------------------------- argument shapes
    "arguments_as_json_string": Case(
        '<tool_call>{"name": "weather", "arguments": '
        '"{\\"city\\": \\"Berlin\\", \\"units\\": \\"metric\\"}"}</tool_call>',
        [_call("weather", city="Berlin", units="metric")],
    ),
    "arguments_string_not_an_object": Case(
        '<tool_call>{"name": "weather", "arguments": "[\\"Berlin\\"]"}</tool_call>',
        malformed=True,
    ),
    "arguments_string_not_json": Case(
        '<tool_call>{"name": "weather", "arguments": "city=Berlin"}</tool_call>',
        malformed=True,
    ),
    "parameters_instead_of_arguments_in_tags": Case(
        '<tool_call>{"name": "set_reminder", "parameters": '
        '{"text": "Zahnarzt", "when": "Freitag 10 Uhr"}}</tool_call>',
        [_call("set_reminder", text="Zahnarzt", when="Freitag 10 Uhr")],
    ),
    "missing_arguments_means_empty": Case(
        '<tool_call>{"name": "summarize_chat"}</tool_call>',
        [_call("summarize_chat")],
    ),
    "null_arguments_means_empty": Case(
        '<tool_call>{"name": "get_time", "arguments": null}</tool_call>',
        [_call("get_time")],
    ),
    "empty_arguments_string_means_empty": Case(
        '<tool_call>{"name": "get_time", "arguments": ""}</tool_call>',
        [_call("get_time")],
    ),
    "flattened_arguments_in_tags": Case(
        '<tool_call>{"name": "weather", "city": "Dresden"}</tool_call>',
        [_call("weather", city="Dresden")],
    ),
    "arguments_is_list": Case(
        '<tool_call>{"name": "weather", "arguments": ["Berlin"]}</tool_call>',
        malformed=True,
    ),
    "arguments_is_number": Case(
        'Checking.\n<tool_call>{"name": "summarize_chat", "arguments": 50}</tool_call>',
        malformed=True,
        text="Checking.",
    ),
    # ---------------------------------------------------------------- name handling
    "name_only_inside_arguments": Case(
        '<tool_call>{"arguments": {"name": "weather", "city": "Wien"}}</tool_call>',
        [_call("weather", city="Wien")],
    ),
    "name_repeated_inside_arguments_dropped": Case(
        '<tool_call>{"name": "get_time", "arguments": {"name": "get_time", "timezone": "UTC"}}'
        "</tool_call>",
        [_call("get_time", timezone="UTC")],
    ),
    "name_argument_kept_when_tool_has_name_param": Case(
        '<tool_call>{"name": "rename_chat", "arguments": {"name": "rename_chat"}}</tool_call>',
        [_call("rename_chat", name="rename_chat")],
    ),
    "rename_chat_real_name_argument": Case(
        '<tool_call>{"name": "rename_chat", "arguments": {"name": "Urlaub 2024 🌴"}}</tool_call>',
        [_call("rename_chat", name="Urlaub 2024 🌴")],
    ),
    "nested_name_not_a_known_tool": Case(
        '<tool_call>{"arguments": {"name": "Bob", "age": 3}}</tool_call>',
        malformed=True,
    ),
    "non_string_name": Case(
        '<tool_call>{"name": 42, "arguments": {}}</tool_call>',
        malformed=True,
    ),
    "functions_prefix_resolved": Case(
        '<tool_call>{"name": "functions.weather", "arguments": {"city": "Graz"}}</tool_call>',
        [_call("weather", city="Graz")],
    ),
    # ---------------------------------------------------------------- OpenAI shapes
    "openai_type_function_in_tags": Case(
        '<tool_call>{"type": "function", "function": {"name": "weather", '
        '"arguments": "{\\"city\\": \\"Madrid\\"}"}}</tool_call>',
        [_call("weather", city="Madrid")],
    ),
    "openai_function_only_bare": Case(
        '{"function": {"name": "get_time", "arguments": {"timezone": "Asia/Shanghai"}}}',
        [_call("get_time", timezone="Asia/Shanghai")],
    ),
    "openai_full_bare_with_id_chinese": Case(
        '好的。我来搜索一下。{"id": "call_1", "type": "function", "function": '
        '{"name": "web_search", "arguments": "{\\"query\\": \\"东京 天气\\"}"}}',
        [_call("web_search", query="东京 天气")],
        text="好的。我来搜索一下。",
    ),
    # ---------------------------------------------------------------- tricky strings
    "close_tag_and_braces_inside_string": Case(
        '<tool_call>{"name": "save_note", "arguments": {"title": "syntax", '
        '"content": "use {braces} and </tool_call> here"}}</tool_call>',
        [_call("save_note", title="syntax", content="use {braces} and </tool_call> here")],
    ),
    "escaped_quotes_and_backslash": Case(
        '<tool_call>{"name": "save_note", "arguments": {"title": "Zitat", '
        '"content": "Er sagte: \\"Hallo {Welt}\\" \\\\ Ende"}}</tool_call>',
        [_call("save_note", title="Zitat", content='Er sagte: "Hallo {Welt}" \\ Ende')],
    ),
    "apostrophes_inside_double_quotes_bare": Case(
        '{"name": "set_reminder", "arguments": {"text": "Don\'t forget Anna\'s cake }", '
        '"when": "tomorrow 9am"}}',
        [_call("set_reminder", text="Don't forget Anna's cake }", when="tomorrow 9am")],
    ),
    "chinese_reminder": Case(
        '<tool_call>\n{"name": "set_reminder", "arguments": '
        '{"text": "给妈妈打电话", "when": "明天上午十点"}}\n</tool_call>',
        [_call("set_reminder", text="给妈妈打电话", when="明天上午十点")],
    ),
    "nested_objects": Case(
        "<tool_call>"
        + _j(
            {
                "name": "create_poll",
                "arguments": {
                    "question": "Wohin am Wochenende?",
                    "options": [{"label": "Berg", "emoji": "⛰️"}, {"label": "See", "emoji": "🏞"}],
                    "settings": {"anonymous": True, "limits": {"votes": 1, "hours": [1, 24]}},
                },
            }
        )
        + "</tool_call>",
        [
            _call(
                "create_poll",
                question="Wohin am Wochenende?",
                options=[{"label": "Berg", "emoji": "⛰️"}, {"label": "See", "emoji": "🏞"}],
                settings={"anonymous": True, "limits": {"votes": 1, "hours": [1, 24]}},
            )
        ],
    ),
    "hallucinated_tool_response_removed": Case(
        '<tool_call>{"name": "weather", "arguments": {"city": "Berlin"}}</tool_call>\n'
        '<tool_response>{"name": "save_note", "content": "sunny"}</tool_response>\n'
        "In Berlin ist es sonnig.",
        [BERLIN],
        text="In Berlin ist es sonnig.",
    ),
    # Shapes met with Qwen2.5-Coder-1.5B in the eval (issue 11).
    "own_call_wrapped_in_tool_response": Case(
        '<tool_response>\n{"name": "weather", "arguments": {"city": "Berlin"}}\n</tool_response>',
        [BERLIN],
    ),
    "chatml_function_calling_prefix_in_text": Case(
        'functions.weather:\n{"city": "Berlin"}',
        [BERLIN],
    ),
    "chatml_prefix_left_without_arguments_is_not_shown": Case("functions.weather:", text=""),
    "chatml_prefix_of_a_tool_not_offered_is_no_call": Case(
        'functions.rm_rf:\n{"city": "Berlin"}', text='{"city": "Berlin"}'
    ),
    "unclosed_tool_response_dropped": Case(
        'Moment.\n<tool_response>\n{"name": "save_note", "content": "x"}',
        text="Moment.",
    ),
    "echoed_openai_tool_definition_is_not_a_call": Case(
        'Tools: {"type": "function", "function": {"name": "get_time", "description": "Time", '
        '"parameters": {"type": "object", "properties": {}}}}',
        text=Contains('"description": "Time"'),
    ),
    # ---------------------------------------------------------------- tool_calls: []
    "json_empty_tool_calls": Case('{"tool_calls": []}'),
    "json_empty_tool_calls_after_answer": Case(
        'Paris is the capital of France.\n{"tool_calls": []}',
        text="Paris is the capital of France.",
    ),
    "json_empty_tool_calls_fenced": Case(
        'Guten Morgen! ☀️\n```json\n{"tool_calls": []}\n```',
        text="Guten Morgen! ☀️",
    ),
    # ---------------------------------------------------------------- malformed in tags
    "broken_json_in_tags": Case(
        '<tool_call>{"name": "weather", "arguments": {"city": </tool_call>',
        malformed=True,
    ),
    "broken_block_then_good_block": Case(
        '<tool_call>{"name": "weather", "arguments": {"city": </tool_call>\n'
        '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>',
        [_call("get_time")],
        malformed=True,
    ),
    "missing_closing_brace_in_tags": Case(
        'Let me check.\n<tool_call>\n{"name": "weather", "arguments": {"city": "Berlin"}\n'
        "</tool_call>",
        malformed=True,
        text="Let me check.",
    ),
    "non_call_object_in_tags": Case(
        '<tool_call>{"city": "Berlin"}</tool_call>',
        malformed=True,
    ),
    "string_in_tags": Case('<tool_call>"weather"</tool_call>', malformed=True),
    "prose_in_tags": Case(
        "<tool_call>weather for Berlin please</tool_call>",
        malformed=True,
    ),
    "empty_tags": Case("<tool_call></tool_call>", malformed=True),
    "tool_calls_entry_without_name": Case(
        '{"tool_calls": [{"name": "weather", "parameters": {"city": "Bern"}}, '
        '{"parameters": {"city": "Genf"}}]}',
        [_call("weather", city="Bern")],
        malformed=True,
    ),
    "tool_calls_not_an_array": Case(
        '<tool_call>{"tool_calls": "weather"}</tool_call>',
        malformed=True,
    ),
    # ---------------------------------------------------------------- bare JSON that is text
    "json_example_in_prose": Case(
        'The API expects a body like {"city": "Berlin"} — just send that.',
        text='The API expects a body like {"city": "Berlin"} — just send that.',
    ),
    "person_record_in_prose": Case(
        'Here is the record: {"name": "Bob", "age": 3}',
        text='Here is the record: {"name": "Bob", "age": 3}',
    ),
    "broken_bare_json_stays_text": Case(
        'Try {"name": "weather", "arguments": {"city": "Berlin"} and see.',
        text='Try {"name": "weather", "arguments": {"city": "Berlin"} and see.',
    ),
    "echoed_tool_definition_is_not_a_call": Case(
        'I can use this tool: {"name": "weather", "description": "Get the weather", '
        '"parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}',
        text=Contains('"description": "Get the weather"'),
    ),
    "set_notation_and_braces_in_prose": Case(
        "In math, {1, 2, 3} is a set and [a, b] a list; {this} is not JSON.",
        text="In math, {1, 2, 3} is a set and [a, b] a list; {this} is not JSON.",
    ),
    "known_tool_name_only_bare": Case('{"name": "summarize_chat"}', [_call("summarize_chat")]),
    "flattened_known_tool_bare": Case(
        '{"name": "weather", "city": "Hamburg"}', [_call("weather", city="Hamburg")]
    ),
    "unknown_tool_with_arguments_bare": Case(
        'Übersetze ich: {"name": "translate", "arguments": {"text": "hi", "to": "de"}}',
        [_call("translate", text="hi", to="de")],
        text="Übersetze ich:",
    ),
    "inline_fenced_call_in_sentence": Case(
        'Moment, ```json {"name": "get_time", "arguments": {"timezone": "UTC"}}``` ich schaue.',
        [_call("get_time", timezone="UTC")],
        text="Moment, ich schaue.",
    ),
    "inline_call_in_sentence": Case(
        'Ok {"name": "get_time", "arguments": {}} gleich da.',
        [_call("get_time")],
        text="Ok gleich da.",
    ),
    # ---------------------------------------------------------------- deepseek
    "ds_tool_code_block": Case(
        '<tool_code>\n{"name": "weather", "arguments": {"city": "Berlin"}}\n</tool_code>',
        [BERLIN],
    ),
    "ds_tool_code_inline": Case(
        '<tool_code>{"name":"get_time","arguments":{"timezone":"Asia/Tokyo"}}</tool_code>',
        [_call("get_time", timezone="Asia/Tokyo")],
    ),
    "ds_tool_code_two_blocks": Case(
        '<tool_code>{"name": "weather", "arguments": {"city": "Berlin"}}</tool_code>\n'
        '<tool_code>{"name": "weather", "arguments": {"city": "Wien"}}</tool_code>',
        [BERLIN, _call("weather", city="Wien")],
    ),
    "ds_tool_code_prose_before": Case(
        "Let me check.\n"
        '<tool_code>\n{"name": "web_search", "arguments": {"query": "Mars rover"}}\n</tool_code>',
        [_call("web_search", query="Mars rover")],
        text="Let me check.",
    ),
    "ds_tool_code_fenced_inside": Case(
        '<tool_code>\n```json\n{"name": "weather", "arguments": {"city": "Berlin"}}\n```\n'
        "</tool_code>",
        [BERLIN],
    ),
    "ds_tool_code_unclosed": Case(
        '<tool_code>\n{"name": "weather", "arguments": {"city": "Berlin"}}',
        [BERLIN],
    ),
    "ds_tool_code_arguments_string": Case(
        '<tool_code>{"name": "weather", "arguments": "{\\"city\\": \\"Berlin\\"}"}</tool_code>',
        [BERLIN],
    ),
    "ds_tool_code_broken_json": Case(
        '<tool_code>{"name": "weather", "arguments": {"city": }</tool_code>',
        malformed=True,
    ),
    "ds_tool_code_after_think": Case(
        "<think>The user wants Tokyo time.</think>\n"
        '<tool_code>{"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}</tool_code>',
        [_call("get_time", timezone="Asia/Tokyo")],
    ),
    "ds_tool_code_inside_think_ignored": Case(
        '<think>Maybe <tool_code>{"name": "weather", "arguments": {"city": "Rom"}}</tool_code>'
        "? No.</think>Hello!",
        text="Hello!",
    ),
    "ds_made_up_tool_output_dropped": Case(
        '<tool_output>\n{"name": "weather", "content": {"temp": 3}}\n</tool_output>\n'
        "It is 3 degrees in Berlin.",
        text="It is 3 degrees in Berlin.",
    ),
    "ds_call_wrapped_in_tool_output": Case(
        '<tool_output>{"name": "weather", "arguments": {"city": "Berlin"}}</tool_output>',
        [BERLIN],
    ),
    "ds_raw_v3_fenced": Case(
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>weather\n"
        '```json\n{"city": "Berlin"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        [BERLIN],
    ),
    "ds_raw_v31_plain": Case(
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>"
        '{"timezone": "Asia/Tokyo"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        [_call("get_time", timezone="Asia/Tokyo")],
    ),
    "ds_raw_two_calls": Case(
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>weather\n"
        '```json\n{"city": "Berlin"}\n```<｜tool▁call▁end｜>\n'
        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>weather\n"
        '```json\n{"city": "Paris"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        [BERLIN, _call("weather", city="Paris")],
    ),
    "ds_raw_with_prose_before": Case(
        "I'll check the weather.\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>weather"
        '<｜tool▁sep｜>{"city": "Berlin"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        [BERLIN],
        text="I'll check the weather.",
    ),
    "ds_raw_end_of_sentence": Case(
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}"
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>",
        [_call("get_time")],
    ),
    "ds_raw_ascii_lookalikes": Case(
        "<|tool_calls_begin|><|tool_call_begin|>weather<|tool_sep|>"
        '{"city": "Berlin"}<|tool_call_end|><|tool_calls_end|>',
        [BERLIN],
    ),
    "ds_raw_truncated": Case(
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>weather<｜tool▁sep｜>{"city": "Berlin"}',
        [BERLIN],
    ),
    "ds_raw_broken_arguments": Case(
        "<｜tool▁call▁begin｜>weather<｜tool▁sep｜>{city: Berlin<｜tool▁call▁end｜>",
        malformed=True,
    ),
    "ds_raw_no_arguments": Case(
        "<｜tool▁call▁begin｜>get_time<｜tool▁sep｜><｜tool▁call▁end｜>",
        [_call("get_time")],
    ),
    "ds_raw_after_r1_reasoning": Case(
        "The user asks about Berlin weather.\n</think>\n\n"
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>weather\n"
        '```json\n{"city": "Berlin"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        [BERLIN],
    ),
    "ds_raw_non_ascii_arguments": Case(
        "<｜tool▁call▁begin｜>save_note<｜tool▁sep｜>"
        '{"title": "购物", "content": "买牛奶 <think>不要忘记</think>"}<｜tool▁call▁end｜>',
        [_call("save_note", title="购物", content="买牛奶 <think>不要忘记</think>")],
    ),
    "ds_prose_mentioning_tool_code_stays_text": Case(
        "Use a tool_code block when you script this, like the docs say.",
        text="Use a tool_code block when you script this, like the docs say.",
    ),
    "ds_unknown_tool_in_tool_code_is_still_a_call": Case(
        '<tool_code>{"name": "book_flight", "arguments": {"to": "Rome"}}</tool_code>',
        [_call("book_flight", to="Rome")],
    ),
    "markdown_answer_no_calls": Case(
        "## Zusammenfassung\n\n- Anna: kommt um 19 Uhr\n- Ben: bringt `{Salat}` mit\n\n"
        "Sonst noch was?",
        text="## Zusammenfassung\n\n- Anna: kommt um 19 Uhr\n- Ben: bringt `{Salat}` mit\n\n"
        "Sonst noch was?",
    ),
}

assert len(CORPUS) >= 45


@pytest.mark.parametrize("case", [pytest.param(c, id=i) for i, c in CORPUS.items()])
def test_corpus(case: Case) -> None:
    reply = parse_tool_calls(case.raw, TOOLS)

    assert [(c.name, c.arguments) for c in reply.calls] == case.calls
    assert bool(reply.malformed) is case.malformed, reply.malformed
    if isinstance(case.text, Contains):
        assert str(case.text) in reply.text
        assert "<tool_call>" not in reply.text
    else:
        assert reply.text == case.text
    for problem in reply.malformed:
        assert problem.problem
        assert problem.raw
        assert len(problem.raw) <= 300


def test_result_types() -> None:
    reply = parse_tool_calls('<tool_call>{"name": "get_time", "arguments": {}}</tool_call>')
    assert reply == ParsedReply(text="", calls=(ParsedCall("get_time", {}),), malformed=())


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        pytest.param(
            '<tool_call>{"name": "weather", "arguments": {"city": </tool_call>',
            "invalid JSON: Expecting value: line 1 column 42",
            id="broken_json",
        ),
        pytest.param(
            '<tool_call>{"name": "weather" "arguments": {}}</tool_call>',
            "invalid JSON: Expecting ',' delimiter: line 1 column 20",
            id="missing_comma",
        ),
        pytest.param(
            '<tool_call>{"name": 42, "arguments": {}}</tool_call>',
            "tool name must be a string, got number",
            id="number_name",
        ),
        pytest.param(
            '<tool_call>{"name": "weather", "arguments": [1]}</tool_call>',
            "arguments must be a JSON object, got array",
            id="list_arguments",
        ),
        pytest.param(
            '<tool_call>{"name": "weather", "arguments": "[1]"}</tool_call>',
            "arguments string does not decode to an object (got array)",
            id="string_list_arguments",
        ),
        pytest.param(
            '<tool_call>{"city": "Berlin"}</tool_call>', "missing tool name", id="no_name"
        ),
        pytest.param(
            '<tool_call>{"name": "  ", "arguments": {}}</tool_call>',
            "empty tool name",
            id="blank_name",
        ),
        pytest.param("<tool_call>\n</tool_call>", "empty <tool_call> block", id="empty"),
    ],
)
def test_malformed_problem_messages(raw: str, problem: str) -> None:
    reply = parse_tool_calls(raw, TOOLS)
    assert reply.calls == ()
    assert [m.problem for m in reply.malformed] == [problem]
    assert reply.malformed[0].raw == raw.strip()


def test_malformed_raw_is_truncated() -> None:
    raw = (
        '<tool_call>{"name": "save_note", "arguments": {"content": "' + "x" * 1000 + "</tool_call>"
    )
    reply = parse_tool_calls(raw, TOOLS)
    (problem,) = reply.malformed
    assert isinstance(problem, MalformedCall)
    assert 250 <= len(problem.raw) <= 300
    assert problem.raw.startswith('<tool_call>{"name": "save_note"')


def test_known_tool_shapes_need_tool_parameters() -> None:
    # Without knowing the tools, a bare {"name": ...} is just data in prose.
    assert parse_tool_calls('{"name": "summarize_chat"}').calls == ()
    assert parse_tool_calls('{"name": "summarize_chat"}').text == '{"name": "summarize_chat"}'
    # ...and a name hidden in the arguments cannot be trusted.
    nested = parse_tool_calls('<tool_call>{"arguments": {"name": "weather"}}</tool_call>')
    assert nested.calls == ()
    assert len(nested.malformed) == 1
    # The repeated name is only dropped when we know the tool has no "name" parameter.
    repeated = '<tool_call>{"name": "get_time", "arguments": {"name": "get_time"}}</tool_call>'
    assert parse_tool_calls(repeated).calls == (ParsedCall("get_time", {"name": "get_time"}),)


def test_flattened_bare_object_with_unknown_key_is_text() -> None:
    raw = 'Result: {"name": "weather", "city": "Hamburg", "temperature": 12}'
    reply = parse_tool_calls(raw, TOOLS)
    assert reply.calls == ()
    assert reply.text == raw


def test_too_deep_nesting_is_not_a_call() -> None:
    deep = "[" * 5000 + "]" * 5000
    bare = parse_tool_calls('{"name": "weather", "arguments": {"x": ' + deep + "}}", TOOLS)
    assert bare.calls == ()
    tagged = parse_tool_calls(
        '<tool_call>{"name": "weather", "arguments": {"x": ' + deep + "}}</tool_call>", TOOLS
    )
    assert tagged.calls == ()
    assert [m.problem for m in tagged.malformed] == ["JSON nested deeper than 100 levels"]


# --------------------------------------------------------------------------- robustness

_NOISE = [
    "{",
    "}",
    "[",
    "]",
    '"',
    "'",
    "\\",
    ",",
    ":",
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
    "```",
    "```json\n",
    '{"name": ',
    '"arguments": ',
    '{"tool_calls": [',
    "null",
    "True",
    "\n",
    "ü",
    "东",
]


def _check_never_raises(raw: str, tools: dict[str, frozenset[str]] | None) -> None:
    # The internal parser, not the public wrapper: its last-resort fallback would hide bugs.
    reply = _parse(raw, tools or {})
    assert isinstance(reply, ParsedReply)
    assert isinstance(reply.text, str)
    assert reply.text == reply.text.strip()
    for call in reply.calls:
        assert isinstance(call.name, str)
        assert call.name
        assert isinstance(call.arguments, dict)
        assert all(isinstance(key, str) for key in call.arguments)
    for problem in reply.malformed:
        assert isinstance(problem.raw, str)
        assert isinstance(problem.problem, str)
        assert problem.problem


def test_prefixes_of_corpus_never_raise() -> None:
    for case in CORPUS.values():
        for end in range(len(case.raw) + 1):
            _check_never_raises(case.raw[:end], TOOLS)


def test_random_mutations_never_raise() -> None:
    rng = random.Random(20240601)
    sources = [case.raw for case in CORPUS.values()]
    for _ in range(3000):
        chars = list(rng.choice(sources))
        for _ in range(rng.randint(1, 6)):
            action = rng.random()
            position = rng.randint(0, len(chars))
            if action < 0.4 and chars:
                del chars[min(position, len(chars) - 1)]
            elif action < 0.8:
                chars.insert(position, rng.choice(_NOISE))
            else:
                start = rng.randint(0, len(chars))
                chars[start:start] = chars[position : position + rng.randint(1, 40)]
        _check_never_raises("".join(chars), rng.choice([TOOLS, None]))


def test_random_garbage_never_raises() -> None:
    rng = random.Random(7)
    for _ in range(1000):
        raw = "".join(rng.choice(_NOISE) for _ in range(rng.randint(0, 40)))
        _check_never_raises(raw, TOOLS)


def test_large_unbalanced_input_finishes() -> None:
    raw = "{ " * 2000 + '{"name": "get_time", "arguments": {}}'
    reply = parse_tool_calls(raw, TOOLS)
    assert reply.calls == (ParsedCall("get_time", {}),)


def test_bracket_soup_beyond_the_scan_budget_stays_text() -> None:
    soup = '{"' + '\\"{' * 100_000
    reply = _parse(soup + " done", TOOLS)
    assert reply.calls == () and reply.malformed == ()
    assert reply.text.endswith("done")
    tagged = _parse(soup + '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>', TOOLS)
    # A tagged call after the budget is spent is reported, never silently dropped.
    assert len(tagged.calls) + len(tagged.malformed) == 1
