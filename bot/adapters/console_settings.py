"""The `adapters.console` section: the terminal chat of `groupmate run`."""

from __future__ import annotations

from groupmate.function_calls.sections import Section


class ConsoleSettings(Section):
    enabled: bool = True
