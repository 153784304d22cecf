"""A plugin whose handler raises, and one whose service does not start."""

from __future__ import annotations

from groupmate import tool_function


@tool_function(description="Always breaks.", command="breakit")
async def break_it() -> str:
    raise RuntimeError("internal detail: connection to 10.0.0.7 refused")
