"""Names for tools that come from other servers: `<prefix><name>`, within the API's rules."""

from __future__ import annotations

import hashlib
import re

# The OpenAI API's rule for function names.
MAX_TOOL_NAME = 64
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")


def exposed_name(prefix: str, name: str) -> str:
    """The name the model sees for a server's tool `name`.

    Characters the API does not allow become "_". A name that would be too long keeps
    its start and ends in a short hash of the whole, so two long names stay distinct and
    the same name always maps to the same tool.
    """
    full = _NOT_ALLOWED.sub("_", f"{prefix}{name}")
    if len(full) <= MAX_TOOL_NAME:
        return full
    digest = hashlib.sha256(f"{prefix}{name}".encode()).hexdigest()[:8]
    return f"{full[: MAX_TOOL_NAME - len(digest) - 1]}_{digest}"


def default_prefix(server: str) -> str:
    """`<server>__`, the prefix a server's tools get unless its config names another."""
    return f"{_NOT_ALLOWED.sub('_', server)}__"
