"""The search's rows: its value types and `Session -> T` units over the chat log's index
(migration 0012); storage.search runs them. Also forgetting: a sender's own messages, or
a whole chat's log.

A term matches any message containing it, in any case (a substring: "launch" finds
"Launching"; "预算" finds "上次说的预算是多少"); every term must match, in any order; a
quoted phrase is one term. On SQLite the FTS5 trigram index finds the rows that hold a
term's trigrams (terms of 3 or more characters), and LIKE checks the words; shorter
terms (a 2-character Chinese word) are matched with LIKE alone. On PostgreSQL the chat's
newest rows are read first, then its trigram index serves ILIKE. Both give the same rows,
newest first.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar, cast

from sqlalchemy import (
    ColumnElement,
    Table,
    and_,
    bindparam,
    delete,
    false,
    func,
    literal_column,
    or_,
    select,
    table,
    text,
)
from sqlalchemy.orm import Session
from sqlalchemy.sql import Select, Subquery
from sqlalchemy.sql.base import ReadOnlyColumnCollection
from sqlalchemy.sql.elements import BindParameter

from groupmate.storage.chatlog_rows import drop_orphan_reactions
from groupmate.storage.models import ChatMessage, MessageReaction

_messages = cast(Table, ChatMessage.__table__)
_reactions = cast(Table, MessageReaction.__table__)
Columns = ReadOnlyColumnCollection[str, Any]  # a table's columns, or a subquery's
# SQLite's index of the messages' words (migration 0012); its rowid is the message's id.
# What migration 0012 makes that the models don't describe (an FTS5 table and its shadow
# tables on SQLite, a trigram index on PostgreSQL): a schema comparison leaves them out.
INDEX_OBJECTS = ("messages_fts", "ix_messages_chat_text_trgm")
_FTS = table("messages_fts")
_UPTO = text("SELECT id FROM messages_fts_upto")
_INDEX_ROWS = text(
    "INSERT INTO messages_fts(rowid, text) "
    "SELECT id, text FROM messages WHERE id > :upto AND id <= :end"
)
_MOVE_UPTO = text("UPDATE messages_fts_upto SET id = :end")
T = TypeVar("T")
# What FTS5's trigram tokenizer can look up: shorter terms have no trigram.
_TRIGRAM = 3
_TRIGRAMS_PER_TERM = 8
# PostgreSQL: the chat's newest rows a search reads before it uses the trigram index.
_WINDOW = 2000
# A term the trigram index can look up: pg_trgm takes trigrams from runs of letters and
# digits (CJK is not one of them in the C locale), and `%ab%` gives none.
_TRIGRAMS = re.compile(r"[A-Za-z0-9]{3}")


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """What to look for: terms that must all be in a message, and who said it."""

    terms: tuple[str, ...] = ()
    sender: str | None = None  # a name as the chat knows it, or a platform id

    @property
    def empty(self) -> bool:
        return not self.terms and self.sender is None


@dataclass(frozen=True, slots=True)
class FoundMessage:
    """A message a search found: its row id (the position `before` pages by), the
    platform's id for it, who said it, the words, and when."""

    id: int
    message_id: str | None
    sender_id: str
    sender_name: str
    text: str
    at: datetime


@dataclass(frozen=True, slots=True)
class Asked:
    """The message that asks (it is in the log too, maybe after a mention): never one of
    its own results."""

    sender_id: str
    text: str


def _escaped(words: str) -> str:
    """`words` as a LIKE pattern that matches them literally (escape character `\\`)."""
    return words.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _like(term: str) -> str:
    return f"%{_escaped(term)}%"


def _contains(c: Columns, term: str, dialect: str) -> ColumnElement[bool]:
    if dialect == "postgresql":
        # In the statement's text, not a parameter: the planner must see the pattern to
        # choose between the trigram index and the chat's newest rows. A prepared
        # statement's generic plan, made for any pattern, took 0.5 s for "预算".
        pattern: BindParameter[str] = bindparam(None, _like(term), literal_execute=True)
        found: ColumnElement[bool] = c.text.ilike(pattern, escape="\\")
    else:  # SQLite's LIKE ignores the case of ASCII letters, as the trigram index does.
        found = c.text.like(_like(term), escape="\\")
    return found


