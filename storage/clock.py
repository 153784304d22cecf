"""The time storage writes: aware, in UTC. Apart from the models (SQLAlchemy's) so that a
message's context and `groupmate check` get the clock without the ORM."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    return datetime.now(UTC)
