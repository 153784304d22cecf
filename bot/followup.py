"""Follow-ups in a group: after the bot answers someone, that person's next message within
the chat's window (`/settings followup on`, `followup_seconds`) is for the bot without a
mention, unless it is plainly for someone else: it mentions a member (the platform's
mention, or a typed "@name" that is not the bot's), replies to a message not the bot's,
or is a command for another bot.

Only the sender's *next* message counts: any message of theirs uses the window up, so
"@bob what do you think?" ends the exchange and Alice's "thanks" after it stays between
people. The window opens again each time the bot answers.

The windows live in this process's memory, keyed by chat and sender; the check on every
group message is a dictionary lookup, and a chat with no window open costs nothing. The
router opens a window after answering, from the chat's settings as the answer read them
(the service's short-lived cache); turning follow-ups off closes the chat's windows here.
With several processes behind a load balancer, a follow-up reaches the bot only when it
lands on the process that answered (routing each chat to one process, as
docs/operators/several-processes.md advises for order, makes that always). Deriving the
window from the chat log instead would put a database read, under the chat's lock, in
front of every message not meant for the bot in such a chat, which the log-only path is
built to avoid.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta

from groupmate.bot.messages import IncomingMessage

# A handle typed as text ("@bob", "@Bob_Smith"), not an e-mail address's "@".
_HANDLE = re.compile(r"(?<![\w@])@([\w.-]+)")
# Windows kept at most; past it, expired ones are dropped (a spam wave of new senders).
_MAX_OPEN = 10_000


class Followups:
    """Open follow-up windows: chat -> sender -> until when (the bot's clock)."""

    def __init__(self, bot_name: str, clock: Callable[[], datetime]) -> None:
        self._bot_name = bot_name.casefold()
        self._clock = clock
        self._open: dict[str, dict[str, datetime]] = {}
        self._count = 0
        # The message that last used each sender's window, and what it decided: a
        # platform's re-delivery of that message gets the same answer, and does not use
        # up the next one's window.
        self._took: dict[tuple[str, str], tuple[str, bool]] = {}

    def open(self, chat_id: str, sender_id: str, seconds: int) -> None:
        """The bot just answered `sender_id` here: their next message may follow up."""
        if self._count >= _MAX_OPEN:
            self._drop_expired()
        senders = self._open.setdefault(chat_id, {})
        self._count += sender_id not in senders
        senders[sender_id] = self._clock() + timedelta(seconds=seconds)

    def close_chat(self, chat_id: str) -> None:
        """Follow-ups are off in this chat: no window stays open."""
        self._count -= len(self._open.pop(chat_id, {}))

    def take(self, message: IncomingMessage) -> bool:
        """Whether `message` follows up the bot's answer to its sender; the window is used
        up either way (only the next message counts; a re-delivery of that message is
        decided the same)."""
        key = (message.chat_id, message.sender_id)
        took = self._took.get(key)
        if took is not None and took[0] == message.message_id:
            return took[1]
        senders = self._open.get(message.chat_id)
        if not senders:
            return False
        until = senders.pop(message.sender_id, None)
        if until is None:
            return False
        self._count -= 1
        if not senders:
            del self._open[message.chat_id]
        follows = self._clock() <= until and not self._for_someone_else(message)
        if message.message_id is not None:
            if len(self._took) >= _MAX_OPEN:
                self._took.clear()
            self._took[key] = (message.message_id, follows)
        return follows

    def _for_someone_else(self, message: IncomingMessage) -> bool:
        if message.mentions:
            return True
        replied = message.reply_to_message_id is not None and not message.in_thread
        if replied and not message.reply_to_bot:
            return True
        text = message.text.strip()
        if text.startswith("/"):
            return True  # a command the router did not take: another bot's
        return any(name.rstrip(".-").casefold() != self._bot_name for name in _HANDLE.findall(text))

    def _drop_expired(self) -> None:
        now = self._clock()
        for chat_id in list(self._open):
            senders = {s: until for s, until in self._open[chat_id].items() if until >= now}
            if senders:
                self._open[chat_id] = senders
            else:
                del self._open[chat_id]
        self._count = sum(len(senders) for senders in self._open.values())
        if self._count >= _MAX_OPEN:  # all live: forget them rather than grow unbounded
            self._open.clear()
            self._count = 0
