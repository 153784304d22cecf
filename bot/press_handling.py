"""Acting on a press of a reminder's button, or a reaction that stands for one (issue 41):
as the person who pressed, with their rights, through the invoker (the tools policy and
the audit log apply as to any call), once per press.

The chat and the presser come from the platform's event; the button's data names only
the reminder, its occurrence and the action, and is checked against the store: a
reminder that is gone, or another chat's, is refused with a short answer and nothing
changes. A replay of a press (the same `press_id`) gets the first answer and changes
nothing.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from groupmate.bot.commands import Commands
from groupmate.bot.contexts import Caller, ContextFactory, rights
from groupmate.bot.messages import IncomingReaction, Reply
from groupmate.bot.press_buttons import offers_me_too, reminder_buttons
from groupmate.bot.presses import REACTION_PRESSES, ButtonData, Press, PressOutcome
from groupmate.bot.tool_calls import CommandError
from groupmate.function_calls import CallSource, MessageContext
from groupmate.function_calls.handlers.ack_words import (
    already_snoozed,
    done_status,
    me_too_status,
    snoozed_status,
)
from groupmate.function_calls.handlers.reminder_snooze import Snoozed
from groupmate.function_calls.handlers.reminder_words import reminder_message
from groupmate.function_calls.language import Lang, PlainSentence, language_of
from groupmate.function_calls.result import FunctionResult
from groupmate.storage import ReminderService, ReminderView, StorageError
from groupmate.storage.acks import AckResult, MeTooResult
from groupmate.storage.deliveries import Claim
from groupmate.storage.outgoing import Member, OutgoingMessage

log = logging.getLogger(__name__)

GONE = PlainSentence(
    "This reminder is gone; nothing was changed.", "这个提醒已经不在了，什么都没有改。"
)
FAILED = PlainSentence(
    "Sorry, that didn't work on my side; please try again.", "抱歉，我这边出错了，请再试一次。"
)
NO_REMINDERS = PlainSentence(
    "Reminders are not enabled here; nothing was changed.", "这里没有启用提醒，什么都没有改。"
)
_MINUTES = {"10m": 10, "1h": 60}
# The "tomorrow" snooze, as the snooze tool reads it: 09:00 in the chat's zone.
TOMORROW = PlainSentence("tomorrow at 9:00", "明天上午9点")


class PressHandler:
    """Presses and the reactions that stand for them; see the module's docstring."""

    def __init__(
        self,
        *,
        admins: frozenset[str],
        commands: Commands,
        contexts: ContextFactory,
        reminders: ReminderService,
        clock: Callable[[], datetime],
    ) -> None:
        self._admins = admins
        self._commands = commands
        self._contexts = contexts
        self._reminders = reminders
        self._clock = clock

    async def press(self, press: Press, source: CallSource = "button") -> PressOutcome:
        """Act on `press` once: a replay of its id gets the first answer, repeated."""
        acts = self._reminders.acts
        try:
            past = await acts.take_press(press.press_id, press.chat_id)
        except StorageError as exc:  # nothing acted on: a retry of the press may
            log.error("chat %s: storage failed on a press: %s", press.chat_id, exc)
            return PressOutcome(False, FAILED.english)
        if past is not None:
            return PressOutcome(bool(past.ok), past.answer or "", repeated=True)
        try:
            outcome = await self._act(press, source)
        except Exception:
            log.exception("chat %s: a press failed", press.chat_id)
            outcome = PressOutcome(False, FAILED.english)
        try:
            await acts.settle_press(press.press_id, outcome.ok, outcome.answer)
        except StorageError as exc:  # acted on; a replay now answers nothing, acts not
            log.error("chat %s: press answer not kept: %s", press.chat_id, exc)
        return outcome

    async def react(self, reaction: IncomingReaction) -> PressOutcome | None:
        """✅ 💤 👍 on a delivered reminder (👍 on its confirmation too) act as presses;
        taking 👍 back takes the person off. Any other reaction: None."""
        meant = REACTION_PRESSES.get(reaction.emoji)
        if meant is None or not reaction.message_id:
            return None
        action, preset = meant
        if not reaction.added and action != "me_too":
            return None  # a done or a snooze is not undone by taking the emoji back
        try:
            found = await self._reminders.acts.on_message(reaction.chat_id, reaction.message_id)
        except StorageError as exc:
            log.warning("chat %s: a reaction was not acted on: %s", reaction.chat_id, exc)
            return None
        if found is None:
            return None
        reminder, occurrence = found
        if occurrence is None and action != "me_too":
            return None  # a confirmation: nothing went off yet to be done with
        at = reaction.timestamp or self._clock()
        sign = "+" if reaction.added else "-"
        press = Press(
            chat_id=reaction.chat_id,
            chat_type=reaction.chat_type,
            sender_id=reaction.sender_id,
            sender_name=reaction.sender_name,
            sender_is_admin=reaction.sender_is_admin,
            data=ButtonData(action, reminder.id, occurrence, preset),
            # Taking a reaction back (a Matrix redaction names the reaction's own id) is
            # a press of its own: with the same id it would be a replay of the adding.
            press_id=f"{reaction.reaction_id}:{sign}"
            if reaction.reaction_id
            else f"react:{reaction.chat_id}:{reaction.message_id}:{reaction.sender_id}:"
            f"{reaction.emoji}:{sign}:{at.isoformat()}",
            message_id=reaction.message_id,
            added=reaction.added,
        )
        return await self.press(press, "reaction")

    async def posted(self, reply: Reply, message_id: str) -> None:
        """Keep the platform's id of a reminder's confirmation: a 👍 on it is "me too"."""
        if reply.reminder_id is None:
            return
        try:
            await self._reminders.acts.confirmed_as(reply.chat_id, reply.reminder_id, message_id)
        except StorageError as exc:  # the reminder stands; only a 👍 on it won't count
            log.warning("chat %s: confirmation id not kept: %s", reply.chat_id, exc)

    async def created_in_turn(self, chat_id: str, sender_id: str, since: datetime) -> str | None:
        """The one reminder this sender set in this chat since `since` (None: none, or
        several): the reminder a reply confirms."""
        created = await self._reminders.acts.created_since(chat_id, sender_id, since)
        return created[0] if len(created) == 1 else None

    async def _act(self, press: Press, source: CallSource) -> PressOutcome:
        data = press.data
        reminder = await self._reminders.acts.in_chat(press.chat_id, data.reminder_id)
        if reminder is None or reminder.status == "cancelled":
            return PressOutcome(False, GONE.for_message(reminder.content if reminder else ""))
        ctx = await self._context(press, source, reminder)
        try:
            if data.action == "done":
                result = await self._run(ctx, "reminder_done", {"reminder_id": reminder.id})
            elif data.action == "me_too":
                on = None if source == "button" else press.added
                args = {"reminder_id": reminder.id, **({} if on is None else {"on": on})}
                result = await self._run(ctx, "reminder_me_too", args)
            else:
                already = await self._already_snoozed(reminder, data, ctx)
                if already is not None:
                    return PressOutcome(True, already)
                said, args = snooze_args(data, language_of(reminder.content))
                snooze_ctx = ctx if said is None else dataclasses.replace(ctx, text=said)
                result = await self._run(snooze_ctx, "reminder_snooze", args)
        except CommandError as exc:
            return PressOutcome(False, str(exc))
        if result.failure is not None:
            return PressOutcome(False, result.reply or "")
        update = await self._update(press, ctx, result) if data.occurrence else None
        return PressOutcome(True, result.reply or "", update)

    async def _context(
        self, press: Press, source: CallSource, reminder: ReminderView
    ) -> MessageContext:
        """The presser's context: their rights as the bot knows them, the occurrence the
        button names, and the reminder's words (its language is the answers')."""
        admin = rights(
            self._admins, press.sender_id, press.chat_type, chat_admin=press.sender_is_admin
        )
        ctx = await self._contexts.for_caller(
            Caller(
                chat_id=press.chat_id,
                sender_id=press.sender_id,
                source=source,
                auth="platform",  # the platform's event, verified as its messages are
                chat_type=press.chat_type,
                sender_name=press.sender_name,
                is_admin=admin.is_admin,
                bot_admin=admin.bot_admin,
            )
        )
        return dataclasses.replace(
            ctx, text=reminder.content, occurrence=press.data.occurrence, reply_to=press.message_id
        )

    async def _run(self, ctx: MessageContext, tool: str, raw: dict[str, Any]) -> FunctionResult:
        return await self._commands.tools.run_tool(ctx, tool, raw)

    async def _already_snoozed(
        self, reminder: ReminderView, data: ButtonData, ctx: MessageContext
    ) -> str | None:
        """A second press on the same occurrence does not snooze it again."""
        root_id = reminder.snooze_of or reminder.id
        pending = await self._reminders.acts.pending_snooze(root_id)
        if pending is None or pending.next_fire_at is None or data.occurrence is None:
            return None
        if pending.created_at < data.occurrence:
            return None  # the snooze of an earlier occurrence: this one is new
        return already_snoozed(pending.next_fire_at, ctx.zone).for_message(ctx.text)

    async def _update(
        self, press: Press, ctx: MessageContext, result: FunctionResult
    ) -> OutgoingMessage | None:
        """The pressed message as it now reads: the reminder re-rendered, a status line
        for what was done, and the buttons that still apply."""
        data = press.data
        assert data.occurrence is not None
        reminder = await self._reminders.acts.in_chat(press.chat_id, data.reminder_id)
        if reminder is None:
            return None
        root = reminder
        if reminder.snooze_of is not None:
            root = await self._reminders.acts.in_chat(press.chat_id, reminder.snooze_of) or reminder
        acked: tuple[Member, ...] = ()
        if root.ack is not None:
            said = (await self._reminders.acts.acks_of([root.id])).get(root.id, [])
            acked = tuple(dict.fromkeys(a.member for a in said))
        claim = claim_for(reminder, root, data.occurrence, acked)
        message = reminder_message(claim, self._clock())
        lang = language_of(reminder.content)
        name = ctx.sender_name or ctx.sender_id
        now = self._clock()
        value = result.value
        status = ""
        finished = False
        if isinstance(value, AckResult):
            status = done_status(name, now, ctx.zone).in_(lang)
            finished = value.complete
        elif isinstance(value, MeTooResult):
            status = me_too_status(value.on, name).in_(lang)
        elif isinstance(value, Snoozed) and value.snooze.next_fire_at is not None:
            status = snoozed_status(name, value.snooze.next_fire_at, ctx.zone).in_(lang)
        buttons = reminder_buttons(
            data.reminder_id,
            data.occurrence,
            lang=lang,
            act=not finished,
            me_too=offers_me_too(claim) and root.status in ("active", "paused"),
        )
        text = f"{message.text}\n{status}" if status else message.text
        return dataclasses.replace(message, text=text, buttons=buttons)


def snooze_args(data: ButtonData, lang: Lang) -> tuple[str | None, dict[str, Any]]:
    """The snooze tool's arguments for a preset; for "tomorrow", the words it reads
    (as if the presser had said them: the tool checks a time against what was said)."""
    if data.preset in _MINUTES:
        return None, {"reminder_id": data.reminder_id, "minutes": _MINUTES[data.preset]}
    said = TOMORROW.in_(lang)
    return said, {"reminder_id": data.reminder_id, "when": said}


def claim_for(
    reminder: ReminderView, root: ReminderView, occurrence: datetime, acked: tuple[Member, ...]
) -> Claim:
    """The pressed occurrence as the scheduler composed it, to re-render it."""
    return Claim(
        delivery_id=0,
        reminder_id=reminder.id,
        occurrence=occurrence,
        attempts=0,
        late=False,
        chat_id=reminder.chat_id,
        chat_type=reminder.chat_type,
        created_by=root.created_by,
        created_by_name=root.created_by_name,
        content=root.content,
        kind=reminder.schedule.kind,
        timezone=root.schedule.timezone,
        audience=root.audience,
        action=root.action,
        ack=root.ack,
        acked=acked,
        me_too=root.me_too,
    )
