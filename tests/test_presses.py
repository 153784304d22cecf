"""Pressing a delivered reminder's buttons, end to end through a real bot on SQLite and
PostgreSQL: a press acts once, as the presser, through the invoker (policy, audit); a
replay or a second press changes nothing more; a press the store can't place (forged,
another chat's, a reminder that is gone) is refused with nothing changed; the message
is re-rendered with a status line and the buttons that still apply."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from groupmate.bot.messages import IncomingMessage, IncomingReaction
from groupmate.bot.presses import ButtonData, Press, PressOutcome
from groupmate.storage.audit import AuditQuery
from groupmate.testing import FakeClock, ScriptedModel
from groupmate.testing.bot import TestBot

NOW = datetime(2026, 11, 24, 13, 5, tzinfo=UTC)  # Tue 14:05 in Berlin
GROUP = "group-1"


@pytest.fixture
async def bot(database_url: str, tmp_path: Path, groupmate_model: ScriptedModel) -> Any:
    config = {"bot": {"timezone": "Europe/Berlin"}, "storage": {"url": database_url}}
    async with TestBot(
        tmp_path=tmp_path, clock=FakeClock(NOW), model=groupmate_model, config=config
    ) as started:
        yield started


def press(
    message: Any, row: int, column: int, *, by: str = "alice", press_id: str, chat: str = GROUP
) -> Press:
    data = ButtonData.decode(message.buttons[row][column].data)
    assert data is not None
    return Press(chat, "group", by, by.title(), data, press_id, message_id="sent-1")


def labels(message: Any) -> list[list[str]]:
    return [[button.label for button in row] for row in message.buttons]


async def acks(bot: TestBot) -> int:
    reminders = bot.app.reminders
    assert reminders is not None
    rows = await reminders.database.read(
        lambda session: session.execute(text("SELECT count(*) FROM acknowledgements")).scalar_one()
    )
    return int(rows)


async def audit_rows(bot: TestBot) -> list[tuple[str, str, str]]:
    assert bot.app.audit is not None
    rows = await bot.app.audit.page(AuditQuery(chat_id=GROUP))
    return [(row.tool, row.source, row.outcome) for row in rows]


async def test_delivered_reminder_has_its_buttons(bot: TestBot) -> None:
    await bot.say("/remind every day at 14:10 stretch")
    await bot.say("/提醒 每天下午2点10分 喝水")
    await bot.advance(timedelta(minutes=5))
    english, chinese = bot.outbox
    assert labels(english) == [
        ["✅ Done", "💤 10 min", "💤 1 h", "💤 Tomorrow 9:00"],
        ["👍 Remind me too"],
    ]
    assert labels(chinese)[0] == ["✅ 完成", "💤 10分钟", "💤 1小时", "💤 明天9点"]
    data = ButtonData.decode(english.buttons[0][0].data)
    assert data == ButtonData("done", english.reminder_id or "", english.occurrence)


async def test_done_acts_once_as_the_presser_and_a_replay_changes_nothing(bot: TestBot) -> None:
    await bot.say("/remind every day at 14:10 stretch")
    await bot.advance(timedelta(minutes=5))
    [message] = bot.outbox
    done = press(message, 0, 0, press_id="tg:cb:1")
    first = await bot.app.press(done)
    assert (first.ok, first.repeated, first.answer) == (True, False, "✅ #1 marked done.")
    assert first.update is not None
    assert first.update.text == "⏰ Reminder for @Alice: stretch\n✅ Done by Alice 14:10"
    # A daily reminder goes on: Done and the snoozes are spent, Remind me too stays.
    assert labels(first.update) == [["👍 Remind me too"]]
    replay = await bot.app.press(done)
    assert replay == PressOutcome(True, first.answer, None, repeated=True)
    assert await acks(bot) == 1
    assert (await audit_rows(bot))[0] == ("reminder_done", "button", "ok")
    assert len([r for r in await audit_rows(bot) if r[0] == "reminder_done"]) == 1


async def test_a_second_snooze_press_of_the_same_occurrence_does_not_snooze_again(
    bot: TestBot,
) -> None:
    await bot.say("/remind in 5 minutes stretch")
    await bot.advance(timedelta(minutes=5))
    [message] = bot.outbox
    first = await bot.app.press(press(message, 0, 1, press_id="tg:cb:1"))
    assert first.ok and first.answer.startswith("💤 Snoozed #1 until Tue 24 Nov 14:20")
    assert first.update is not None and first.update.text.endswith("💤 Snoozed to 14:20 by Alice")
    again = await bot.app.press(press(message, 0, 2, press_id="tg:cb:2"))
    assert (again.ok, again.answer, again.repeated) == (True, "Already snoozed to 14:20.", False)
    assert await bot.advance(timedelta(hours=2)) == ["⏰ Reminder for @Alice: stretch"]
    snoozes = [r for r in await audit_rows(bot) if r[0] == "reminder_snooze"]
    assert snoozes == [("reminder_snooze", "button", "ok")]


async def test_tomorrow_snoozes_to_nine_in_the_chats_zone(bot: TestBot) -> None:
    await bot.say("/remind in 5 minutes stretch")
    await bot.advance(timedelta(minutes=5))
    outcome = await bot.app.press(press(bot.outbox[0], 0, 3, press_id="tg:cb:1"))
    assert outcome.answer.startswith("💤 Snoozed #1 until Wed 25 Nov 09:00"), outcome.answer


async def test_forged_other_chat_and_gone_presses_are_refused_and_change_nothing(
    bot: TestBot,
) -> None:
    await bot.say("/remind every day at 14:10 stretch")
    await bot.advance(timedelta(minutes=5))
    [message] = bot.outbox
    gone = "This reminder is gone; nothing was changed."
    forged = ButtonData("done", "0" * 32, message.occurrence)
    outcome = await bot.app.press(Press(GROUP, "group", "alice", "Alice", forged, "x:1"))
    assert (outcome.ok, outcome.answer, outcome.update) == (False, gone, None)
    elsewhere = await bot.app.press(press(message, 0, 0, press_id="x:2", chat="group-2"))
    assert (elsewhere.ok, elsewhere.answer) == (False, gone)
    # An occurrence that never went out (a made-up time) is not one to be done with.
    made_up = ButtonData("done", message.reminder_id or "", NOW + timedelta(hours=3))
    later = await bot.app.press(Press(GROUP, "group", "alice", "Alice", made_up, "x:3"))
    assert (later.ok, later.answer) == (
        False,
        "Reminder #1 hasn't gone off yet: there's nothing to snooze or mark done. "
        "Edit it to move it, or /cancel #1 to stop it.",
    )
    assert await acks(bot) == 0
    await bot.say("/cancel 1")
    cancelled = await bot.app.press(press(message, 0, 0, press_id="x:4"))
    assert (cancelled.ok, cancelled.answer) == (False, gone)
    assert await acks(bot) == 0


async def test_a_member_may_not_mark_anothers_reminder_done(bot: TestBot) -> None:
    await bot.say("/remind every day at 14:10 stretch")
    await bot.advance(timedelta(minutes=5))
    refused = await bot.app.press(press(bot.outbox[0], 0, 0, by="bob", press_id="x:1"))
    assert (refused.ok, refused.update) == (False, None)
    assert refused.answer == (
        "Reminder #1 was set by Alice; only they or a group admin can mark it done."
    )
    assert await acks(bot) == 0
    assert ("reminder_done", "button", "refused") in await audit_rows(bot)


async def test_me_too_by_button_from_the_next_occurrence_and_off_again(bot: TestBot) -> None:
    await bot.say("/remind every day at 14:10 stretch")
    await bot.advance(timedelta(minutes=5))
    on = await bot.app.press(press(bot.outbox[0], 1, 0, by="bob", press_id="x:1"))
    assert on.answer == "👍 You'll be reminded too, from the next time #1 goes off."
    assert on.update is not None and on.update.text.endswith("👍 Bob will be reminded too")
    await bot.advance(timedelta(days=1))
    assert list(bot.outbox[-1].mentions) == ["alice", "bob"]
    off = await bot.app.press(press(bot.outbox[-1], 1, 0, by="bob", press_id="x:2"))
    assert off.answer == "OK, #1 won't remind you any more."
    await bot.advance(timedelta(days=1))
    assert list(bot.outbox[-1].mentions) == ["alice"]
    # The asker switches it off: the button is gone, and a press is refused.
    assert (await bot.say("/metoo 1 forbid"))[0].startswith("OK: members can no longer")
    await bot.advance(timedelta(days=1))
    assert labels(bot.outbox[-1]) == [["✅ Done", "💤 10 min", "💤 1 h", "💤 Tomorrow 9:00"]]
    refused = await bot.app.press(press(bot.outbox[-2], 1, 0, by="bob", press_id="x:3"))
    assert refused.answer == (
        "I can't add you to reminder #1: its setter turned “remind me too” off for it."
    )


async def test_me_too_follows_the_chats_who_rules(bot: TestBot) -> None:
    await bot.say("/settings remind_others off", admin=True)
    await bot.say("/remind every day at 14:10 stretch")
    await bot.advance(timedelta(minutes=5))
    refused = await bot.app.press(press(bot.outbox[0], 1, 0, by="bob", press_id="x:1"))
    assert refused.answer == (
        "I can't add you to reminder #1: this chat's rules keep members from adding people "
        "to reminders."
    )


def reply(text: str, *, to: str = "sent-1", sender: str = "alice", n: int = 1) -> IncomingMessage:
    return IncomingMessage(
        chat_id=GROUP,
        chat_type="group",
        sender_id=sender,
        sender_name=sender.title(),
        text=text,
        message_id=f"reply-{n}",
        reply_to_bot=True,
        reply_to_message_id=to,
    )


async def test_done_by_reply_words_and_by_command(bot: TestBot) -> None:
    await bot.say("/remind every day at 14:10 stretch")
    await bot.say("/remind every day at 14:10 drink water")
    await bot.advance(timedelta(minutes=5))
    [(done,)] = [[r.text for r in await bot.app.handle(reply("done", n=1))]]
    assert done == "✅ #1 marked done."
    [(zh,)] = [[r.text for r in await bot.app.handle(reply("好了", to="sent-2", n=2))]]
    assert zh == "✅ #2 已标记完成。"
    assert await acks(bot) == 2
    await bot.advance(timedelta(days=1))
    assert await bot.say("/done 1") == ["✅ #1 marked done."]
    assert await bot.say("/完成 2") == ["✅ #2 已标记完成。"]
    assert await acks(bot) == 4


@pytest.mark.parametrize(
    "words",
    ["done with the slides, thanks", "not done", "好了吗", "is it done?", "me too?? no"],
)
async def test_near_misses_in_reply_are_not_taken_as_done(bot: TestBot, words: str) -> None:
    await bot.say("/remind every day at 14:10 stretch")
    await bot.advance(timedelta(minutes=5))
    await bot.app.handle(reply(words))
    assert await acks(bot) == 0


async def test_done_said_to_a_person_or_without_a_reply_is_not_taken(bot: TestBot) -> None:
    await bot.say("/remind every day at 14:10 stretch")
    await bot.advance(timedelta(minutes=5))
    # Said to the bot but replying to nothing, or to someone else's message: chat, not a
    # done (the reminder that just went off is the only one it could have meant).
    for n, replied in enumerate((None, "someone-elses")):
        said = IncomingMessage(
            chat_id=GROUP, chat_type="group", sender_id="alice", sender_name="Alice",
            text="done", message_id=f"m-{n}", reply_to_message_id=replied, mentions_bot=True,
        )  # fmt: skip
        await bot.app.handle(said)
    assert await acks(bot) == 0


async def test_reactions_act_as_presses_and_me_too_on_the_confirmation(bot: TestBot) -> None:
    [confirmation] = await bot.app.handle(
        IncomingMessage(GROUP, "group", "alice", "Alice", "/remind every day at 14:10 stretch",
                        mentions_bot=True, message_id="m-1")
    )  # fmt: skip
    assert confirmation.reminder_id is not None
    await bot.app.posted(confirmation, "conf-1")
    await bot.app.react(IncomingReaction(GROUP, "group", "bob", "conf-1", "👍"))
    await bot.advance(timedelta(minutes=5))
    assert list(bot.outbox[-1].mentions) == ["alice", "bob"]
    await bot.app.react(IncomingReaction(GROUP, "group", "bob", "conf-1", "👍", added=False))
    await bot.app.react(IncomingReaction(GROUP, "group", "alice", "sent-1", "✅"))
    assert await acks(bot) == 1
    assert ("reminder_done", "reaction", "ok") in await audit_rows(bot)
    await bot.advance(timedelta(days=1))
    assert list(bot.outbox[-1].mentions) == ["alice"]