def _fts_match(terms: list[str]) -> str:
    """An FTS5 query that every row containing all `terms` matches: each term's trigrams
    (the index keeps no positions; LIKE then checks the words themselves), at most
    `_TRIGRAMS_PER_TERM` of each, spread over it."""
    wanted: dict[str, None] = {}
    for term in terms:
        grams = list(dict.fromkeys(term[i : i + _TRIGRAM] for i in range(len(term) - 2)))
        step = max(1, len(grams) // _TRIGRAMS_PER_TERM)
        wanted.update(dict.fromkeys(grams[::step][:_TRIGRAMS_PER_TERM]))
    return " AND ".join('"' + gram.replace('"', '""') + '"' for gram in wanted)


def _said_by(c: Columns, sender: str) -> ColumnElement[bool]:
    name = sender.lower()
    lowered = func.lower(c.sender_name)
    # The whole name, its first word ("alice" for "Alice Smith"), or the platform id.
    return or_(
        lowered == name,
        lowered.like(f"{_escaped(name)} %", escape="\\"),
        c.sender_id == sender,
    )


@dataclass(frozen=True, slots=True)
class _Search:
    """One search's parameters, besides the page."""

    chat_id: str
    query: SearchQuery
    before: int | None
    said_before: datetime | None
    asked: Asked | None

    def in_scope(self, c: Columns) -> list[ColumnElement[bool]]:
        """The chat's rows it pages through."""
        scope = [c.chat_id == self.chat_id]
        if self.before is not None:
            scope.append(c.id < self.before)
        return scope

    def conditions(self, c: Columns, dialect: str) -> list[ColumnElement[bool]]:
        """What a row must be to be found (besides being in scope)."""
        # What people said: not the bot's answers (a /find answer quotes what it found),
        # nor the commands people gave it.
        conditions: list[ColumnElement[bool]] = [
            c.from_bot == false(),
            ~c.text.startswith("/", autoescape=True),
        ]
        if self.query.sender is not None:
            conditions.append(_said_by(c, self.query.sender))
        if self.said_before is not None:
            conditions.append(c.created_at < self.said_before)
        if self.asked is not None:
            # Logged as written: with the bot's mention or prefix before the words.
            ends_so = c.text.like(f"%{_escaped(self.asked.text)}", escape="\\")
            conditions.append(~and_(c.sender_id == self.asked.sender_id, ends_so))
        # Every term's own words, also those an index found: it matched their trigrams.
        conditions += [_contains(c, term, dialect) for term in self.query.terms]
        return conditions


def search(
    session: Session,
    chat_id: str,
    query: SearchQuery,
    limit: int,
    offset: int = 0,
    before: int | None = None,
    said_before: datetime | None = None,
    asked: Asked | None = None,
) -> list[FoundMessage]:
    """Up to `limit` messages of this chat that match, newest first, after skipping
    `offset` of them; only those older than row `before` and said before `said_before`,
    when given."""
    wanted = _Search(chat_id, query, before, said_before, asked)
    if session.get_bind().dialect.name == "postgresql":
        return _on_postgresql(session, wanted, limit, offset)
    c = _messages.c
    statement = (
        select(*_found(c))
        .where(*wanted.in_scope(c), *wanted.conditions(c, "sqlite"))
        .limit(limit)
        .offset(offset)
    )
    indexed = [t for t in query.terms if len(t) >= _TRIGRAM]
    if indexed:
        # The index leads: it walks its matches newest first and stops at the page,
        # however long the chat.
        rowid: ColumnElement[int] = literal_column("messages_fts.rowid")
        statement = (
            statement.select_from(_FTS.join(_messages, c.id == rowid))
            .where(literal_column("messages_fts").op("MATCH")(_fts_match(indexed)))
            .order_by(rowid.desc())
        )
        if before is not None:
            statement = statement.where(rowid < before)
    else:
        statement = statement.order_by(c.id.desc())
    return [FoundMessage(*row) for row in session.execute(statement)]


def _on_postgresql(
    session: Session, wanted: _Search, limit: int, offset: int
) -> list[FoundMessage]:
    """First the chat's newest `_WINDOW` rows, read newest first until the page is full:
    a word said often is found there at once, whatever the trigram index estimates (it
    chose to fetch 12,000 rows of every chat for "final version"). Only when those are
    not enough: every row of the chat, through the trigram index when a term has
    trigrams, else newest first."""
    c = _messages.c
    scope = wanted.in_scope(c)
    # In the order of the chat's index, so that the planner walks it, not the table's.
    newest_first = (c.chat_id.desc(), c.id.desc())
    recent = (
        select(*_found(c), c.from_bot, c.created_at.label("said_at"))
        .where(*scope)
        .order_by(*newest_first)
        .limit(_WINDOW)
        .subquery()
    )
    page = [FoundMessage(*row) for row in session.execute(_page(recent, wanted, limit, offset))]
    if len(page) == limit:
        return page
    beyond = select(c.id).where(*scope).order_by(*newest_first).offset(_WINDOW).limit(1)
    if session.scalar(beyond) is None:
        return page  # the window held the whole chat
    if any(_TRIGRAMS.search(term) for term in wanted.query.terms):
        # Sorted by an expression: no index gives that order, so the planner uses the
        # trigram index (with the chat's) rather than walk the chat or the table.
        statement = (
            select(*_found(c))
            .where(*scope, *wanted.conditions(c, "postgresql"))
            .order_by((c.id + 0).desc())
            .limit(limit)
            .offset(offset)
        )
    else:  # no trigram to look up ("预算"): the chat's rows, newest first
        whole = select(*_found(c), c.from_bot, c.created_at.label("said_at")).where(*scope)
        statement = _page(whole.order_by(*newest_first).offset(0).subquery(), wanted, limit, offset)
    return [FoundMessage(*row) for row in session.execute(statement)]


def _page(rows: Subquery, wanted: _Search, limit: int, offset: int) -> Select[Any]:
    """The matches among `rows` (a subquery the planner can't see into: its LIMIT or
    OFFSET keeps the search's conditions outside), newest first."""
    c = rows.c
    return (
        select(c.id, c.message_id, c.sender_id, c.sender_name, c.text, c.said_at)
        .where(*wanted.conditions(c, "postgresql"))
        .order_by(c.id.desc())
        .limit(limit)
        .offset(offset)
    )


def _found(c: Columns) -> tuple[ColumnElement[Any], ...]:
    return (c.id, c.message_id, c.sender_id, c.sender_name, c.text, c.created_at)


def index_new(session: Session, limit: int | None = None) -> int:
    """SQLite: add the messages logged since the last time to the index (the next `limit`
    ids at most); how many ids it covered. PostgreSQL's index needs no help: 0."""
    if session.get_bind().dialect.name != "sqlite":
        return 0
    upto: int = session.execute(_UPTO).scalar_one()
    newest = session.scalar(select(func.max(_messages.c.id))) or 0
    if newest <= upto:
        return 0
    end = newest if limit is None else min(newest, upto + limit)
    session.execute(_INDEX_ROWS, {"upto": upto, "end": end})
    session.execute(_MOVE_UPTO, {"end": end})
    return end - upto


def indexed_first(session: Session, work: Callable[[Session], T]) -> T:
    """`work`, after indexing what is not yet indexed (in the same transaction)."""
    index_new(session)
    return work(session)


def position_of(session: Session, chat_id: str, message_id: str) -> int | None:
    """The row id of a platform message of this chat (for paging by message id)."""
    return session.scalar(
        select(_messages.c.id).where(
            _messages.c.chat_id == chat_id, _messages.c.message_id == message_id
        )
    )


def count_by(session: Session, chat_id: str, sender_id: str) -> int:
    """How many messages this sender has in this chat's log."""
    statement = select(func.count()).where(
        _messages.c.chat_id == chat_id,
        _messages.c.sender_id == sender_id,
        _messages.c.from_bot == false(),
    )
    return session.scalar(statement) or 0


@dataclass(frozen=True, slots=True)
class Forgotten:
    """What a forget deleted: the sender's (or everyone's) messages, and the bot's
    answers to them (which often repeat them)."""

    messages: int
    answers: int


def forget_sender(session: Session, chat_id: str, sender_id: str) -> Forgotten:
    theirs = and_(
        _messages.c.chat_id == chat_id,
        _messages.c.sender_id == sender_id,
        _messages.c.from_bot == false(),
    )
    their_ids = select(_messages.c.message_id).where(theirs, _messages.c.message_id.is_not(None))
    answers = session.execute(
        delete(_messages).where(
            _messages.c.chat_id == chat_id,
            _messages.c.from_bot.is_(True),
            _messages.c.reply_to.in_(their_ids),
        )
    )
    messages = session.execute(delete(_messages).where(theirs))
    # Their reactions, and the reactions to what they said.
    session.execute(
        delete(_reactions).where(
            _reactions.c.chat_id == chat_id, _reactions.c.sender_id == sender_id
        )
    )
    drop_orphan_reactions(session, chat_id)
    return Forgotten(_count(messages), _count(answers))


def forget_chat(session: Session, chat_id: str) -> Forgotten:
    said = session.execute(
        delete(_messages).where(_messages.c.chat_id == chat_id, _messages.c.from_bot == false())
    )
    answers = session.execute(delete(_messages).where(_messages.c.chat_id == chat_id))
    session.execute(delete(_reactions).where(_reactions.c.chat_id == chat_id))
    return Forgotten(_count(said), _count(answers))


def _count(result: Any) -> int:
    return int(getattr(result, "rowcount", 0) or 0)
