"""The name the model sees for a tool a server or a prefix spells. Apart from the sets so
that reading a config (an MCP server's default prefix) imports no tool machinery."""

from __future__ import annotations

import hashlib
import re

# The OpenAI API's rule for function names.
MAX_TOOL_NAME = 64
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")


def exposed_name(prefix: str, name: str) -> str:
    """The name the model sees for a tool spelled `name` (a server's own spelling).

    Characters the API does not allow become "_". A name that would be too long keeps
    its start and ends in a short hash of the whole, so two long names stay distinct and
    the same name always maps to the same tool.
    """
    full = _NOT_ALLOWED.sub("_", f"{prefix}{name}")
    if len(full) <= MAX_TOOL_NAME:
        return full
    digest = hashlib.sha256(f"{prefix}{name}".encode()).hexdigest()[:8]
    return f"{full[: MAX_TOOL_NAME - len(digest) - 1]}_{digest}"
