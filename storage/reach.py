"""Which chats a process can deliver to, and the reminders no running process claims.

Several processes may share one database (`make run` beside `make chat`; a Telegram
process beside a Slack one on PostgreSQL). Each claims only occurrences for chats it can
deliver to: a claim it cannot send would be retried and marked failed although another
process, or the same one restarted with its platform on, would have delivered it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast

from sqlalchemy import ColumnElement, Table, and_, false, func, not_, or_, select, true
from sqlalchemy.orm import Session

from groupmate.storage.models import OUTCOME_PENDING, REMINDER_ACTIVE, Delivery, Reminder

_reminders = cast(Table, Reminder.__table__)
_deliveries = cast(Table, Delivery.__table__)


@dataclass(frozen=True, slots=True)
class Reach:
    """Chats whose id starts with one of `prefixes`; with `others`, also any chat whose id
    starts with none of `platforms` (the webhook's own ids, such as "g1"), which a
    catch-all sender delivers."""

    prefixes: tuple[str, ...] = ()
    others: bool = False
    platforms: tuple[str, ...] = ()

    def covers(self, chat_id: str) -> bool:
        if any(chat_id.startswith(prefix) for prefix in self.prefixes):
            return True
        return self.others and not any(chat_id.startswith(p) for p in self.platforms)

    def where(self, chat_id: ColumnElement[str]) -> ColumnElement[bool]:
        """`covers` as SQL, for the claim queries."""
        if "" in self.prefixes:
            return true()
        clauses = [_starts(chat_id, prefix) for prefix in self.prefixes]
        if self.others:
            own = [_starts(chat_id, p) for p in self.platforms]
            clauses.append(not_(or_(*own)) if own else true())
        return or_(*clauses) if clauses else false()


def _starts(chat_id: ColumnElement[str], prefix: str) -> ColumnElement[bool]:
    # Compared exactly, as `covers` does: SQLite's LIKE ignores case, so "TG:1" would be
    # claimed as Telegram's by SQL and not routed there in Python.
    return func.substr(chat_id, 1, len(prefix)) == prefix


def within(reach: Reach | None, chat_id: ColumnElement[str]) -> ColumnElement[bool]:
    """The chats `reach` covers, as SQL; None covers every chat."""
    return true() if reach is None else reach.where(chat_id)


@dataclass(frozen=True, slots=True)
class WaitingChat:
    """A chat with reminders due that no process has claimed: none that runs delivers
    there (a process that did would have taken them within seconds)."""

    chat_id: str
    reminders: int
    due_since: datetime


def waiting_chats(session: Session, before: datetime, limit: int = 200) -> list[WaitingChat]:
    """Chats with occurrences due before `before` that nobody claimed: active reminders
    whose next run is past, and deliveries left pending by a process that stopped, whose
    lease ran out before `before`. Oldest first."""
    due = (
        select(
            _reminders.c.chat_id,
            func.count().label("reminders"),
            func.min(_reminders.c.next_fire_at).label("since"),
        )
        .where(_reminders.c.status == REMINDER_ACTIVE, _reminders.c.next_fire_at < before)
        .group_by(_reminders.c.chat_id)
    )
    stranded = (
        select(
            _reminders.c.chat_id,
            func.count().label("reminders"),
            func.min(_deliveries.c.occurrence).label("since"),
        )
        .join(_reminders, _reminders.c.id == _deliveries.c.reminder_id)
        .where(and_(_deliveries.c.outcome == OUTCOME_PENDING, _deliveries.c.lease_until < before))
        .group_by(_reminders.c.chat_id)
    )
    found: dict[str, WaitingChat] = {}
    for statement in (due, stranded):
        for row in session.execute(statement).all():
            since = row.since
            if row.chat_id in found:
                seen = found[row.chat_id]
                since = min(since, seen.due_since)
                count = seen.reminders + row.reminders
            else:
                count = row.reminders
            found[row.chat_id] = WaitingChat(row.chat_id, count, since)
    ordered = sorted(found.values(), key=lambda chat: chat.due_since)
    return ordered[:limit]


def unclaimed_after(watchdog_interval: timedelta) -> timedelta:
    """How long past due an occurrence may sit before it counts as waiting: a process
    that delivers to its chat claims it at its timer, or at the latest at its next
    watchdog sweep; two sweeps leave room for a slow one."""
    return 2 * watchdog_interval
