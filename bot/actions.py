"""Scheduled actions: a reminder that runs a command when it fires ("/remind every day
at 18:00 /summary", "/remind every monday at 9 /search python release notes").

At each occurrence the reminder engine claims the delivery (exactly once, as for any
reminder) and asks `ActionRunner` for the message: the command runs through the same
commands and invoker as a typed one, as the reminder's creator in its chat, with
`source: schedule` in the audit log. Its permission is checked again then: a creator no
longer allowed gets a message that says so, not a run. A digest (/summary, /catchup)
over a window with nothing new says "Quiet day" or posts nothing, as the chat chose; one
with no model, or the budget spent, is the offline digest, and says so.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from groupmate.bot.budget import TokenBudget
from groupmate.bot.commands import Commands
from groupmate.bot.contexts import Caller, ContextFactory, rights
from groupmate.function_calls import MessageContext, ToolInvoker
from groupmate.function_calls.audit import AuditSink, entry_for
from groupmate.function_calls.handlers.digest import gather_window
from groupmate.function_calls.handlers.reminder_words import format_local, late_note
from groupmate.function_calls.language import chat_language
from groupmate.function_calls.services import TextCompleter
from groupmate.storage import OutgoingMessage, ReminderReader, ScheduledAction
from groupmate.storage.chatlog import ChatLog
from groupmate.storage.deliveries import Claim
from groupmate.storage.vocabulary import SETTING_QUIET_DIGEST

log = logging.getLogger(__name__)

# Commands that change the bot's state or the chat's: run on a schedule, they would act
# on whatever is there at fire time, unseen. A reminder can't run them.
_NOT_SCHEDULED = frozenset(
    {"remind", "提醒", "cancel", "edit", "snooze", "pause", "resume", "settings", "tools",
     "tz", "forget", "start", "help"}
)  # fmt: skip
# Commands that digest the chat: over a quiet window they say so (or skip), and without
# a model they fall back to the offline digest.
_DIGESTS = frozenset({"summary", "catchup"})
_DEFAULT_WINDOW = timedelta(hours=24)  # a digest's first run: the last day


class BotCommands:
    """`ScheduledCommands` from the bot's commands (attached once they exist: the tools'
    context is built before the router that owns them)."""

    def __init__(self) -> None:
        self._commands: Commands | None = None
        self._invoker: ToolInvoker | None = None

    def attach(self, commands: Commands, invoker: ToolInvoker) -> None:
        self._commands, self._invoker = commands, invoker

    def known(self, command: str) -> bool:
        return self._commands is not None and self._commands.knows(command)

    def schedulable(self) -> list[str]:
        names = self._commands.names() if self._commands is not None else []
        return [f"/{name}" for name in names if name not in _NOT_SCHEDULED and name.isascii()]

    def refusal(self, ctx: MessageContext, command: str) -> str | None:
        if command in _NOT_SCHEDULED:
            return (
                f"/{command} can't run on a schedule; a reminder can run "
                f"{', '.join(self.schedulable())}"
            )
        assert self._commands is not None and self._invoker is not None  # known() said so
        tool = self._commands.tool_of(command)
        if tool is None or tool not in {t.name for t in self._invoker.offered(ctx)}:
            return f"you can't run /{command} here, so a reminder can't run it for you"
        return None


@dataclass(frozen=True, slots=True)
class _Run:
    """What one occurrence of an action produced: the report, or nothing (skipped)."""

    text: str | None


class ActionRunner:
    """The scheduler's `Act`: runs a reminder's action and writes its report."""

    def __init__(
        self,
        *,
        commands: Commands,
        scheduled: BotCommands,
        contexts: ContextFactory,
        reminders: ReminderReader,
        chatlog: ChatLog,
        llm: TextCompleter | None,
        budget: TokenBudget | None,
        admins: frozenset[str],
        audit: AuditSink | None = None,
    ) -> None:
        self._commands = commands
        self._scheduled = scheduled
        self._contexts = contexts
        self._reminders = reminders
        self._chatlog = chatlog
        self._llm = llm
        self._budget = budget
        self._admins = admins
        self._audit = audit

    async def __call__(self, claim: Claim, now: datetime) -> OutgoingMessage | None:
        action = claim.action
        assert action is not None  # the scheduler asks only for reminders with one
        admin = rights(self._admins, claim.created_by, claim.chat_type)
        ctx = await self._contexts.for_caller(
            Caller(
                chat_id=claim.chat_id,
                sender_id=claim.created_by,
                sender_name=claim.created_by_name,
                chat_type=claim.chat_type,
                source="schedule",
                auth="platform",  # the platform vouched for the creator when they set it
                is_admin=admin.is_admin,
                bot_admin=admin.bot_admin,
            )
        )
        try:
            run = await self._run(ctx, claim, action)
        except Exception:
            log.exception("reminder %s: running %s failed", claim.reminder_id, action.shown)
            run = _Run("Sorry, that failed on my side; it runs again next time.")
        if run.text is None:
            return None
        text = f"▶ {action.shown}{late_note(claim, now)}\n{run.text}"
        return OutgoingMessage(
            chat_id=claim.chat_id,
            text=text,
            kind="reminder",
            reminder_id=claim.reminder_id,
            occurrence=claim.occurrence,
        )

    async def _run(self, ctx: MessageContext, claim: Claim, action: ScheduledAction) -> _Run:
        # Checked again at each run: the creator may have lost the right (a tool made
        # admin-only, switched off in the chat) since they set it.
        why = self._scheduled.refusal(ctx, action.command)
        if why is not None:
            return _Run(f"This reminder couldn't run {action.shown}: {why}.")
        if action.command not in _DIGESTS:
            return _Run(await self._commands.run(ctx, action.command, action.args))
        since = await self._reminders.last_run(claim.reminder_id, claim.occurrence)
        since = since or claim.occurrence - _DEFAULT_WINDOW
        window = await gather_window(
            self._chatlog, self._reminders, claim.chat_id, since, claim.occurrence
        )
        said = [m for m in window.messages if not m.from_bot and not m.text.startswith("/")]
        # Written in the chat's language: Chinese when most of what was said is.
        lang = chat_language([m.text for m in said])
        # Quiet: nobody said anything but commands to the bot (setting this one, say).
        if not said:
            settings = await self._reminders.settings_of(claim.chat_id)
            if settings.get(SETTING_QUIET_DIGEST) == "skip":
                await self._record(ctx, action, "quiet day: nothing posted")
                return _Run(None)
            await self._record(ctx, action, "quiet day")
            return _Run(f"Quiet day: nothing new since {format_local(since, ctx.zone)}.")
        if action.command == "summary":  # /catchup falls back to the digest by itself
            why_offline = await self._offline_because(ctx)
            if why_offline is not None:
                await self._record(ctx, action, f"offline digest: {why_offline}")
                return _Run(f"({why_offline}: the offline digest.)\n{window.digest(lang)}")
            if not action.args:
                # The day's digest covers what was said since the last one, however much.
                hours = min((claim.occurrence - since).total_seconds() / 3600, 168.0)
                return _Run(await self._commands.tools.call(ctx, "summary", {"hours": hours}))
        return _Run(await self._commands.run(ctx, action.command, action.args))

    async def _record(self, ctx: MessageContext, action: ScheduledAction, detail: str) -> None:
        """The audit row of a run answered here, without its tool (a quiet day, the
        offline digest): every scheduled run is on record, as the invoker's are."""
        if self._audit is None:
            return
        tool = self._commands.tool_of(action.command) or action.command
        entry = entry_for(ctx, tool, "read", "ok", {"command": action.shown}, detail=detail)
        try:
            await self._audit.record(entry)
        except Exception:  # the run is done: a lost row must not turn it into a failure
            log.exception("audit entry for %s not queued", action.shown)

    async def _offline_because(self, ctx: MessageContext) -> str | None:
        """Why the model can't write this digest now (none configured, the budget is
        spent), or None when it can."""
        if self._llm is None:
            return "No language model here"
        if self._budget is not None and await self._budget.refusal(ctx) is not None:
            return "The language-model budget is spent for today"
        return None
