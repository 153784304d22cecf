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
from groupmate.function_calls.seen_marks import SeenMarks
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
from groupmate.storage.search import MessageSearch
from groupmate.storage.usage import UsageLog, UsageReader

BUILTIN_TYPES: frozenset[type[Any]] = frozenset(
    {
        ReminderService,
        ReminderReader,
        ChatLog,
        ChatLogReader,
        UsageLog,
        UsageReader,
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
        SeenMarks,
    }
)

# What can change the bot's state (reminders, settings, the chat log, the audit trail,
# the token usage, the search index, the database itself): only a tool declared
# effect="write" may ask for one (checked when it is built; the database handle, none),
# and no plugin's service may; the others read through `ReminderReader`,
# `ChatLogReader`, `AuditReader`, `UsageReader` and the memory family's `SearchReader`.
WRITE_TYPES: frozenset[type[Any]] = frozenset(
    {ReminderService, ChatLog, AuditLog, UsageLog, MessageSearch, Database}
)

# The bookkeeping a read tool may keep about its own reading, each a narrow writer of one
# fact (where someone was caught up to), never of what a person asks the bot to change:
# a read tool asks for these by type, and for nothing in WRITE_TYPES nor a PluginStore
# (which writes anything of its plugin's); tests/test_roles.py holds every built-in
# read tool to that.
BOOKKEEPING_TYPES: frozenset[type[Any]] = frozenset({SeenMarks})

# What a plugin's service may ask for besides its plugin's settings and earlier services:
# the bot's services that exist before plugins start (the model's client, the tool list
# and the commands come after them; a chat's progress line and store belong to a call),
# none that writes: it reads through `ReminderReader`, and changes state only through
# `PluginTools` (the invoker, as the plugin), so that policy and audit see it.
SERVICE_TYPES: frozenset[type[Any]] = (
    BUILTIN_TYPES
    - {TextCompleter, ScheduledCommands, AbstractToolset, Progress, PluginStore}
    - WRITE_TYPES
    - BOOKKEEPING_TYPES
) | {PluginTools}

# groupmate's own families' services may also have the database handle: the memory
# family keeps the chat's search index in step with the chat log.
BUILTIN_SERVICE_TYPES: frozenset[type[Any]] = SERVICE_TYPES | {Database}
