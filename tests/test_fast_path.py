"""The grammar first: reminder requests it reads whole are set without the model, and
nothing else is; a request the turn did not set never ends in the model's bare "OK.".

The precision corpus (tests/fast_path_corpus.yaml) holds the messages the fast path must
take, with exactly what it must set, and near-misses it must leave to the model."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml

from groupmate.bot.app import Bot
from groupmate.bot.messages import IncomingMessage
from groupmate.function_calls.grammar import classify_ask, read_whole
from groupmate.function_calls.handlers.reminder_words import describe_schedule, reminder_message
from groupmate.storage import Member
from groupmate.storage.deliveries import Claim
from groupmate.storage.reminder_rows import Audience
from groupmate.testing.stub_llm import StubLLM, calls, text
from tests import bots

CORPUS = yaml.safe_load((Path(__file__).parent / "fast_path_corpus.yaml").read_text("utf-8"))
CORPUS_NOW = datetime.strptime(CORPUS["now"], "%Y-%m-%d %H:%M").replace(
    tzinfo=ZoneInfo(CORPUS["zone"])
)
NOW = datetime(2026, 11, 24, 13, 5, tzinfo=UTC)  # Tue 14:05 in Berlin


def test_the_corpus_is_large_and_half_near_misses() -> None:
    taken, declined = CORPUS["take"], CORPUS["decline"]
    assert len(taken) + len(declined) >= 300
    assert len(declined) >= (len(taken) + len(declined)) / 2 - 5
    chinese = [m for m in [c["say"] for c in taken] + declined if classify_ask(m).kind != "none"]
    assert sum(1 for m in chinese if any("\u4e00" <= ch <= "\u9fff" for ch in m)) >= 100


@pytest.mark.parametrize("case", CORPUS["take"], ids=lambda case: case["say"][:50])
def test_a_request_read_whole_sets_exactly_what_it_says(case: dict[str, Any]) -> None:
    request = read_whole(case["say"], CORPUS_NOW)
    if case["set"] is None:  # left to the model: a miss, never a wrong reading
        assert request is None
    else:
        assert request is not None and request.arguments == case["set"]


@pytest.mark.parametrize("said", CORPUS["decline"], ids=lambda said: said[:50])
def test_a_near_miss_never_takes_the_fast_path(said: str) -> None:
    assert read_whole(said, CORPUS_NOW) is None


@pytest.mark.parametrize(
    "said",
    [
        "no need to remind me every day anymore",
        "don't remind me tomorrow at 9 to call mom",
        "did you remind me tomorrow at 9 to call mom?",
        "she reminded me yesterday at 9",
        "remind me how to set a reminder tomorrow at 9",
        "不要提醒我明天开会",
        "她昨天提醒我9点开会",
        "你提醒我明天上午9点开会了吗？",
    ],
)
def test_negations_questions_and_reports_are_never_requests(said: str) -> None:
    assert classify_ask(said).kind == "not_a_request"


# --- through the bot ------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = NOW

    def __call__(self) -> datetime:
        return self.now


def make_bot(tmp_path: Path, stub: StubLLM, mode: str = "prompt", **reminders: Any) -> Bot:
    bot = {
        "timezone": "Europe/Berlin",
        "admins": ["u-admin"],
        "rate_limits": {"user_per_minute": 100, "burst": 100},
    }
    llm = {"tool_mode": mode}
    return bots.make_bot(tmp_path, stub, llm=llm, bot=bot, reminders=reminders, clock=Clock())


def said(words: str, sender: str = "u-alice", name: str = "Alice") -> IncomingMessage:
    return bots.chat_message(words, sender_id=sender, sender_name=name)


async def answer(bot: Bot, message: IncomingMessage) -> str:
    (reply,) = await bot.handle(message)
    return reply.text


async def stored(bot: Bot) -> list[tuple[str, str, Audience]]:
    assert bot.reminders is not None
    reminders, _ = await bot.reminders.list_for_chat("g1")
    return [(describe_schedule(r.schedule), r.content, r.audience) for r in reminders]


async def test_a_request_the_grammar_reads_is_set_without_the_model(
    tmp_path: Path, stub: StubLLM
) -> None:
    async with make_bot(tmp_path, stub) as bot:
        reply = await answer(bot, said("@groupmate at 6pm remind me to call mom"))
        assert reply == "⏰ Reminder #1 set for Tue 24 Nov 18:00 (Europe/Berlin): call mom"
        zh = await answer(bot, said("@groupmate 每周一上午9点提醒我写周报"))
        assert zh == (
            "⏰ 已设置提醒 #2：11月30日 周一 09:00（Europe/Berlin），每周一 09:00：写周报"
        )
        assert await stored(bot) == [
            ("once, on Tue 24 Nov 2026 at 18:00", "call mom", Audience()),
            ("every Monday at 09:00", "写周报", Audience()),
        ]
    assert stub.requests == []  # no tokens, no wait


async def test_with_the_fast_path_off_the_model_is_asked(tmp_path: Path, stub: StubLLM) -> None:
    stub.script(text("Sure!"))
    async with make_bot(tmp_path, stub, fast_path=False) as bot:
        reply = await answer(bot, said("@groupmate at 6pm remind me to call mom"))
        # The model set nothing: the grammar's reading is only offered.
        assert reply.startswith("Nothing is set yet. Set 'call mom' for Tue 24 Nov 18:00")
        assert await stored(bot) == []
    assert len(stub.requests) == 1


async def test_the_team_is_the_group_and_a_member_is_told_only_they_are_pinged(
    tmp_path: Path, stub: StubLLM
) -> None:
    async with make_bot(tmp_path, stub) as bot:
        member = await answer(bot, said("@groupmate remind the team every monday at 9 to plan"))
        assert member == (
            "⏰ Reminder #1 for this chat, mentioning only you (only group "
            "admins can mention everyone here) set for Mon 30 Nov 09:00 (Europe/Berlin), "
            "every Monday at 09:00: plan"
        )
        admin = await answer(bot, said("@groupmate 明天上午9点提醒大家开会", "u-admin", "Ad"))
        assert admin == "⏰ 已设置提醒 #2（提醒所有人）：11月25日 周三 09:00（Europe/Berlin）：开会"
        assert {content: audience for _, content, audience in await stored(bot)} == {
            "plan": Audience(creator=False),  # posted in the chat, nobody mentioned
            "开会": Audience(creator=False, everyone=True),
        }
    assert stub.requests == []


async def test_remind_others_off_refuses_the_team_with_the_reason(
    tmp_path: Path, stub: StubLLM
) -> None:
    async with make_bot(tmp_path, stub, remind_others="off") as bot:
        reply = await answer(bot, said("@groupmate remind everyone tomorrow at 9 to vote"))
        assert reply == "Reminders for the group or other members are turned off in this chat."
        assert await stored(bot) == []


def test_a_group_reminder_without_the_everyone_mention_still_mentions_its_creator() -> None:
    claim = Claim(
        delivery_id=1,
        reminder_id="r1",
        occurrence=NOW,
        attempts=0,
        late=False,
        chat_id="g1",
        chat_type="group",
        created_by="u-alice",
        created_by_name="Alice",
        content="plan",
        kind="weekly",
        timezone="Europe/Berlin",
        audience=Audience(creator=False),
    )
    message = reminder_message(claim, NOW)
    # A member's "remind us": in a muted group the mention is what notifies the asker.
    assert (message.text, message.mentions) == ("⏰ Reminder for @Alice: plan", ("u-alice",))
    assert (message.people, message.everyone) == ((Member("u-alice", "Alice"),), False)


@pytest.mark.parametrize(
    ("words", "reply"),
    [
        # Time first, the grammar asks back: its reason, never the model's "OK.".
        (
            "every friday at 5 remind us to clean the fridge",
            "Nothing was set: Did you mean 05:00 or 17:00?",
        ),
        # Not read whole (a second request): offered, the second request left out.
        (
            "remind me tomorrow at 9 to call mom and also search for flights",
            "Nothing is set yet. Set 'call mom' for Wed 25 Nov 09:00 (Europe/Berlin)? Reply yes.",
        ),
        (
            "could you please remind me at 6pm to call mom if she hasn't called",
            "Nothing is set yet. Set 'call mom if she hasn't called' for Tue 24 Nov 18:00",
        ),
        ("remind me sometime to call mom", "Nothing was set: I couldn't read that"),
        ("明天3点提醒我开会", "没有设置任何提醒："),
        # Negations and questions: never offered; "OK." would say it was done.
        ("no need to remind me every day anymore", "Nothing was changed"),
        ("did you remind bob at 5pm to send the slides?", "Nothing was changed"),
        ("不要提醒我明天开会", "什么都没有改动"),
    ],
)
@pytest.mark.parametrize(
    "bare", ["OK.", "Done!", "好的", "All set!", "Will remind you at 5.", "好的，明天9点。"]
)
async def test_a_request_nothing_set_never_ends_in_a_bare_ok(
    tmp_path: Path, stub: StubLLM, words: str, reply: str, bare: str
) -> None:
    stub.script(text(bare))
    async with make_bot(tmp_path, stub) as bot:
        answered = await answer(bot, said(f"@groupmate {words}"))
        assert answered.startswith(reply)
        assert await stored(bot) == []
        if not reply.startswith("Nothing is set yet"):  # no offer: "yes" sets nothing
            assert await bot.handle(said("yes")) == []
    assert len(stub.requests) == 1


async def test_a_model_that_names_the_team_as_a_member_reminds_the_group(
    tmp_path: Path, stub: StubLLM
) -> None:
    arguments = {"when": "every monday at 9am", "content": "send the report", "who": ["@team"]}
    stub.script(calls(("reminder_set", arguments)), calls(("reminder_set", arguments)))
    async with make_bot(tmp_path, stub, "native", fast_path=False) as bot:
        member = await answer(bot, said("@groupmate every monday at 9 remind the team to report"))
        assert member.startswith("⏰ Reminder #1 for this chat, mentioning only you (")
        admin = await answer(
            bot, said("@groupmate every monday at 9 remind the team to report", "u-admin", "Ad")
        )
        assert admin.startswith("⏰ Reminder #2 for everyone set for Mon 30 Nov 09:00")
        assert sorted(audience.everyone for _, _, audience in await stored(bot)) == [False, True]


@pytest.mark.parametrize(
    ("words", "reason"),
    [
        ("on dec 24 2040 remind me to open the time capsule", "more than ten years ahead"),
        ("in 9000 hours remind me to check the logs", "out of the range a reminder can have"),
    ],
)
async def test_a_reading_the_rules_refuse_is_refused_in_words(
    tmp_path: Path, stub: StubLLM, words: str, reason: str
) -> None:
    async with make_bot(tmp_path, stub) as bot:
        reply = await answer(bot, said(f"@groupmate {words}"))
        assert reply.startswith("Nothing is set:") and reason in reply
        assert "in_minutes" not in reply and "must be at most" not in reply  # no internals
        assert await stored(bot) == []
    assert stub.requests == []  # the grammar read it; the rules refused it
