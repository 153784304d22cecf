"""`/catchup`, "what did I miss?", "我错过了什么": the chat since the asker last spoke,
what concerns them first. Offline (no model), through the stub model, and with the day's
budget spent; on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from groupmate.bot.app import Bot
from groupmate.bot.messages import IncomingMessage
from groupmate.function_calls.catchup_core import Asker, for_you
from groupmate.storage import Database, Member, upgrade
from groupmate.storage.chat_window import ReminderEvent, WindowMessage, window_messages
from groupmate.storage.chatlog import ChatLog, LogEntry
from groupmate.storage.usage import UsageLog
from groupmate.testing.stub_llm import StubLLM, calls, error, text
from tests import bots

START = datetime(2026, 11, 24, 1, 0, tzinfo=UTC)  # 09:00 in Shanghai


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


def make_bot(
    database_url: str,
    clock: Clock,
    stub: StubLLM | None = None,
    *,
    burst_ms: int = 0,
    **budget: int,
) -> Bot:
    bot = {"timezone": "Asia/Shanghai", "burst_ms": burst_ms}
    llm = {"budget": budget} if stub is not None else None
    return bots.make_bot(database_url, stub, llm=llm, bot=bot, clock=clock)


async def say(
    bot: Bot,
    clock: Clock,
    minutes: float,
    sender: str,
    words: str,
    *,
    mid: str | None = None,
    reply: str | None = None,
    mentions: tuple[Member, ...] = (),
) -> list[str]:
    """`sender` says `words` `minutes` after the start; the bot's answers."""
    clock.now = START + timedelta(minutes=minutes)
    message = IncomingMessage(
        chat_id="g1",
        chat_type="group",
        sender_id=f"u-{sender.lower()}",
        sender_name=sender,
        text=words,
        message_id=mid,
        timestamp=clock.now,
        reply_to_message_id=reply,
        mentions=mentions,
        mentions_bot="@groupmate" in words,
    )
    return [answer.text for answer in await bot.handle(message)]


async def a_morning(bot: Bot, clock: Clock) -> None:
    """Alice leaves; the group talks about her, to her, and decides things."""
    await say(bot, clock, -26 * 60, "Bob", "we agreed on something two days ago")
    await say(bot, clock, 0, "Alice", "off to the dentist, back at noon", mid="a1")
    await say(bot, clock, 5, "Bob", "@Alice can you review my PR when you're back?", mid="b1")
    await say(bot, clock, 6, "Carol", "good luck! is it the wisdom tooth?", mid="c1", reply="a1")
    await say(bot, clock, 7, "王芳", "我们决定周五上线", mid="w1")
    await say(bot, clock, 8, "Dan", "lunch anyone", mid="d1")
    alice = (Member("u-alice", "Alice"),)
    await say(bot, clock, 9, "Bob", "/remind @Alice tomorrow at 9 send the slides", mentions=alice)


async def test_catchup_offline_leads_with_what_concerns_the_asker(
    database_url: str,
) -> None:
    clock = Clock()
    async with make_bot(database_url, clock) as bot:
        await a_morning(bot, clock)
        (reply,) = await say(bot, clock, 180, "Alice", "/catchup")
        # The same from plain words, with no model: the fixed phrases reach /catchup.
        (plain,) = await say(bot, clock, 181, "Alice", "@groupmate what did I miss?")
        (chinese,) = await say(bot, clock, 182, "Alice", "@groupmate 我错过了什么？")
    print(f"\n{reply}\n")
    head, note, for_you_heading, *rest = reply.splitlines()
    assert head == "📝 Catch-up: 4 messages since your last message (Tue 24 Nov 09:00):"
    assert note == "(no language model is configured, so this is the offline digest.)"
    assert for_you_heading == "🙋 For you:"
    assert rest[:3] == [
        "❓ Bob, 09:05: “@Alice can you review my PR when you're back?”",
        "❓ Carol, 09:06: “good luck! is it the wisdom tooth?”",
        "⏰ #1 set by Bob, 09:09: “send the slides” (for Alice)",
    ]
    assert "📌 王芳, 09:07: “我们决定周五上线”" in rest
    assert "two days ago" not in reply and "dentist" not in reply  # before the window
    assert "/catchup" not in reply  # the request is not part of it
    # Asked again a minute later: she was caught up then.
    assert plain == "Nothing new since your last catch-up (Tue 24 Nov 12:00)."
    assert chinese == "你上次查看错过的消息（11月24日 周二 12:01）以来没有新消息。"


