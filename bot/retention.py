"""Age-based retention, run in the background for as long as the bot runs: every chat's
messages past their chat's retention, quiet chats included, the audit log's, and the
button presses kept to recognise a replay (a day's)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import datetime

from groupmate.storage.audit import AuditLog
from groupmate.storage.chatlog import ChatLog
from groupmate.storage.reminder_acts import ReminderActs

log = logging.getLogger(__name__)

PRUNE_INTERVAL = 3600.0


async def prune_periodically(
    chatlog: ChatLog,
    audit: AuditLog,
    clock: Callable[[], datetime],
    presses: ReminderActs | None = None,
) -> None:
    """At start, then hourly, until cancelled. A failed round is logged (its kind only:
    a database error's text can quote rows) and the next one tries again."""
    while True:
        try:
            removed = await chatlog.prune_expired(clock())
            if removed:
                log.info("removed %d chat messages past retention", removed)
            removed = await audit.prune_expired(clock())
            if removed:
                log.info("removed %d audit entries past retention", removed)
            if presses is not None:
                removed = await presses.prune_presses(clock())
                if removed:
                    log.info("forgot %d button presses older than a day", removed)
        except Exception as exc:
            log.error("retention failed: %s", type(exc).__name__)
        await asyncio.sleep(PRUNE_INTERVAL)
