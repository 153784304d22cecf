"""What a remote tool returned, as text for the model."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from groupmate.function_calls.result import to_compact_json

# A tool result is read by the model on every later round of the turn: a page of text
# is plenty, and a huge one would crowd out the conversation.
MAX_RESULT_CHARS = 8_000


def limited(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    """`text`, cut to `limit` characters with a note that says so."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[cut: the tool returned {len(text):,} characters; this is the start]"


def content_text(content: Iterable[Any], structured: Any = None) -> str:
    """MCP content blocks as text. Text is kept; images, audio and binary resources are
    named, not passed on (the model could not read them here)."""
    # Here, not at the top: OpenAPI servers share `limited`, and need no MCP SDK.
    import mcp_types as types

    parts: list[str] = []
    for block in content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        elif isinstance(block, types.ImageContent):
            parts.append(f"[an image ({block.mime_type}) that is not shown here]")
        elif isinstance(block, types.AudioContent):
            parts.append(f"[audio ({block.mime_type}) that is not played here]")
        elif isinstance(block, types.ResourceLink):
            parts.append(f"[resource {block.name}: {block.uri}]")
        elif isinstance(block, types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, types.TextResourceContents):
                parts.append(resource.text)
            else:
                kind = resource.mime_type or "binary data"
                parts.append(f"[resource {resource.uri} ({kind}) that is not shown here]")
        else:
            parts.append(f"[{getattr(block, 'type', 'content')} that is not shown here]")
    text = "\n".join(parts)
    if not text and structured is not None:
        text = to_compact_json(structured)
    return text
