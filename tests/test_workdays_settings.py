"""`/settings workdays` through the bot: admins only, plain refusals, and the rule's words
and next date in the confirmation and `/reminders` follow the chat's calendar."""

from __future__ import annotations

from datetime import UTC, datetime

from groupmate.storage.workdays import configure_calendars
from groupmate.testing.stub_llm import StubLLM, text
from tests import bots
from tests.conftest import FakeClock
from tests.http_harness import echo_bot
from tests.test_followup import admin_sets, answers

CHINA = "every workday (China's calendar) at 09:00"


async def test_settings_workdays_moves_the_next_date_and_names_the_calendar(
    database_url: str, stub: StubLLM, clock: FakeClock
) -> None:
    clock.set(datetime(2026, 2, 13, 2, 0, tzinfo=UTC))  # Friday 10:00 in Shanghai
    async with echo_bot(database_url, stub, clock, timezone="Asia/Shanghai") as bot:
        (before,) = await answers(bot, "/remind every weekday at 9:00 stand-up")
        assert "Mon 16 Feb 09:00" in before and "every weekday (Mon-Fri) at 09:00" in before
        # Not an admin: nothing changes.
        assert await answers(bot, "/settings workdays CN") == [
            "Only a group admin can change this chat's work-day calendar."
        ]
        changed = await admin_sets(bot, "workdays CN")
        assert changed.startswith("📅 Weekday reminders here now repeat every workday (China")
        # Saturday 14 February is a make-up work day; the 16th is the Spring Festival.
        assert f"#1 · next Sat 14 Feb 09:00 · {CHINA} · stand-up" in changed
        (listed,) = await answers(bot, "/reminders")
        assert f"#1 · next Sat 14 Feb 09:00 · {CHINA} · stand-up" in listed
        (shown,) = await answers(bot, "/settings")
        assert "Weekday reminders here repeat every workday (China's calendar)." in shown
        # A reminder set now follows the chat's calendar from the start.
        clock.set(datetime(2026, 2, 14, 2, 0, tzinfo=UTC))  # Saturday, after 09:00
        (made,) = await answers(bot, "/remind every weekday at 9:00 report")
        assert "Tue 24 Feb 09:00" in made and CHINA in made


async def test_settings_workdays_refuses_an_unknown_country_in_plain_words(
    database_url: str, stub: StubLLM, clock: FakeClock
) -> None:
    clock.set(datetime(2026, 12, 24, 9, 0, tzinfo=UTC))  # Thursday 10:00 in Berlin
    async with echo_bot(database_url, stub, clock, timezone="Europe/Berlin") as bot:
        await answers(bot, "/remind every weekday at 9:00 stand-up")
        refused = await admin_sets(bot, "workdays Narnia")
        assert "'Narnia' is not a country calendar I know" in refused
        assert "Input should" not in refused and "set_workdays" not in refused
        (listed,) = await answers(bot, "/reminders")
        assert "next Fri 25 Dec 09:00 · every weekday (Mon-Fri) at 09:00" in listed
        changed = await admin_sets(bot, "workdays de")
        skipping = "every weekday at 09:00, skipping Germany's public holidays"
        # Christmas, Friday 25th, is skipped: the next is Monday 28th.
        assert f"next Mon 28 Dec 09:00 · {skipping}" in changed
        (listed,) = await answers(bot, "/reminders")
        assert f"next Mon 28 Dec 09:00 · {skipping}" in listed
        off = await admin_sets(bot, "workdays off")
        assert "every weekday (Mon-Fri)" in off and "next Fri 25 Dec 09:00" in off


async def test_the_configs_default_calendar_and_days_reach_new_reminders(
    database_url: str, stub: StubLLM, clock: FakeClock
) -> None:
    clock.set(datetime(2026, 2, 12, 2, 0, tzinfo=UTC))  # Thursday 10:00 in Shanghai
    reminders = {"workdays": "cn", "calendars": {"CN": {"holidays": ["2026-02-13"]}}}
    stub.fallback = lambda body: text("echo")
    bot = bots.make_bot(
        database_url,
        stub,
        llm={"warm_up": False},
        bot={"timezone": "Asia/Shanghai"},
        reminders=reminders,
        clock=clock,
    )
    try:
        async with bot:
            (made,) = await answers(bot, "/remind every weekday at 9:00 stand-up")
            # Friday 13th is the operator's holiday; Saturday 14th China's make-up day.
            assert "Sat 14 Feb 09:00" in made and CHINA in made
    finally:
        configure_calendars({})  # the config is process-wide: leave none for other tests
