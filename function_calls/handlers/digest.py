"""The offline digest of a chat's window, gathered from storage: what `/catchup` says
without a model, and what a scheduled `/summary` posts when no model may be called
(`chat_digest`). The digest itself is `function_calls.digest_core.offline_digest`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from sqlalchemy.orm import Session

from groupmate.function_calls.digest_core import offline_digest
from groupmate.function_calls.language import Lang
from groupmate.storage import ReminderReader, ReminderService
from groupmate.storage.chat_window import (
    ReminderEvent,
    WindowMessage,
    reminder_events,
    window_messages,
)
from groupmate.storage.chatlog import ChatLog, ChatLogReader

# A window's messages read at most: a week away from a busy group is thousands of lines;
# the digest of the newest of them says the rest were left out.
MAX_MESSAGES = 2000
MAX_REMINDER_EVENTS = 200


@dataclass(frozen=True, slots=True)
class ChatWindow:
    """One chat's messages and reminder events with since <= time < until, oldest
    first. `cut`: more messages than these were in it (the newest were read)."""

    messages: tuple[WindowMessage, ...]
    reminders: tuple[ReminderEvent, ...]
    zone: ZoneInfo
    since: datetime
    until: datetime
    cut: int | None = None

    @property
    def quiet(self) -> bool:
        """Nothing happened in it: no message, no reminder set or sent."""
        return not self.messages and not self.reminders

    def digest(self, lang: Lang = "en") -> str:
        return offline_digest(
            self.messages, self.reminders, self.zone, self.since, self.until,
            lang=lang, cut=self.cut,
        )  # fmt: skip


async def gather_window(
    chatlog: ChatLogReader | ChatLog,
    reminders: ReminderReader | ReminderService,
    chat_id: str,
    since: datetime,
    until: datetime,
    *,
    limit: int = MAX_MESSAGES,
) -> ChatWindow:
    """The window of one chat, read in one transaction, in the chat's time zone."""
    await chatlog.flush()  # what was logged before the call is in the window
    if isinstance(reminders, ReminderService):  # a caller holding the service reads too
        reminders = ReminderReader(reminders)

    def read(session: Session) -> tuple[list[WindowMessage], list[ReminderEvent]]:
        messages = window_messages(session, chat_id, since, until, limit + 1)
        events = reminder_events(session, chat_id, since, until, MAX_REMINDER_EVENTS)
        return messages, events

    messages, events = await reminders.read(read)
    zone = ZoneInfo(await reminders.timezone_of(chat_id))
    cut = limit if len(messages) > limit else None
    return ChatWindow(tuple(messages[-limit:]), tuple(events), zone, since, until, cut)


async def chat_digest(
    chatlog: ChatLogReader | ChatLog,
    reminders: ReminderReader | ReminderService,
    chat_id: str,
    since: datetime,
    until: datetime,
    *,
    lang: Lang = "en",
) -> str:
    """The offline digest of one chat between `since` and `until` (aware datetimes),
    in the chat's zone: for a caller with no model, or none it may call."""
    window = await gather_window(chatlog, reminders, chat_id, since, until)
    return window.digest(lang)


__all__ = ["MAX_MESSAGES", "ChatWindow", "chat_digest", "gather_window"]