async def test_catchup_without_a_message_of_theirs_covers_the_last_24_hours(
    database_url: str,
) -> None:
    clock = Clock()
    async with make_bot(database_url, clock) as bot:
        await a_morning(bot, clock)
        (reply,) = await say(bot, clock, 60, "Eve", "@groupmate 我错过了什么")
    print(f"\n{reply}\n")
    assert reply.startswith(
        "📝 过去 24 小时的 5 条消息：\n（没有配置语言模型，以下是离线摘要。）\n"
    )
    assert "🙋" not in reply  # nothing in it names Eve
    assert "📋 离线摘要" in reply and "📌 王芳，周二 09:07：“我们决定周五上线”" in reply
    assert "two days ago" not in reply
    # Carol's reply to Alice, logged with what it replies to, is counted.
    assert "• Alice，周二 09:00：“off to the dentist, back at noon”（1 条回复）" in reply


async def test_catchup_with_a_model_gives_it_the_window_and_what_concerns_the_asker(
    database_url: str, stub: StubLLM
) -> None:
    clock = Clock()
    stub.script(
        calls(("chat_catchup", {})),
        text("• Bob wants your PR review\n• Friday launch decided"),
    )
    async with make_bot(database_url, clock, stub) as bot:
        await a_morning(bot, clock)
        requests_before = len(stub.requests)
        (reply,) = await say(bot, clock, 180, "Alice", "@groupmate what did I miss?")
    print(f"\n{reply}\n")
    summary_request = stub.requests[requests_before + 1]["messages"]
    system, transcript = summary_request[0]["content"], summary_request[1]["content"]
    assert "For Alice:\n❓ Bob, 09:05: “@Alice can you review my PR when you're back?”" in system
    assert "⏰ #1 set by Bob, 09:09: “send the slides” (for Alice)" in system
    assert "📌 王芳, 09:07: “我们决定周五上线”" in system
    assert "[09:08] Dan: lunch anyone" in transcript
    assert "dentist" not in transcript and "two days ago" not in transcript
    assert reply.startswith("📝 Catch-up: 4 messages since your last message")
    assert "🙋 For you:\n❓ Bob" in reply
    assert reply.endswith("• Bob wants your PR review\n• Friday launch decided")


async def test_catchup_asked_in_a_burst_starts_before_the_burst(
    database_url: str, stub: StubLLM
) -> None:
    """ "hey" then "what did I miss?", joined as one request: the window starts at Alice's
    message before them, not at the first of them (which would leave nothing)."""
    clock = Clock()
    stub.script(calls(("chat_catchup", {})), text("• Bob wants your PR review"))
    async with make_bot(database_url, clock, stub, burst_ms=300) as bot:
        await a_morning(bot, clock)
        requests_before = len(stub.requests)
        hey = asyncio.create_task(say(bot, clock, 180, "Alice", "@groupmate hey"))
        await asyncio.sleep(0.05)
        missed = await say(bot, clock, 180.5, "Alice", "@groupmate what did I miss?")
        assert await hey == []
    (reply,) = missed
    assert "hey\nwhat did I miss?" in stub.requests[requests_before]["messages"][-1]["content"]
    transcript = stub.requests[requests_before + 1]["messages"][1]["content"]
    assert "[09:08] Dan: lunch anyone" in transcript and "hey" not in transcript
    assert reply.startswith("📝 Catch-up: 4 messages since your last message (")
    assert "09:00" in reply.splitlines()[0]


async def test_catchup_with_the_budget_spent_gives_the_offline_digest_and_says_so(
    database_url: str, stub: StubLLM
) -> None:
    clock = Clock()
    async with make_bot(database_url, clock, stub, tokens_per_chat_per_day=1000) as bot:
        await a_morning(bot, clock)
        assert bot.reminders is not None
        usage = UsageLog(bot.reminders.database)
        await usage.record("g1", START.date(), prompt=900, completion=200, requests=1, estimated=0)
        await bot.reminders.database.batches.flush()
        asked = len(stub.requests)
        (reply,) = await say(bot, clock, 180, "Alice", "/catchup")
    print(f"\n{reply}\n")
    assert len(stub.requests) == asked  # the model was not called
    assert "(today's language-model budget is spent, so this is the offline digest.)" in reply
    assert "🙋 For you:\n❓ Bob" in reply and "📋 Offline digest" in reply


