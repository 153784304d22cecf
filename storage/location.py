"""Where the database is: the URL it has by default, and a plain SQLite URL read without
SQLAlchemy (a fifth of a second of imports), so that `groupmate check` shows a SQLite
database and reads its revision with the standard library (storage.revisions). Any
other URL is SQLAlchemy's to parse (storage.database)."""

from __future__ import annotations

DEFAULT_URL = "sqlite:///data/groupmate.db"
_PLAIN_SQLITE = "sqlite:///"


def plain_sqlite(url: str) -> str | None:
    """The database part of a plain SQLite URL (`sqlite:///data/bot.db` -> `data/bot.db`,
    `sqlite://` -> ""), which SQLAlchemy parses and shows as written, with no password
    to mask; None for any other URL (a driver, a query, another backend)."""
    if url == "sqlite://":
        return ""
    if not url.startswith(_PLAIN_SQLITE) or any(mark in url for mark in "?%"):
        return None
    return url.removeprefix(_PLAIN_SQLITE)


def shown_url(url: str) -> str:
    """`url` as logs and messages show it (Database.safe_url): any password masked."""
    if plain_sqlite(url) is not None:
        return url
    from groupmate.storage.database import normalize_url  # SQLAlchemy: any other URL

    return normalize_url(url).render_as_string(hide_password=True)
