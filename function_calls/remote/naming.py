"""Names for tools that come from other servers: `<prefix><name>`, within the API's rules
(`exposed_name`, which a `PrefixedToolset` renames with)."""

from __future__ import annotations

import re

from groupmate.function_calls.toolsets import MAX_TOOL_NAME, exposed_name

__all__ = ["MAX_TOOL_NAME", "default_prefix", "exposed_name"]

_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")


def default_prefix(server: str) -> str:
    """`<server>__`, the prefix a server's tools get unless its config names another."""
    return f"{_NOT_ALLOWED.sub('_', server)}__"
