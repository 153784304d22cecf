"""The types the bot itself provides to handlers (see function_calls.deps): a parameter
of one of these types is filled from the bot's `Deps`, where the bot has one."""

from __future__ import annotations

from typing import Any

from groupmate.function_calls.confirmations import Confirmations
from groupmate.function_calls.deps import Progress
from groupmate.function_calls.links import PageFetcher
from groupmate.function_calls.plugin_calls import PluginTools
from groupmate.function_calls.plugin_store import PluginStore
from groupmate.function_calls.policy import ToolPolicy
from groupmate.function_calls.search import WebSearch
from groupmate.function_calls.services import (
    AudienceRules,
    DailyLimits,
    MemberDirectory,
    ScheduledCommands,
    TextCompleter,
)
from groupmate.function_calls.toolsets import AbstractToolset
from groupmate.storage import Database, ReminderService
from groupmate.storage.audit import AuditLog, AuditReader
from groupmate.storage.chatlog import ChatLog, ChatLogReader
from groupmate.storage.reader import ReminderReader
from groupmate.storage.usage import UsageLog

BUILTIN_TYPES: frozenset[type[Any]] = frozenset(
    {
        ReminderService,
        ReminderReader,
        ChatLog,
        ChatLogReader,
        UsageLog,
        AuditLog,
        AuditReader,
        WebSearch,
        PageFetcher,
        AbstractToolset,  # the invoker's tools (help and /tools list them)
        ToolPolicy,
        TextCompleter,
        MemberDirectory,
        AudienceRules,
        DailyLimits,
        Progress,
        PluginStore,
        Confirmations,
        ScheduledCommands,
    }
)

# What can change the bot's state (reminders, settings, the chat log, the audit trail,
# the database itself): only a tool declared effect="write" may ask for one (checked
# when it is built; the database handle, none), and no plugin's service may; the others
# read through `ReminderReader`, `ChatLogReader` and `AuditReader`.
WRITE_TYPES: frozenset[type[Any]] = frozenset({ReminderService, ChatLog, AuditLog, Database})

# What a plugin's service may ask for besides its plugin's settings and earlier services:
# the bot's services that exist before plugins start (the model's client, the tool list
# and the commands come after them; a chat's progress line and store belong to a call),
# none that writes: it reads through `ReminderReader`, and changes state only through
# `PluginTools` (the invoker, as the plugin), so that policy and audit see it.
SERVICE_TYPES: frozenset[type[Any]] = (
    BUILTIN_TYPES
    - {TextCompleter, ScheduledCommands, AbstractToolset, Progress, PluginStore}
    - WRITE_TYPES
    - {UsageLog}
) | {PluginTools}

# groupmate's own families' services may also have the database handle: the memory
# family keeps the chat's search index in step with the chat log.
BUILTIN_SERVICE_TYPES: frozenset[type[Any]] = SERVICE_TYPES | {Database}
