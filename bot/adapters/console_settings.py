"""The `adapters.console` section: the terminal chat of `groupmate run`."""

from __future__ import annotations

from groupmate.bot.sections import Section


class ConsoleSettings(Section):
    enabled: bool = True
