"""The contract every chat platform adapter keeps.

An adapter turns its platform's events into `IncomingMessage`s (with a chat id under its
own prefix, e.g. "tg:-100123"), hands them to `bot.handle`, and sends the replies back in
the platform's way (as a reply to the triggering message where the platform has those).
It also delivers the bot's own messages (reminders, progress lines) for its chats: the
bot routes each `OutgoingMessage` to the adapter whose `chat_prefix` its chat id starts
with. Everything platform-specific stays in the adapter's modules: a new platform is a
module with a class like this and its config section in `<platform>_settings.py` (which
loads no platform library: `groupmate check` reads it), nothing else.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, runtime_checkable

from groupmate.bot.messages import IncomingMessage, IncomingReaction, Reply
from groupmate.bot.presses import Press, PressOutcome
from groupmate.bot.router import Deliver
from groupmate.storage import Database, Member, OutgoingMessage, SendError

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

log = logging.getLogger(__name__)
T = TypeVar("T")


class BotHost(Protocol):
    """What an adapter sees of the bot that starts it (`bot.app.Bot` is one)."""

    @property
    def database(self) -> Database | None:
        """The bot's database (adapter state, locks), not a service: None before start."""

    async def handle(self, message: IncomingMessage, deliver: Deliver | None = None) -> list[Reply]:
        """The replies to one incoming message; `deliver` sends them."""

    async def react(self, reaction: IncomingReaction) -> PressOutcome | None:
        """Someone's reaction to a message, or its taking back: counted in digests. Never
        raises for the database: a reaction lost costs a count, nothing more. One that
        stands for a press (`REACTION_PRESSES` on a reminder) is acted on as one, and what
        became of it is returned, so that the adapter can edit the message in place (a
        platform whose reactions are its buttons: Matrix); None for any other."""

    async def press(self, press: Press) -> PressOutcome:
        """Act on a press of a reminder's button, as the person who pressed and with
        their permissions, through the one invoker (policy, audit). A replayed press
        (same `press_id`) acts once. A button of a reminder that is gone, or of another
        chat, is refused in `answer`, and nothing changes. Never raises for bad data."""

    async def posted(self, reply: Reply, message_id: str) -> None:
        """`reply` went out as the platform's message `message_id`. An adapter calls it
        for a reply with a `reminder_id` (a reminder's confirmation), so that a 👍 on
        that message can mean "remind me too". Never raises."""

    def may_address(self, text: str) -> bool:
        """Whether `text` could be meant for the bot by its words alone (a command, a
        prefix, "@<bot name>"): an adapter looks up what only a message for the bot needs
        (is the sender an admin?) when this, a mention or a reply says so."""


@runtime_checkable
class Adapter(Protocol):
    """One chat platform, started and stopped with the bot."""

    name: str  # "telegram", shown by `groupmate check` and /healthz
    chat_prefix: str  # every chat id of this platform starts with it: "tg:"

    async def start(self, bot: BotHost) -> None:
        """Connect and begin receiving; return once running (receiving goes on in tasks)."""

    async def stop(self) -> None:
        """Stop receiving, finish or abandon sends in flight, close connections."""

    async def send(self, message: OutgoingMessage) -> str | None:
        """Deliver one of the bot's own messages; returns the platform's message id.

        Raises storage.SendError (with a message free of tokens) when the platform
        refused or could not be reached; the reminder engine retries with backoff.
        """

    def status(self) -> dict[str, Any]:
        """What an operator needs to see: connected or not, since when, last event."""

    def routes(self) -> Sequence[BaseRoute]:
        """Routes this adapter serves on the HTTP server (webhooks, WebSockets); may be
        empty."""


# What /healthz and the dashboard say of a connection (`status()["state"]`). "standby":
# another process on the same database holds the platform's one connection (Lark).
AdapterState = Literal["connecting", "connected", "reconnecting", "auth failed", "standby"]


def connection_state(
    *, connected: bool, auth_failed: bool, last_error: str | None, standby: bool = False
) -> AdapterState:
    """One word for a connection: a refused credential first (it is not retried), then
    up, then waiting on another process, else trying: again after an error, or first."""
    if auth_failed:
        return "auth failed"
    if connected:
        return "connected"
    if standby:
        return "standby"
    return "reconnecting" if last_error else "connecting"


def iso(moment: datetime | None) -> str | None:
    """A moment as status() shows it: ISO 8601, or None for not yet."""
    return moment.isoformat() if moment else None


def connection_status(
    *,
    connected: bool,
    since: datetime | None,
    last_event: datetime | None,
    last_error: str | None,
    auth_failed: bool = False,
    standby: bool = False,
    warning: str | None = None,
    **details: Any,
) -> dict[str, Any]:
    """status() of an adapter with one connection: its state, the platform's own
    `details`, when it came up, when it last heard something and what last went wrong
    (else a `warning`, which changes no state)."""
    state = connection_state(
        connected=connected, auth_failed=auth_failed, last_error=last_error, standby=standby
    )
    return {
        "state": state,
        "connected": connected,
        **details,
        "since": iso(since),
        "last_event": iso(last_event),
        "last_error": last_error or warning,
    }


