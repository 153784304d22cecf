"""message search: the chat log's words indexed for /find and chat_search

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26
"""

from __future__ import annotations

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

# SQLite: an FTS5 index over the messages' text, with the trigram tokenizer: it finds any
# substring of 3 or more characters, so a Chinese word inside a sentence (which has no
# spaces to split on) is found as well as an English one. It holds only the trigrams
# (detail=none: the search checks each candidate's text with LIKE), the rows stay in
# `messages` (an external-content table).
#
# New messages are indexed in batches, not one by one: `messages_fts_upto` is the newest
# message id in the index, and storage.search indexes the rows above it every second and
# before every search (a trigger per message cost as much as the logging itself, mostly
# in FTS5's per-commit segments; a batch of thousands costs a fraction). Deleting or
# changing an indexed row updates the index at once, by the triggers below; a row id the
# table hands out again after its newest rows were deleted (SQLite may) is indexed by the
# insert trigger at once, as it is not above the mark.
_SQLITE = (
    "CREATE VIRTUAL TABLE messages_fts USING fts5("
    "text, content='messages', content_rowid='id', tokenize='trigram', detail=none)",
    "CREATE TABLE messages_fts_upto (id INTEGER NOT NULL)",
    "INSERT INTO messages_fts(rowid, text) SELECT id, text FROM messages",
    "INSERT INTO messages_fts_upto (id) SELECT coalesce(max(id), 0) FROM messages",
    "CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages "
    "WHEN new.id <= (SELECT id FROM messages_fts_upto) BEGIN "
    "INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text); END",
    "CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages "
    "WHEN old.id <= (SELECT id FROM messages_fts_upto) BEGIN "
    "INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text); "
    "END",
    # Only a change of the words: the answered and delivered marks change every row once
    # or twice, and must not touch the index.
    "CREATE TRIGGER messages_fts_update AFTER UPDATE OF text ON messages "
    "WHEN old.id <= (SELECT id FROM messages_fts_upto) BEGIN "
    "INSERT INTO messages_fts(messages_fts, rowid, text) VALUES ('delete', old.id, old.text); "
    "INSERT INTO messages_fts(rowid, text) VALUES (new.id, new.text); END",
)
# PostgreSQL: a trigram GIN index, which serves `text ILIKE '%words%'` (the same
# substring match as SQLite's), kept in step by PostgreSQL itself. It leads with the chat
# (btree_gin), so that a search looks up only its own chat's rows: words common in other
# chats cost it nothing.
_POSTGRESQL = (
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE EXTENSION IF NOT EXISTS btree_gin",
    "CREATE INDEX ix_messages_chat_text_trgm ON messages USING gin (chat_id, text gin_trgm_ops)",
)


def upgrade() -> None:
    statements = _SQLITE if op.get_bind().dialect.name == "sqlite" else _POSTGRESQL
    for statement in statements:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        for trigger in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER IF EXISTS messages_fts_{trigger}")
        op.execute("DROP TABLE IF EXISTS messages_fts")
        op.execute("DROP TABLE IF EXISTS messages_fts_upto")
    else:
        op.execute("DROP INDEX IF EXISTS ix_messages_chat_text_trgm")
