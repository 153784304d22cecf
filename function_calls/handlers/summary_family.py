"""The chat's memory of itself, one built-in family (`builtins: {summary: false}` leaves
it out): `summary` of a window, and `chat_catchup` since the asker last spoke."""

from groupmate.function_calls.handlers.catchup import chat_catchup
from groupmate.function_calls.handlers.summary import summary
from groupmate.function_calls.plugins.declare import Plugin

plugin = Plugin("summary")

__all__ = ["chat_catchup", "plugin", "summary"]
