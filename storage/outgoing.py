"""Messages the bot sends on its own (reminders), and the sender adapters implement."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from groupmate.storage.exceptions import GroupmateError

OutgoingKind = Literal["reminder", "notice"]


@dataclass(frozen=True, slots=True)
class Member:
    """A chat member as the platform identifies them: its user id and a display name."""

    user_id: str
    name: str = ""


class SendError(GroupmateError):
    """A send failed. The message must be safe to log: no tokens, no secret URLs."""


def safe_error(
    exc: BaseException,
    *quotable: type[BaseException],
    code: Callable[[BaseException], str | None] | None = None,
) -> str:
    """An exception as a log line may show it: the one rule, for every layer.

    An error's text may quote a URL with its token or key in it, so only the text of
    errors written to be safe is quoted: adapters' SendError, and the `quotable` types
    (a platform's own errors, which carry its codes). A platform whose errors hold a code
    but unsafe text gives `code` (None: not one of its errors). Any other error is named
    by its type."""
    if code is not None and (coded := code(exc)) is not None:
        return coded
    if isinstance(exc, (SendError, *quotable)):
        return str(exc)[:500].replace("\x00", "")
    if isinstance(exc, TimeoutError):
        return "timed out"
    return type(exc).__name__


@dataclass(frozen=True, slots=True)
class Button:
    """A button under a message: the words shown, and the opaque data a press sends back
    (`groupmate.bot.presses.ButtonData.encode()`, at most 64 bytes: Telegram's limit)."""

    label: str
    data: str


@dataclass(frozen=True, slots=True)
class OutgoingMessage:
    """One message to post into a chat, with who to mention (platform user ids)."""

    chat_id: str
    text: str
    mentions: tuple[str, ...] = ()
    kind: OutgoingKind = "reminder"
    reminder_id: str | None = None
    occurrence: datetime | None = None
    # The mentioned people with the names the text shows as "@name", so that a platform
    # adapter can render each as its own kind of mention (a Telegram text mention, a
    # Matrix pill, a OneBot at segment).
    people: tuple[Member, ...] = ()
    # Mention everyone in the chat as well (an admin's reminder for everyone): each
    # adapter adds its platform's own (Matrix @room, Slack <!channel>, Discord
    # @everyone, Lark/DingTalk/QQ "all"); the text says "everyone" in words only.
    everyone: bool = False
    # Buttons under it (a delivered reminder's Done, Snooze, Remind me too), in rows as
    # shown; a platform without buttons leaves them out (its words or reactions act).
    buttons: tuple[tuple[Button, ...], ...] = ()

    @property
    def idempotency_key(self) -> str | None:
        """Stable across retries and restarts, so a receiver can drop a repeat."""
        if self.reminder_id is None or self.occurrence is None:
            return None
        return f"{self.reminder_id}:{self.occurrence.isoformat()}"


# Raises on failure (preferably SendError); returning means the platform accepted it. It
# may return the platform's id of the sent message, so that replies to it can be matched.
Sender = Callable[[OutgoingMessage], Awaitable[str | None]]
