"""Catch-up counts from what the asker has not yet seen: their last catch-up, or their
last message before they were away (`AWAY` without a word), not a word said on their
return. On SQLite and PostgreSQL, through the router."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from groupmate.function_calls.handlers.catchup import AWAY, SeenFrom, seen_from
from tests.test_catchup import START, Clock, a_morning, make_bot, say


async def test_a_word_on_return_does_not_hide_what_was_missed(database_url: str) -> None:
    clock = Clock()
    async with make_bot(database_url, clock) as bot:
        await a_morning(bot, clock)  # Alice leaves at 09:00; the group talks until 09:09
        # Back at noon, she answers Bob first, then asks what she missed.
        assert await say(bot, clock, 180, "Alice", "hey @Bob, which PR?") == []
        (reply,) = await say(bot, clock, 181, "Alice", "/catchup")
        # Right after: nothing she has not just been shown.
        (again,) = await say(bot, clock, 182, "Alice", "/catchup")
        (chinese,) = await say(bot, clock, 183, "Alice", "@groupmate 我错过了什么")
    print(f"\n{reply}\n")
    head, _note, for_you_heading, *rest = reply.splitlines()
    assert head == (
        "📝 Catch-up: 4 messages since your last message before you were away (Tue 24 Nov 09:00):"
    )
    assert for_you_heading == "🙋 For you:"
    assert rest[0] == "❓ Bob, 09:05: “@Alice can you review my PR when you're back?”"
    assert "📌 王芳, 09:07: “我们决定周五上线”" in rest
    assert again == "Nothing new since your last catch-up (Tue 24 Nov 12:01)."
    assert chinese == "你上次查看错过的消息（11月24日 周二 12:02）以来没有新消息。"


async def test_someone_who_was_here_all_along_gets_only_what_came_after_them(
    database_url: str,
) -> None:
    clock = Clock()
    async with make_bot(database_url, clock) as bot:
        await say(bot, clock, -60, "Bob", "morning all")
        for minute in range(0, 60, 10):  # Alice and Bob talk for an hour
            await say(bot, clock, minute, "Alice", f"point {minute}")
            await say(bot, clock, minute + 5, "Bob", f"answer {minute}")
        await say(bot, clock, 60, "Alice", "ok, agreed")
        (nothing,) = await say(bot, clock, 61, "Alice", "/catchup")
        await say(bot, clock, 62, "Bob", "I'll write it up")
        (one,) = await say(bot, clock, 63, "Alice", "/catchup")
    assert nothing == "Nothing new since your last message (Tue 24 Nov 10:00)."
    assert one.startswith("📝 Catch-up: 1 message since your last catch-up (Tue 24 Nov 10:01):")
    assert one.endswith("👥 Who spoke: Bob 1")  # Bob's one message since, nothing before


def test_where_the_unseen_part_begins() -> None:
    now = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)

    def ago(minutes: int) -> datetime:
        return now - timedelta(minutes=minutes)

    # Spoke 40 minutes ago: from there.
    assert seen_from([ago(40)], now, None) == SeenFrom(ago(40), "message")
    # Said one word just now, after three hours away: from before the silence.
    assert seen_from([ago(1), ago(180)], now, None) == SeenFrom(ago(180), "away")
    # Talking for an hour, each word within AWAY of the last: from the last word.
    talk = [ago(m) for m in range(1, 60, 10)] + [ago(300)]
    assert seen_from(talk, now, None) == SeenFrom(ago(1), "message")
    # Never spoke before this word: the last 24 hours.
    assert seen_from([ago(1)], now, None) == SeenFrom(None, "day")
    # A later catch-up wins; an earlier one does not.
    assert seen_from([ago(1), ago(180)], now, ago(2)) == SeenFrom(ago(2), "catchup")
    assert seen_from([ago(40)], now, ago(90)) == SeenFrom(ago(40), "message")
    assert seen_from([], now, ago(90)) == SeenFrom(ago(90), "catchup")
    # Right at AWAY apart is still the same stretch of talking.
    assert seen_from([ago(1), ago(1) - AWAY], now, None) == SeenFrom(ago(1), "message")


async def test_the_marks_stay_where_catchup_kept_them(database_url: str) -> None:
    """Marks are the summary family's values (`catchup-seen:<sender>`), where catch-up kept
    them in its plugin store before `SeenMarks`: one set before an upgrade still counts."""
    clock = Clock()
    async with make_bot(database_url, clock) as bot:
        await a_morning(bot, clock)
        store = bot.plugin_store("summary", "g1")
        at = (START + timedelta(minutes=7)).astimezone(UTC).isoformat()
        await store.set("catchup-seen:u-alice", at)
        (reply,) = await say(bot, clock, 180, "Alice", "/catchup")
        marked = await store.get("catchup-seen:u-alice")
    assert "since your last catch-up (Tue 24 Nov 09:07)" in reply.splitlines()[0]
    assert marked == (START + timedelta(minutes=180)).astimezone(UTC).isoformat()
