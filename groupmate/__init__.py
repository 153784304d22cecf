"""groupmate's public API: the one import path for plugins and for programs that embed
the bot.

    from groupmate import FunctionResult, MessageContext, Plugin, PluginStore, tool_function
    from groupmate import Bot, FunctionCallLLM, IncomingMessage, ToolRegistry

The repository's folders `bot/`, `function_calls/` and `storage/` are installed as
`groupmate.bot`, `groupmate.function_calls` and `groupmate.storage` (the symbolic links
in this folder; the wheel holds copies), so nothing but `groupmate` lands in
site-packages. `groupmate.testing` is the test kit (a pytest plugin: see README, "Write
a plugin").
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from groupmate.storage.lazy import lazy_exports

if TYPE_CHECKING:
    from groupmate.bot import (
        Bot,
        Config,
        ConfigError,
        IncomingMessage,
        Reply,
        load_config,
        settle_heap,
    )
    from groupmate.bot.adapters.dingtalk_api import (
        CredentialsRefused,
        DingTalkError,
    )
    from groupmate.bot.adapters.lark_api import (
        LarkError,
    )
    from groupmate.bot.adapters.matrix_client import (
        MatrixError,
        Unreachable,
    )
    from groupmate.bot.adapters.telegram_api import (
        ApiError,
    )
    from groupmate.bot.scaffold import (
        ScaffoldError,
    )
    from groupmate.bot.tool_calls import (
        CommandError,
    )
    from groupmate.bot.tool_commands import (
        CommandWordsError,
    )
    from groupmate.function_calls import (
        AbstractToolset,
        ArgumentIssue,
        AuthMethod,
        CallSource,
        ChatTurn,
        ChatType,
        CombinedToolset,
        Deps,
        DuplicateToolError,
        Effect,
        Example,
        Failure,
        FunctionCallError,
        FunctionCallLLM,
        FunctionResult,
        FunctionToolset,
        InvalidArgumentsError,
        InvocationOutcome,
        LLMUnavailableError,
        MessageContext,
        NoArguments,
        Progress,
        PromptFormat,
        Scope,
        TextCompleter,
        Tool,
        ToolCall,
        ToolCallRecord,
        ToolDefinitionError,
        ToolError,
        ToolFailedError,
        ToolHiddenError,
        ToolInvocation,
        ToolInvocationError,
        ToolInvoker,
        ToolMode,
        ToolPolicy,
        ToolRateLimitedError,
        ToolRegistry,
        ToolRule,
        ToolSwitchedOffError,
        ToolTimeoutError,
        Touched,
        TurnEnding,
        TurnResult,
        UnknownToolError,
        ValidatedToolCall,
        Who,
        build_tool,
        tool_function,
        validation_context,
    )
    from groupmate.function_calls.context_window import (
        ContextOverflowError,
    )
    from groupmate.function_calls.grammar.spec import (
        GrammarError,
    )
    from groupmate.function_calls.links.fetch import (
        LinkError,
        LinkRefused,
        LinkUnreadable,
    )
    from groupmate.function_calls.plugin_calls import PluginTools
    from groupmate.function_calls.plugin_store import (
        JsonValue,
        PluginStore,
    )
    from groupmate.function_calls.plugins.declare import (
        Plugin,
    )
    from groupmate.function_calls.plugins.found import (
        PluginError,
    )
    from groupmate.function_calls.search._types import (
        SearchAuthError,
        SearchError,
        SearchLimitError,
        SearchRateLimitError,
        SearchTimeoutError,
        SearchUnavailableError,
        SearchUnreadableError,
    )
    from groupmate.storage.errors import (
        InvalidTimezoneError,
        NewerDatabaseError,
        NotEmptyError,
        ReminderChangedError,
        ReminderNotFoundError,
        ReminderPermissionError,
        ReminderStateError,
        SnoozeTargetError,
        StorageConfigError,
        StorageError,
        StorageUnavailableError,
        TransferError,
    )
    from groupmate.storage.exceptions import (
        GroupmateError,
    )
    from groupmate.storage.outgoing import (
        SendError,
    )
    from groupmate.storage.plugin_data import (
        PluginValueError,
    )

__all__ = [
    "AbstractToolset",
    "ApiError",
    "ArgumentIssue",
    "AuthMethod",
    "Bot",
    "CallSource",
    "ChatTurn",
    "ChatType",
    "CombinedToolset",
    "CommandError",
    "CommandWordsError",
    "Config",
    "ConfigError",
    "ContextOverflowError",
    "CredentialsRefused",
    "Deps",
    "DingTalkError",
    "DuplicateToolError",
    "Effect",
    "Example",
    "Failure",
    "FunctionCallError",
    "FunctionCallLLM",
    "FunctionResult",
    "FunctionToolset",
    "GrammarError",
    "GroupmateError",
    "IncomingMessage",
    "InvalidArgumentsError",
    "InvalidTimezoneError",
    "InvocationOutcome",
    "JsonValue",
    "LLMUnavailableError",
    "LarkError",
    "LinkError",
    "LinkRefused",
    "LinkUnreadable",
    "MatrixError",
    "MessageContext",
    "NewerDatabaseError",
    "NoArguments",
    "NotEmptyError",
    "Plugin",
    "PluginError",
    "PluginStore",
    "PluginTools",
    "PluginValueError",
    "Progress",
    "PromptFormat",
    "ReminderChangedError",
    "ReminderNotFoundError",
    "ReminderPermissionError",
    "ReminderStateError",
    "Reply",
    "ScaffoldError",
    "Scope",
    "SearchAuthError",
    "SearchError",
    "SearchLimitError",
    "SearchRateLimitError",
    "SearchTimeoutError",
    "SearchUnavailableError",
    "SearchUnreadableError",
    "SendError",
    "SnoozeTargetError",
    "StorageConfigError",
    "StorageError",
    "StorageUnavailableError",
    "TextCompleter",
    "Tool",
    "ToolCall",
    "ToolCallRecord",
    "ToolDefinitionError",
    "ToolError",
    "ToolFailedError",
    "ToolHiddenError",
    "ToolInvocation",
    "ToolInvocationError",
    "ToolInvoker",
    "ToolMode",
    "ToolPolicy",
    "ToolRateLimitedError",
    "ToolRegistry",
    "ToolRule",
    "ToolSwitchedOffError",
    "ToolTimeoutError",
    "Touched",
    "TransferError",
    "TurnEnding",
    "TurnResult",
    "UnknownToolError",
    "Unreachable",
    "ValidatedToolCall",
    "Who",
    "build_tool",
    "load_config",
    "settle_heap",
    "tool_function",
    "validation_context",
]

# Imported when first used (PEP 562), not with the package: every `groupmate.*` import
# runs this file first, and `groupmate --help` must not import the model client.
if not TYPE_CHECKING:
    __getattr__ = lazy_exports(
        __name__,
        {
            "groupmate.bot": (
                "Bot",
                "Config",
                "ConfigError",
                "IncomingMessage",
                "Reply",
                "load_config",
                "settle_heap",
            ),
            "groupmate.function_calls": (
                "AbstractToolset",
                "ArgumentIssue",
                "AuthMethod",
                "CallSource",
                "ChatTurn",
                "ChatType",
                "CombinedToolset",
                "Deps",
                "DuplicateToolError",
                "Effect",
                "Example",
                "Failure",
                "FunctionCallError",
                "FunctionCallLLM",
                "FunctionResult",
                "FunctionToolset",
                "InvalidArgumentsError",
                "InvocationOutcome",
                "LLMUnavailableError",
                "MessageContext",
                "NoArguments",
                "Progress",
                "PromptFormat",
                "Scope",
                "TextCompleter",
                "Tool",
                "ToolCall",
                "ToolCallRecord",
                "ToolDefinitionError",
                "ToolError",
                "ToolFailedError",
                "ToolHiddenError",
                "ToolInvocation",
                "ToolInvocationError",
                "ToolInvoker",
                "ToolMode",
                "ToolPolicy",
                "ToolRateLimitedError",
                "ToolRegistry",
                "ToolRule",
                "ToolSwitchedOffError",
                "ToolTimeoutError",
                "Touched",
                "TurnEnding",
                "TurnResult",
                "UnknownToolError",
                "ValidatedToolCall",
                "Who",
                "build_tool",
                "tool_function",
                "validation_context",
            ),
            "groupmate.function_calls.plugin_calls": ("PluginTools",),
            "groupmate.function_calls.plugin_store": (
                "JsonValue",
                "PluginStore",
            ),
            "groupmate.function_calls.plugins.declare": ("Plugin",),
            "groupmate.storage.exceptions": ("GroupmateError",),
            "groupmate.storage.errors": (
                "InvalidTimezoneError",
                "NewerDatabaseError",
                "NotEmptyError",
                "ReminderChangedError",
                "ReminderNotFoundError",
                "ReminderPermissionError",
                "ReminderStateError",
                "SnoozeTargetError",
                "StorageConfigError",
                "StorageError",
                "StorageUnavailableError",
                "TransferError",
            ),
            "groupmate.storage.outgoing": ("SendError",),
            "groupmate.storage.plugin_data": ("PluginValueError",),
            "groupmate.bot.adapters.dingtalk_api": ("CredentialsRefused", "DingTalkError"),
            "groupmate.bot.adapters.lark_api": ("LarkError",),
            "groupmate.bot.adapters.matrix_client": ("MatrixError", "Unreachable"),
            "groupmate.bot.adapters.telegram_api": ("ApiError",),
            "groupmate.bot.scaffold": ("ScaffoldError",),
            "groupmate.bot.tool_calls": ("CommandError",),
            "groupmate.bot.tool_commands": ("CommandWordsError",),
            "groupmate.function_calls.context_window": ("ContextOverflowError",),
            "groupmate.function_calls.grammar.spec": ("GrammarError",),
            "groupmate.function_calls.links.fetch": ("LinkError", "LinkRefused", "LinkUnreadable"),
            "groupmate.function_calls.plugins.found": ("PluginError",),
            "groupmate.function_calls.search._types": (
                "SearchAuthError",
                "SearchError",
                "SearchLimitError",
                "SearchRateLimitError",
                "SearchTimeoutError",
                "SearchUnavailableError",
                "SearchUnreadableError",
            ),
        },
    )
