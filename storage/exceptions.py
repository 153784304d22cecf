"""groupmate's exceptions: one tree, one root. Catch `GroupmateError` for any error the
bot raises on purpose; catch a branch for one kind. Every class is importable from
`groupmate` (`from groupmate import StorageError`), except the few that one module
raises and catches for its own control flow (named in tests/test_vocabulary.py).

Each class keeps the built-in base it had (`ValueError`, `LookupError`, `TimeoutError`
...), so an `except ValueError` that caught it still does.

    GroupmateError
    ├── StorageError                   storage.errors: the database and the reminders in it
    │   ├── StorageConfigError, StorageUnavailableError, NewerDatabaseError
    │   ├── ReminderNotFoundError ── SnoozeTargetError
    │   ├── ReminderPermissionError, ReminderStateError, ReminderChangedError
    │   ├── InvalidTimezoneError (ValueError), PluginValueError
    │   └── TransferError ── NotEmptyError   (export, import, backup)
    ├── SendError                      storage.outgoing: a message was not sent (text safe to log)
    │   └── Unreachable                the Matrix homeserver did not answer
    ├── FunctionCallError              function_calls.errors: tools and the model
    │   ├── ToolDefinitionError (TypeError) ── DuplicateToolError
    │   ├── ToolInvocationError        a call did not run: UnknownToolError (LookupError),
    │   │                              ToolHiddenError ── ToolSwitchedOffError,
    │   │                              ToolRateLimitedError, ToolTimeoutError (TimeoutError),
    │   │                              ToolFailedError, InvalidArgumentsError (ValueError)
    │   ├── ToolError                  a tool refused: its message is for the user
    │   └── LLMUnavailableError        the model's server did not answer
    ├── ConfigError                    bot.config: the config file is wrong
    ├── PluginError                    a plugin did not load
    ├── SearchError                    a search provider failed: SearchAuthError,
    │                                  SearchRateLimitError, SearchTimeoutError,
    │                                  SearchUnavailableError, SearchUnreadableError,
    │                                  SearchLimitError
    ├── LinkError                      a link was not read: LinkRefused, LinkUnreadable
    ├── ContextOverflowError           a prompt does not fit the model's window
    ├── GrammarError (ValueError)      a command grammar is wrong
    ├── CommandError, CommandWordsError (ValueError), ScaffoldError (ValueError)
    ├── a platform's API answered an error: ApiError (Telegram), MatrixError, LarkError,
    │   DingTalkError ── CredentialsRefused
    └── internal (one module raises and catches them): AmbiguousEdit, AudienceRefused,
        ActionRefused, ClaimConflictError, NotRetryableError, RowError, TemplateChanged,
        the HTTP API's Refused (its answer), and the Lark event reader's Refused and
        Malformed
"""

from __future__ import annotations

__all__ = ["GroupmateError"]


class GroupmateError(Exception):
    """The root of every error groupmate raises on purpose (see the module's tree)."""
