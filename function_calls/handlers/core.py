"""The tools every bot has, whatever the config switches off: /help, /tools, deleting a
chat's data, and a group's follow-up setting."""

from groupmate.function_calls.handlers.chat_data import chat_data_delete
from groupmate.function_calls.handlers.chat_tools import chat_tools
from groupmate.function_calls.handlers.followup import followup_settings
from groupmate.function_calls.handlers.help import show_help
from groupmate.function_calls.plugins.declare import Plugin

plugin = Plugin("core")

__all__ = ["chat_data_delete", "chat_tools", "followup_settings", "plugin", "show_help"]
