"""Tool instructions and tool results for models without native tool calling ("prompt mode").

``hermes`` follows the Qwen2.5 / Hermes chat-template wording, which these models were
trained on; ``json`` follows Open WebUI's ``{"tool_calls": [...]}`` convention; ``deepseek``
puts the tools in ``<available_tools>`` and reads calls from ``<tool_code>``, as
DeepSeek-style templates do. The parser in :mod:`function_calls.prompt_parser` accepts
all of them, whichever one was asked for.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = [
    "PROMPT_FORMATS",
    "PromptFormat",
    "WorkedExample",
    "render_tool_instructions",
    "render_tool_results",
]

PromptFormat = Literal["hermes", "json", "deepseek"]
PROMPT_FORMATS: tuple[str, ...] = ("hermes", "json", "deepseek")

_HERMES_TEMPLATE: Final = """\
# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{tools}
</tools>

For each function call, return a json object with function name and arguments within \
<tool_call></tool_call> XML tags:
<tool_call>
{{"name": <function-name>, "arguments": <args-json-object>}}
</tool_call>

You may make several function calls at once: return one <tool_call></tool_call> block per call.
The results will be given to you in <tool_response></tool_response> blocks.
If no function is needed, answer the user directly in plain text."""

_JSON_TEMPLATE: Final = """\
# Tools

You may call one or more tools to assist with the user query.

The available tools are described within <tools></tools> XML tags, one JSON object per line:
<tools>
{tools}
</tools>

When you want to use tools, reply with ONLY a JSON object of this exact shape, \
with no other text before or after it:
{{"tool_calls": [{{"name": <tool-name>, "parameters": <args-json-object>}}]}}

- "name" is the tool's name and "parameters" is a JSON object with its arguments, \
following the tool's parameter schema.
- You may call several tools at once: add one entry per call to the "tool_calls" array.
- The results will be given to you in <tool_response></tool_response> blocks.
- If no tool is needed, answer the user in plain text, without any JSON."""

_DEEPSEEK_TEMPLATE: Final = """\
# Tools

You have access to the tools described within <available_tools></available_tools> tags, \
one JSON object per line:
<available_tools>
{tools}
</available_tools>

To call a tool, reply with a <tool_code></tool_code> block that holds a JSON object with the \
tool's name and its arguments:
<tool_code>
{{"name": <tool-name>, "arguments": <args-json-object>}}
</tool_code>

You may call several tools at once: return one <tool_code></tool_code> block per call.
The results will be given to you in <tool_output></tool_output> blocks.
If no tool is needed, answer the user directly in plain text."""

_TEMPLATES: Final[Mapping[str, str]] = {
    "hermes": _HERMES_TEMPLATE,
    "json": _JSON_TEMPLATE,
    "deepseek": _DEEPSEEK_TEMPLATE,
}
# The block each format's results come back in.
_RESULT_TAGS: Final[Mapping[str, str]] = {
    "hermes": "tool_response",
    "json": "tool_response",
    "deepseek": "tool_output",
}

# Replies that need no tool, shown after the worked calls: a small model shown only
# calls calls a tool for "thanks!" too.
_PLAIN_REPLIES: Final = (
    ("hello there!", "Hello! How can I help?"),
    ("thanks, that helps!", "You're welcome!"),
    ("what is 6 times 7?", "6 times 7 is 42."),
)


@dataclass(frozen=True, slots=True)
class WorkedExample:
    """A message and the one call it should become, for the prompt's examples."""

    said: str
    tool: str
    arguments: Mapping[str, Any]


def render_tool_instructions(
    tools: Sequence[Mapping[str, Any]],
    prompt_format: PromptFormat,
    examples: Sequence[WorkedExample] = (),
) -> str:
    """System-prompt section describing ``tools`` (OpenAI tool definitions) and the call
    format, then ``examples`` of messages and the calls they become.

    Returns ``""`` when there are no tools: instructions for calling nothing only confuse.
    """
    template = _TEMPLATES.get(prompt_format)
    if template is None:
        raise ValueError(
            f"unknown prompt format {prompt_format!r}; expected one of {PROMPT_FORMATS}"
        )
    if not tools:
        return ""
    # Compact and non-ASCII-preserving: the tool list is paid for in prompt tokens on every turn.
    lines = "\n".join(
        json.dumps(_plain(tool), ensure_ascii=False, separators=(",", ":")) for tool in tools
    )
    instructions = template.format(tools=lines)
    if not examples:
        return instructions
    shown = [
        f"User: {example.said}\nYou:\n{_render_call(example, prompt_format)}"
        for example in examples
    ]
    shown.extend(f"User: {said}\nYou: {answer}" for said, answer in _PLAIN_REPLIES)
    return instructions + "\n\n# Examples\n\n" + "\n\n".join(shown)


def tool_text(
    tool: Mapping[str, Any], prompt_format: PromptFormat, examples: Sequence[WorkedExample] = ()
) -> str:
    """What one tool adds to `render_tool_instructions`: its line and its worked
    examples (for sizing a prompt before it is built)."""
    line = json.dumps(_plain(tool), ensure_ascii=False, separators=(",", ":"))
    shown = [f"User: {e.said}\nYou:\n{_render_call(e, prompt_format)}" for e in examples]
    return "\n\n".join([line, *shown])


@functools.cache  # the same few strings for every message
def frame_text(prompt_format: PromptFormat) -> str:
    """What `render_tool_instructions` adds whatever the tools: the format's explanation
    and the plain replies among the examples."""
    plain = "\n\n".join(f"User: {said}\nYou: {answer}" for said, answer in _PLAIN_REPLIES)
    return _TEMPLATES[prompt_format].format(tools="") + "\n\n# Examples\n\n" + plain


def _render_call(example: WorkedExample, prompt_format: PromptFormat) -> str:
    arguments = _plain(example.arguments)
    if prompt_format == "json":
        call = {"tool_calls": [{"name": example.tool, "parameters": arguments}]}
        return json.dumps(call, ensure_ascii=False)
    single = {"name": example.tool, "arguments": arguments}
    tag = "tool_code" if prompt_format == "deepseek" else "tool_call"
    return f"<{tag}>\n{json.dumps(single, ensure_ascii=False)}\n</{tag}>"


def render_tool_results(
    results: Sequence[tuple[str, str]], prompt_format: PromptFormat = "hermes"
) -> str:
    """Render ``(tool_name, content_json_text)`` pairs as the format's result blocks
    (``<tool_response>``, or ``<tool_output>`` for deepseek).

    The content is embedded as JSON when it parses, so the model sees structure rather than
    an escaped string; anything else is embedded as a string.
    """
    blocks: list[str] = []
    for name, content in results:
        payload = {"name": name, "content": _decoded_or_text(content)}
        # Escaping "<" keeps third-party data from closing the block or opening a
        # <tool_call> of its own; the JSON still decodes to the same value.
        text = json.dumps(payload, ensure_ascii=False).replace("<", "\\u003c")
        tag = _RESULT_TAGS[prompt_format]
        blocks.append(f"<{tag}>\n{text}\n</{tag}>")
    return "\n".join(blocks)


def _decoded_or_text(content: str) -> Any:
    try:
        return json.loads(content)
    except (ValueError, RecursionError):
        return content


def _plain(value: Any) -> Any:
    """Copy nested mappings/sequences into dicts/lists so ``json.dumps`` accepts them."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray):
        return [_plain(item) for item in value]
    return value
