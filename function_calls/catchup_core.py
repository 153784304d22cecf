"""Catch-up's "for you" part, found by rule (no model): in a window of a chat, the
messages that name the asker, the questions put to them (a mention with a question, or a
question in reply to their message), and the reminders set for them. Pure; the model,
when there is one, is given these lines rather than asked to find them."""

from __future__ import annotations

from collections.abc import Sequence, Set
from dataclasses import dataclass

from groupmate.function_calls.digest_core import (
    Clock,
    marked_lines,
    most_telling,
    people,
    reminder_line,
    said,
)
from groupmate.function_calls.digest_lines import is_question, mentions
from groupmate.storage.chat_window import ReminderEvent, WindowMessage

MAX_EACH = 10


@dataclass(frozen=True, slots=True)
class Asker:
    user_id: str
    name: str


@dataclass(frozen=True, slots=True)
class ForYou:
    """What in a window concerns one person, oldest first in each part."""

    questions: tuple[WindowMessage, ...]
    mentions: tuple[WindowMessage, ...]
    reminders: tuple[ReminderEvent, ...]
    decisions: tuple[WindowMessage, ...]

    @property
    def empty(self) -> bool:
        return not (self.questions or self.mentions or self.reminders)

    def lines(self, clock: Clock) -> list[str]:
        """ "❓ Bob, Mon 14:10: “…”" lines: questions, then mentions, then reminders."""
        out = [f"❓ {said(m, clock)}" for m in self.questions[-MAX_EACH:]]
        out += [f"💬 {said(m, clock)}" for m in self.mentions[-MAX_EACH:]]
        out += [f"⏰ {reminder_line(r, clock)}" for r in self.reminders[-MAX_EACH:]]
        return out

    def decision_lines(self, clock: Clock) -> list[str]:
        return [f"📌 {said(m, clock)}" for m in self.decisions]


def for_you(
    messages: Sequence[WindowMessage],
    reminders: Sequence[ReminderEvent],
    asker: Asker,
    earlier: Set[str] = frozenset(),
) -> ForYou:
    """The parts of a window that concern `asker`; their own messages never do.
    `earlier`: ids of the asker's messages from before the window that are replied to
    in it."""
    theirs = {m.message_id for m in messages if m.sender_id == asker.user_id and m.message_id}
    theirs |= earlier
    questions: list[WindowMessage] = []
    named: list[WindowMessage] = []
    for message in people(messages):
        if message.sender_id == asker.user_id or message.text.startswith("/"):
            continue  # a command ("/remind @alice …") is shown as what it did
        to_them = mentions(message.text, asker.user_id, asker.name)
        replying = message.reply_to is not None and message.reply_to in theirs
        if (to_them or replying) and is_question(message.text):
            questions.append(message)
        elif to_them or replying:
            named.append(message)
    set_for_them = tuple(
        r for r in reminders if r.kind == "set" and r.concerns(asker.user_id)
        and r.by_id != asker.user_id  # one they set themselves is no news to them
    )  # fmt: skip
    decided = [line for line in marked_lines(messages) if line[1] == "decision"]
    decisions = tuple(m for m, _ in most_telling(decided))
    return ForYou(tuple(questions), tuple(named), set_for_them, decisions)