@dataclass(slots=True)
class Link:
    """What an adapter knows of its one connection to the platform, for status()."""

    since: datetime | None = None  # when it came up; None while down
    last_event: datetime | None = None
    last_error: str | None = None
    auth_failed: bool = False  # the platform refused the credentials: not retried

    def status(
        self, *, connected: bool | None = None, warning: str | None = None, **details: Any
    ) -> dict[str, Any]:
        """connection_status() of this link; `connected` where up takes more than `since`."""
        return connection_status(
            connected=self.since is not None if connected is None else connected,
            since=self.since,
            last_event=self.last_event,
            last_error=self.last_error,
            auth_failed=self.auth_failed,
            warning=warning,
            **details,
        )


def platform_chat(message: OutgoingMessage, prefix: str, platform: str, *, stopped: bool) -> str:
    """The platform's own id of the chat `message` goes to. SendError for a chat of
    another platform, or while the adapter is stopped (the engine retries it later)."""
    if not message.chat_id.startswith(prefix):
        raise SendError(f"not a {platform} chat id: {message.chat_id}")
    if stopped:
        raise SendError(f"the {platform.lower()} adapter is stopped")  # retried after a restart
    return message.chat_id.removeprefix(prefix)


def split_text(text: str, limit: int) -> list[str]:
    """`text` in pieces of at most `limit` characters, cut at paragraph breaks, else at
    line breaks, else at spaces, and only as a last resort inside a word."""
    pieces: list[str] = []
    rest = text
    while len(rest) > limit:
        window = rest[: limit + 1]
        cut = -1
        for separator in ("\n\n", "\n", " "):
            cut = window.rfind(separator, 0, limit + 1)
            if cut > 0:
                break
        if cut <= 0:
            cut = limit
            pieces.append(rest[:cut])
            rest = rest[cut:]
        else:
            pieces.append(rest[:cut].rstrip())
            rest = rest[cut:].lstrip("\n ")
    if rest or not pieces:
        pieces.append(rest)
    return pieces


@dataclass(frozen=True, slots=True)
class Piece:
    """One platform message's worth of a longer text."""

    text: str
    index: int  # its place among the pieces: what a per-piece idempotency key names
    first: bool  # no piece went out before it: the one that replies or mentions everyone


async def send_in_pieces(
    text: str, limit: int, send: Callable[[Piece], Awaitable[str | None]]
) -> str | None:
    """`text` in pieces of at most `limit` characters, blank ones left out, each sent by
    `send` in order; the id of the first sent (what a reply or a reaction names it by)."""
    first: str | None = None
    for index, piece in enumerate(split_text(text, limit)):
        if piece.strip():
            sent = await send(Piece(piece, index, first is None))
            first = first or sent
    return first


def mention_targets(people: Iterable[Member], prefix: str) -> dict[str, str]:
    """ "@Name" (as the text shows each of `people`) -> their id on the platform whose
    user ids start with `prefix`; people of other platforms are left out."""
    return {
        f"@{p.name.lstrip('@')}": p.user_id.removeprefix(prefix)
        for p in people
        if p.name and p.user_id.startswith(prefix)
    }


def the_one(found: Iterable[Member]) -> Member | None:
    """The member `found` holds, if it holds exactly one person (by id): a name two
    people go by is no one's, and "remind @Sam" is asked about, never guessed."""
    people = {member.user_id: member for member in found}
    return next(iter(people.values())) if len(people) == 1 else None


def mention_pieces(text: str, names: Collection[str]) -> Iterator[tuple[str, bool]]:
    """`text` in (piece, is a mention) pieces, cut at each of `names` ("@Bob") that
    stands whole: the longest first ("@Al" must not cut "@Alice" short)."""
    if not names:
        yield text, False
        return
    ordered = sorted(names, key=len, reverse=True)
    pattern = re.compile("(?:" + "|".join(map(re.escape, ordered)) + r")(?!\w)")
    position = 0
    for match in pattern.finditer(text):
        yield text[position : match.start()], False
        yield match.group(), True
        position = match.end()
    yield text[position:], False


async def sent_with_retries(
    send: Callable[[], Awaitable[T]], *, what: str, attempts: int = 3, first_wait: float = 1.0
) -> T:
    """`send()`, tried again after 1 s, 2 s, ... when it raises, up to `attempts` times;
    the last failure is raised. For an answer to a message the platform was told it had
    (acknowledged): it will not come again, so a send that fails for a moment must not
    lose the answer. Where the platform has an idempotency key, pass the same key on each
    try; where it has none, a try whose answer was lost may show twice."""
    wait = first_wait
    for attempt in range(1, attempts + 1):
        try:
            return await send()
        except Exception as exc:
            if attempt == attempts:
                raise
            log.warning("%s failed (%s); trying again in %.0fs", what, type(exc).__name__, wait)
        await asyncio.sleep(wait)
        wait *= 2
    raise AssertionError("unreachable")  # the loop returns or raises


async def finish(tasks: Collection[asyncio.Task[Any]], *, within: float = 10.0) -> None:
    """Let answers in flight finish for up to `within` seconds, then cancel the rest and
    wait for them to end: nothing of the adapter may still run once its client (and the
    bot's database) closes."""
    if not tasks:
        return
    pending = set(tasks)
    _, late = await asyncio.wait(pending, timeout=within)
    for task in late:
        task.cancel()
    if late:
        log.warning("%d answer(s) still running at stop were cancelled", len(late))
        await asyncio.gather(*late, return_exceptions=True)
