"""The offline digest of a chat where someone talked to the bot: their commands and
requests and the bot's answers are not the people's conversation, a reminder request is
not a date, and a cancelled reminder says so. Through the router, on SQLite and
PostgreSQL."""

from __future__ import annotations

from tests.test_catchup import Clock, make_bot, say


async def test_talking_to_the_bot_is_not_the_groups_conversation(database_url: str) -> None:
    clock = Clock()
    async with make_bot(database_url, clock) as bot:
        await say(bot, clock, 0, "Bob", "morning all")
        await say(bot, clock, 1, "Alice", "/remind tomorrow at 9 call the dentist")
        await say(bot, clock, 2, "Alice", "@groupmate remind me on friday at 10 to pay the rent")
        await say(bot, clock, 3, "Alice", "/reminders")
        (cancelled,) = await say(bot, clock, 4, "Alice", "/cancel 2")
        await say(bot, clock, 5, "Bob", "dinner on Wednesday?")
        (reply,) = await say(bot, clock, 60, "Carol", "/catchup")
    print(f"\n{reply}\n")
    assert "#2" in cancelled
    lines = reply.splitlines()
    assert "2 messages from 1 person, and 8 to and from the bot." in lines
    assert "👥 Who spoke: Bob 2" in lines
    dates = lines[lines.index("📌 Decisions and 📅 dates:") + 1 :]
    assert dates == ["📅 Bob, Tue 09:05: “dinner on Wednesday?”"]
    reminders = lines[lines.index("⏰ Reminders:") + 1 : lines.index("⏰ Reminders:") + 3]
    assert reminders == [
        "• #1 set by Alice, Tue 09:01: “call the dentist”",
        "• #2 set by Alice, Tue 09:02: “pay the rent” (cancelled)",
    ]
