"""Follow-ups in a group: once the bot answered someone, their next message within the
chat's window reaches it without a mention; off by default; set with /settings."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from groupmate.bot.app import Bot
from groupmate.bot.messages import IncomingMessage
from groupmate.storage import Member
from groupmate.testing.stub_llm import StubLLM
from tests import bots
from tests.conftest import FakeClock
from tests.http_harness import echo_bot

_ids = iter(range(1_000_000))


def make_bot(database_url: str, stub: StubLLM, clock: FakeClock) -> Bot:
    return echo_bot(database_url, stub, clock)


def said(words: str, sender: str = "ann", chat: str = "g1", **fields: Any) -> IncomingMessage:
    return bots.chat_message(
        words,
        chat_id=chat,
        sender_id=sender,
        sender_name=sender.title(),
        message_id=f"m{next(_ids)}",
        **fields,
    )


async def answers(bot: Bot, words: str, **fields: Any) -> list[str]:
    return [reply.text for reply in await bot.handle(said(words, **fields))]


async def admin_sets(bot: Bot, setting: str, chat: str = "g1") -> str:
    (reply,) = await bot.handle(said(f"/settings {setting}", "boss", chat, sender_is_admin=True))
    return reply.text


async def test_off_by_default_on_for_the_next_message_of_whom_it_answered(
    database_url: str, stub: StubLLM, clock: FakeClock
) -> None:
    async with make_bot(database_url, stub, clock) as bot:
        assert await answers(bot, "@groupmate when is the launch?") == ["echo: when is the launch?"]
        assert await answers(bot, "and the demo?") == []  # off: a mention is needed
        shown = await admin_sets(bot, "followup on")
        assert shown.startswith("⚙️ Updated. Follow-ups: on. After I answer someone")
        assert "within 120 seconds" in shown
        assert await answers(bot, "@groupmate when is the launch?") == ["echo: when is the launch?"]
        assert await answers(bot, "and the demo?") == ["echo: and the demo?"]
        # Each answer opens the window again: the exchange goes on.
        assert await answers(bot, "thanks!") == ["echo: thanks!"]
        # Bob was not answered: his messages stay between people.
        assert await answers(bot, "lunch anyone?", sender="bob") == []
        # Another group keeps its own setting (off).
        assert await answers(bot, "@groupmate hi", chat="g2") == ["echo: hi"]
        assert await answers(bot, "and you?", chat="g2") == []
        assert await answers(bot, "@groupmate and now?") == ["echo: and now?"]
        assert (await admin_sets(bot, "followup off")).startswith("⚙️ Updated. Follow-ups: off")
        assert await answers(bot, "and after?") == []  # turned off: Ann's window closed too
        assert await answers(bot, "@groupmate one more", sender="bob") == ["echo: one more"]
        assert await answers(bot, "and another", sender="bob") == []


async def test_the_window_ends_after_followup_seconds(
    database_url: str, stub: StubLLM, clock: FakeClock
) -> None:
    async with make_bot(database_url, stub, clock) as bot:
        await admin_sets(bot, "followup on followup_seconds 30")
        assert await answers(bot, "@groupmate hi") == ["echo: hi"]
        clock.advance(timedelta(seconds=29))
        assert await answers(bot, "still there?") == ["echo: still there?"]
        clock.advance(timedelta(seconds=31))
        assert await answers(bot, "hello?") == []  # too late: for the people again


async def test_a_mention_or_reply_to_someone_else_ends_it(
    database_url: str, stub: StubLLM, clock: FakeClock
) -> None:
    bob = (Member("bob", "Bob"),)
    async with make_bot(database_url, stub, clock) as bot:
        await admin_sets(bot, "followup on")
        for words, fields in (
            ("@bob what do you think?", {}),  # typed
            ("what do you think?", {"mentions": bob}),  # the platform's mention
            ("what do you think?", {"reply_to_message_id": "m-bob"}),
            ("/poll@pollbot lunch", {}),  # another bot's command
        ):
            assert await answers(bot, "@groupmate hi") == ["echo: hi"]
            assert await answers(bot, words, **fields) == [], words
            # The window is used up: the next message is not for the bot either.
            assert await answers(bot, "ok thanks") == []
        assert await answers(bot, "@groupmate hi") == ["echo: hi"]
        # Mailing someone is not mentioning them; a reply to the bot is for it anyway.
        assert await answers(bot, "mail ann@example.com") == ["echo: mail ann@example.com"]
        assert await answers(bot, "and?", reply_to_message_id="m-bot", reply_to_bot=True) == [
            "echo: and?"
        ]


async def test_settings_show_and_refuse_in_plain_words(
    database_url: str, stub: StubLLM, clock: FakeClock
) -> None:
    async with make_bot(database_url, stub, clock) as bot:
        (shown,) = await answers(bot, "/settings")
        assert shown.startswith("Reminders for other members: members.")
        assert "Follow-ups: off" in shown
        assert await answers(bot, "/settings followup on") == [
            "Only a group admin can change how follow-ups work here."
        ]
        for bad in ("followup maybe", "followup_seconds 5", "followup_seconds soon"):
            reply = await admin_sets(bot, bad)
            assert reply.startswith("That didn't work: "), reply
            assert ("on or off" if "maybe" in bad else "10 to 3600 seconds") in reply
            assert "Input should" not in reply and "followup_settings" not in reply
        changed = await admin_sets(bot, "followup_seconds 45")
        assert changed.startswith("⚙️ Updated. Follow-ups: off")  # the window, for later
        assert "within 45 seconds" in changed
        assert "within 45 seconds" in await admin_sets(bot, "followup on")
        (usage,) = await answers(bot, "/settings colour red")
        assert usage.startswith("Usage: /settings") and "followup on|off" in usage


async def test_a_redelivered_follow_up_is_decided_the_same_and_uses_up_no_other(
    database_url: str, stub: StubLLM, clock: FakeClock
) -> None:
    async with make_bot(database_url, stub, clock) as bot:
        await admin_sets(bot, "followup on")
        await answers(bot, "@groupmate when is the launch?")
        follow_up = said("and the demo?")
        [first] = [r.text for r in await bot.handle(follow_up)]
        assert first == "echo: and the demo?"
        # The platform sends it again: seen before (no second answer), and the window
        # its answer opened stays for the next message.
        assert await bot.handle(follow_up) == []
        assert await answers(bot, "and the party?") == ["echo: and the party?"]


async def test_in_a_thread_the_threads_first_message_is_no_reply_to_someone_else(
    database_url: str, stub: StubLLM, clock: FakeClock
) -> None:
    """Slack and Matrix say which thread a message is in (its first message), not a
    message the sender answered: a follow-up in the thread where the bot answered goes
    on; a reply the sender picked to someone else's message still ends it."""
    thread = {"reply_to_message_id": "m-bob-root", "in_thread": True}
    async with make_bot(database_url, stub, clock) as bot:
        await admin_sets(bot, "followup on")
        assert await answers(bot, "@groupmate hi", **thread) == ["echo: hi"]
        assert await answers(bot, "and the demo?", **thread) == ["echo: and the demo?"]
        assert await answers(bot, "what do you think?", reply_to_message_id="m-bob-root") == []
