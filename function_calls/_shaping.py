"""How the loop's messages are shaped, in native and in prompt mode: the transcript of
the earlier chat, the model's reply read into calls, and the results sent back."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from groupmate.function_calls.prompt_formats import PromptFormat, render_tool_results
from groupmate.function_calls.prompt_parser import parse_tool_calls
from groupmate.function_calls.registry import Tool
from groupmate.function_calls.tolerant_json import MalformedCall
from groupmate.function_calls.validation import ArgumentIssue

Message = dict[str, Any]
UNPARSABLE = "(unparsable tool call)"
BOT_NAME = "groupmate"
TRANSCRIPT_HEADER = "Earlier in this chat (for context; act only on the latest message):"


@dataclass(frozen=True, slots=True)
class ChatTurn:
    """An earlier message of the chat, given to the model as context."""

    role: Literal["user", "assistant"]
    content: str
    sender_name: str = ""


@dataclass(slots=True)
class Call:
    name: str
    raw_arguments: Any
    call_id: str | None = None


@dataclass(slots=True)
class ModelReply:
    text: str
    calls: list[Call]
    malformed: list[MalformedCall]
    assistant_message: Message
    native_results: bool


def render_user_message(history: Sequence[str], latest: str) -> str:
    """The one user message: the transcript lines (if any), then the latest message."""
    if not history:
        return latest
    return f"{TRANSCRIPT_HEADER}\n" + "\n".join(history) + f"\n\n{latest}"


def transcript_line(turn: ChatTurn) -> str:
    # One line per message: a multi-line message would read as several speakers.
    content = " ".join(turn.content.split())
    if turn.role == "assistant":
        return f"{BOT_NAME}: {content}"
    return f"{turn.sender_name or 'User'}: {content}"


def tool_parameters(tools: dict[str, Tool]) -> dict[str, frozenset[str]]:
    return {name: frozenset(tool.parameters.get("properties", {})) for name, tool in tools.items()}


def reply_from_text(content: str, tools: dict[str, Tool]) -> ModelReply:
    parsed = parse_tool_calls(content, tool_parameters(tools))
    calls = [Call(call.name, call.arguments) for call in parsed.calls]
    return ModelReply(
        parsed.text,
        calls,
        list(parsed.malformed),
        {"role": "assistant", "content": content},
        native_results=False,
    )


def native_calls(message: Any) -> list[Any]:
    return [
        tc for tc in (getattr(message, "tool_calls", None) or []) if getattr(tc, "function", None)
    ]


def reply_from_native(content: str, tool_calls: list[Any]) -> ModelReply:
    calls = [
        Call(tc.function.name or "", tc.function.arguments, tc.id or f"call_{index}")
        for index, tc in enumerate(tool_calls)
    ]
    assistant: Message = {
        "role": "assistant",
        # "" rather than null: llama-cpp-python's server answers HTTP 500 to a null
        # content; OpenAI, vLLM, Ollama and llama.cpp's server accept "".
        "content": content,
        "tool_calls": [
            {
                "id": call.call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": as_json_text(call.raw_arguments)},
            }
            for call in calls
        ],
    }
    return ModelReply(content, calls, [], assistant, native_results=True)


def as_json_text(raw: Any) -> str:
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False)


def result_messages(
    reply: ModelReply,
    contents: list[str],
    malformed_contents: list[str],
    prompt_format: PromptFormat = "hermes",
) -> list[Message]:
    if reply.native_results:
        return [
            {"role": "tool", "tool_call_id": call.call_id, "content": content}
            for call, content in zip(reply.calls, contents, strict=True)
        ]
    blocks = [(call.name, content) for call, content in zip(reply.calls, contents, strict=True)]
    blocks.extend((UNPARSABLE, content) for content in malformed_contents)
    return [{"role": "user", "content": render_tool_results(blocks, prompt_format)}]


def issue_payload(issue: ArgumentIssue) -> dict[str, str]:
    return {"path": issue.path, "problem": issue.problem, "received": issue.received}


def malformed_payload(problem: MalformedCall) -> dict[str, str]:
    return {
        "error": f"your tool call could not be parsed: {problem.problem}",
        "received": problem.raw,
        "fix": "Send the call again as valid JSON in the documented format.",
    }
