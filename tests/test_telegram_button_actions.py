"""Remind me too on Telegram, end to end: the fake's callback_query updates -> the real
Bot -> Router.press -> the store. Bob's press adds him once, Telegram's redelivery of the
same query changes nothing, and a new press takes him off again. (Done and Snooze are in
test_telegram_buttons.py.)"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import eventually
from tests.fake_telegram import BOB, FakeTelegram
from tests.scripted_presses import people
from tests.test_telegram import running
from tests.test_telegram_buttons import fake, gone_off

__all__ = ["fake"]  # the fixture, used by name


async def test_remind_me_too_pressed_adds_bob_once_and_a_new_press_takes_him_off(
    tmp_path: Path, fake: FakeTelegram
) -> None:
    async with running(tmp_path, fake) as bot:
        message, keys = await gone_off(bot, fake, "/remind every day at 9:00 stand-up")
        (me_too,) = keys[1]
        assert me_too["text"] == "👍 Remind me too"
        query = fake.press(message, me_too["callback_data"], sender=BOB)
        await eventually(lambda: len(fake.edits()) == 1)
        assert fake.edits()[0]["text"].endswith("👍 Bob will be reminded too")
        assert await people(bot) == [f"tg:{BOB['id']}"]
        fake.press(message, me_too["callback_data"], sender=BOB, query_id=query)  # again
        await eventually(lambda: len(fake.called("answerCallbackQuery")) == 2)
        assert await people(bot) == [f"tg:{BOB['id']}"] and len(fake.edits()) == 1
        fake.press(message, me_too["callback_data"], sender=BOB)  # a new press: off again
        await eventually(lambda: len(fake.edits()) == 2)
        assert await people(bot) == []
        assert fake.edits()[1]["text"].endswith("\nBob won't be reminded")
