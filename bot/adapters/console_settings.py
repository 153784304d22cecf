"""The `adapters.console` section: the terminal chat of `groupmate run`."""

from __future__ import annotations

from groupmate.function_calls.sections import Section


class ConsoleSettings(Section):
    enabled: bool = True
    """Shown as on or off by `groupmate check`. `groupmate chat` opens the terminal chat
    whatever this says."""
