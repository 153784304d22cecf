"""Private calendar links (`/calendar`): each one opens one chat's reminders as an
iCalendar feed (`storage.ical` writes it) until it is revoked.

A link's token is shown once, when it is made, and only its sha256 is stored: a copy of
the database, an export or a backup opens no feed. A member has at most one live link
per chat, and a chat one whole-chat link (made by an admin): making a new one revokes
the old one, so a link that leaked is replaced by asking again. Every read goes to the
database, so a revoked link answers 404 at once, in every process.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import importlib.util
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast

from sqlalchemy import ColumnElement, Table, insert, or_, select, update
from sqlalchemy.orm import Session

from groupmate.storage.database import Database
from groupmate.storage.dialect import rowcount
from groupmate.storage.models import REMINDER_ACTIVE, REMINDER_DONE, CalendarFeed, Reminder
from groupmate.storage.reminder_rows import ReminderView, reminder_view

_feeds = cast(Table, CalendarFeed.__table__)
_reminders = cast(Table, Reminder.__table__)

# secrets.token_urlsafe(32): 43 characters of [A-Za-z0-9_-], 256 bits.
_TOKEN_BYTES = 32
FEED_TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")
# A feed's path, for the route and for taking tokens out of what is logged.
FEED_PREFIX = "/calendar/"
FEED_SUFFIX = ".ics"
_IN_TEXT = re.compile(re.escape(FEED_PREFIX) + FEED_TOKEN.pattern + re.escape(FEED_SUFFIX))
# Finished reminders stay in the feed this long, so the past of a calendar keeps them.
KEEP_DONE = timedelta(days=366)


@functools.cache
def feeds_installed() -> bool:
    """Whether this install can write feeds: icalendar is the `calendar` extra's (too
    large for the core install), as python-holidays is the `holidays` extra's."""
    return importlib.util.find_spec("icalendar") is not None


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def without_feed_tokens(text: str) -> str:
    """`text` with every feed link's token masked: the chat log keeps the bot's answers,
    and a link in it would open the feed to whoever reads the log or a backup."""
    return _IN_TEXT.sub(f"{FEED_PREFIX}***{FEED_SUFFIX}", text)


@dataclass(frozen=True, slots=True)
class FeedOwner:
    """Whose link: a member's in a chat, or the chat's own (`user_id` None)."""

    chat_id: str
    user_id: str | None


@dataclass(frozen=True, slots=True)
class NewFeed:
    """A link just made: its token (shown this once) and whether it replaced one."""

    token: str
    replaced: bool


def _live(owner: FeedOwner) -> list[ColumnElement[bool]]:
    whose = (
        _feeds.c.owner_id.is_(None) if owner.user_id is None else _feeds.c.owner_id == owner.user_id
    )
    return [_feeds.c.chat_id == owner.chat_id, whose, _feeds.c.revoked_at.is_(None)]


def revoke_feed(session: Session, owner: FeedOwner, now: datetime) -> bool:
    """Revoke the owner's live link; whether there was one."""
    done = session.execute(update(_feeds).where(*_live(owner)).values(revoked_at=now))
    return rowcount(done) > 0


def make_feed(session: Session, owner: FeedOwner, now: datetime) -> NewFeed:
    """A new link for the owner, revoking the one it had."""
    replaced = revoke_feed(session, owner, now)
    token = secrets.token_urlsafe(_TOKEN_BYTES)
    session.execute(
        insert(_feeds).values(
            token_hash=token_hash(token),
            chat_id=owner.chat_id,
            owner_id=owner.user_id,
            created_at=now,
        )
    )
    return NewFeed(token, replaced)


def feed_chat(session: Session, token: str) -> str | None:
    """The chat a live link opens; None for a token that is malformed, unknown or
    revoked."""
    if FEED_TOKEN.fullmatch(token) is None:
        return None
    wanted = token_hash(token)
    row = session.execute(
        select(_feeds.c.token_hash, _feeds.c.chat_id).where(
            _feeds.c.token_hash == wanted, _feeds.c.revoked_at.is_(None)
        )
    ).first()
    # The index found the row by its hash; the comparison that decides is constant-time.
    if row is None or not hmac.compare_digest(row.token_hash, wanted):
        return None
    return str(row.chat_id)


def feed_reminders(session: Session, chat_id: str, now: datetime) -> list[ReminderView]:
    """What a chat's feed shows: its active reminders and those finished within
    KEEP_DONE; never a paused or cancelled one, and never another chat's."""
    rows = session.execute(
        select(_reminders)
        .where(
            _reminders.c.chat_id == chat_id,
            or_(
                _reminders.c.status == REMINDER_ACTIVE,
                (_reminders.c.status == REMINDER_DONE)
                & (_reminders.c.updated_at >= now - KEEP_DONE),
            ),
        )
        .order_by(_reminders.c.created_at, _reminders.c.id)
    ).all()
    return [reminder_view(row) for row in rows]


class CalendarFeeds:
    """The links of `/calendar` (`ReminderService.feeds`)."""

    def __init__(self, database: Database, *, clock: Callable[[], datetime]) -> None:
        self.database = database
        self._clock = clock

    async def make(self, owner: FeedOwner) -> NewFeed:
        return await self.database.write(
            functools.partial(make_feed, owner=owner, now=self._clock())
        )

    async def revoke(self, owner: FeedOwner) -> bool:
        return await self.database.write(
            functools.partial(revoke_feed, owner=owner, now=self._clock())
        )

    async def open(self, token: str) -> list[ReminderView] | None:
        """The reminders a live link's feed shows; None: no such link (404)."""
        now = self._clock()

        def read(session: Session) -> list[ReminderView] | None:
            chat_id = feed_chat(session, token)
            return None if chat_id is None else feed_reminders(session, chat_id, now)

        return await self.database.read(read)