async def test_catchup_when_the_model_fails_gives_the_offline_digest_and_says_why(
    database_url: str, stub: StubLLM
) -> None:
    clock = Clock()
    stub.script(error(503, "overloaded"))
    async with make_bot(database_url, clock, stub) as bot:
        await a_morning(bot, clock)
        (reply,) = await say(bot, clock, 180, "Alice", "/catchup")
    head, note, *rest = reply.splitlines()
    assert head.startswith("📝 Catch-up: 4 messages")
    assert note.endswith(". Here is the offline digest instead.")
    assert "🙋 For you:" in rest and "📌 王芳, 09:07: “我们决定周五上线”" in rest


def test_for_you_finds_mentions_questions_replies_and_reminders() -> None:
    at = START
    said = [
        WindowMessage("u-a", "Alice", "hi all", at, message_id="a1"),
        WindowMessage("u-b", "Bob", "@alice are you coming?", at, message_id="b1"),
        WindowMessage("u-c", "Carol", "yes!", at, message_id="c1", reply_to="a1"),
        WindowMessage("u-w", "王芳", "Alice 的方案不错", at, message_id="w1"),
        WindowMessage("u-w", "王芳", "你觉得呢", at, message_id="w2", reply_to="a1"),
        WindowMessage("bot", "groupmate", "⏰ Reminder for @Alice", at, from_bot=True),
        WindowMessage("u-d", "Dan", "lunch?", at, message_id="d1"),
    ]
    events = [
        ReminderEvent("set", at, 1, "slides", "u-b", "Bob", ("u-b", "u-a"), ("Bob", "Alice")),
        ReminderEvent("set", at, 2, "own", "u-a", "Alice", ("u-a",), ("Alice",)),
        ReminderEvent("set", at, 3, "all", "u-d", "Dan", ("u-d",), ("Dan",), everyone=True),
        ReminderEvent("fired", at, 4, "fired", "u-b", "Bob", ("u-a",), ("Alice",)),
        ReminderEvent("set", at, 5, "dan's", "u-d", "Dan", ("u-d",), ("Dan",)),
    ]
    found = for_you(said, events, Asker("u-a", "Alice"))
    assert [m.message_id for m in found.questions] == ["b1", "w2"]
    assert [m.message_id for m in found.mentions] == ["c1", "w1"]
    assert [r.short_id for r in found.reminders] == [1, 3]
    zed = for_you(said, events, Asker("u-z", "Zed"))
    assert (zed.questions, zed.mentions, [r.short_id for r in zed.reminders]) == ((), (), [3])
    # A reply to their message from before the window counts when its id is given.
    before = [WindowMessage("u-c", "Carol", "done?", at, message_id="c9", reply_to="z0")]
    assert for_you(before, [], Asker("u-z", "Zed")).empty
    assert for_you(before, [], Asker("u-z", "Zed"), {"z0"}).questions == tuple(before)


async def test_a_reply_is_logged_with_what_it_replies_to_and_is_no_answer_of_the_bots(
    database_url: str,
) -> None:
    database = Database(database_url)
    upgrade(database)
    chatlog = ChatLog(database, max_age=timedelta(days=30))
    try:
        await chatlog.append("g1", LogEntry("m1", "u-a", "Ann", "@groupmate hi", START))
        await chatlog.record_answer(
            "g1", "m1", ["hello Ann"], bot_id="bot", bot_name="groupmate", at=START,
            delivered=False,
        )  # fmt: skip
        later = START + timedelta(seconds=5)
        await chatlog.log("g1", LogEntry("m2", "u-b", "Bob", "hi Ann", later, reply_to="m1"))
        await chatlog.flush()
        window = await database.read(
            lambda session: window_messages(session, "g1", START, later + timedelta(1), 10)
        )
        # A redelivery of m1 resends the bot's answer, not Bob's reply to it.
        assert await chatlog.answer_to("g1", "m1") == ["hello Ann"]
    finally:
        await database.aclose()
    assert [(m.text, m.reply_to) for m in window] == [
        ("@groupmate hi", None),
        ("hello Ann", "m1"),
        ("hi Ann", "m1"),
    ]
