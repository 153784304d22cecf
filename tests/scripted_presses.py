"""A stand-in for the bot behind an adapter's press handling: it answers each press with
the next scripted outcome (after `delay` seconds), each message with scripted replies,
and keeps the presses it was given and the replies reported posted, so an adapter's
rendering of an outcome (the toast, the message edited in place), its deadline and its
reporting of confirmations are tested apart from what the router decides. Also what the
end-to-end tests share: a reminder's buttons as a test builds them, and the store's count
of acknowledgements."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from sqlalchemy import select, text, update

from groupmate.bot.app import Bot
from groupmate.bot.messages import IncomingMessage, IncomingReaction, Reply
from groupmate.bot.presses import ButtonData, Press, PressOutcome
from groupmate.bot.router import Deliver
from groupmate.storage import Button, Database
from groupmate.storage.models import Reminder

# A delivered reminder's buttons, as a test builds them (the router composes the real ones).
AT = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)
DONE = ButtonData("done", "7", AT)
SNOOZE_10M = ButtonData("snooze", "7", AT, "10m")
ROWS = (
    (Button("✅ Done", DONE.encode()),),
    (
        Button("💤 10 min", SNOOZE_10M.encode()),
        Button("💤 1 h", ButtonData("snooze", "7", AT, "1h").encode()),
        Button("💤 Tomorrow", ButtonData("snooze", "7", AT, "tomorrow").encode()),
    ),
)


class ScriptedHost:
    """A `BotHost` whose `press` answers from a script."""

    def __init__(
        self,
        outcomes: Iterable[PressOutcome] = (),
        *,
        delay: float = 0.0,
        replies: Iterable[Reply] = (),
    ) -> None:
        self.outcomes = deque(outcomes)
        self.presses: list[Press] = []
        self.delay = delay
        self.replies = list(replies)  # what every message is answered with
        self.posts: list[tuple[Reply, str]] = []  # what the adapter reported as posted

    @property
    def database(self) -> Database | None:
        return None

    async def handle(self, message: IncomingMessage, deliver: Deliver | None = None) -> list[Reply]:
        if deliver is not None:
            await deliver(self.replies)
        return self.replies

    async def react(self, reaction: IncomingReaction) -> None:
        return None

    async def press(self, press: Press) -> PressOutcome:
        self.presses.append(press)
        await asyncio.sleep(self.delay)
        return self.outcomes.popleft()

    async def posted(self, reply: Reply, message_id: str) -> None:
        self.posts.append((reply, message_id))

    def may_address(self, text: str) -> bool:
        return False


async def acknowledgements(bot: Bot) -> int:
    """How many acknowledgements (a Done, by button, word or reaction) the store holds."""
    assert bot.reminders is not None
    count = await bot.reminders.database.read(
        lambda session: session.execute(text("SELECT count(*) FROM acknowledgements")).scalar_one()
    )
    return int(count)


async def due_on_the_second(bot: Bot) -> None:
    """Every reminder of the running bot falls due a second ago, on a whole second, as
    scheduled times are (a button names its occurrence to the microsecond, so one with a
    fraction of a second works too: test_telegram_buttons' reminder set in minutes)."""
    assert bot.reminders is not None
    due = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=1)
    await bot.reminders.database.write(
        lambda session: session.execute(update(Reminder).values(next_fire_at=due))
    )


async def snoozes(bot: Bot) -> list[tuple[str, datetime | None, int]]:
    """The snoozes (reminders with a `snooze_of`) the store holds: id, when each goes off
    and its version, so that a test sees one snoozed again in place too."""
    assert bot.reminders is not None
    rows = select(Reminder.id, Reminder.next_fire_at, Reminder.version).where(
        Reminder.snooze_of.is_not(None)
    )
    found = await bot.reminders.database.read(lambda s: s.execute(rows).all())
    return [(rid, at, version) for rid, at, version in found]


async def people(bot: Bot) -> list[str]:
    """Whom the one reminder (not its snoozes) mentions, by id, as the store keeps them."""
    assert bot.reminders is not None
    root = select(Reminder.id).where(Reminder.snooze_of.is_(None))
    (rid,) = await bot.reminders.database.read(lambda s: list(s.scalars(root)))
    return [m.user_id for m in (await bot.reminders.get(rid)).audience.mentions]
