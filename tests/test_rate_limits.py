"""Rate limits: what reaches the model and what needs none draw on separate budgets,
every limited message is answered with when to try again, and the operator is never
limited."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from groupmate.bot.answering import rate_limited
from groupmate.bot.config import RateLimitConfig
from groupmate.bot.ratelimit import Budgets
from groupmate.testing import StubLLM
from groupmate.testing import stub_llm as s
from tests.test_router import make_bot, message


def _llm(stub: StubLLM) -> dict[str, str]:
    return {"base_url": stub.base_url, "api_key": "sk-test"}


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_refusal_says_when_a_token_is_back() -> None:
    clock = _Clock()
    budgets = Budgets(RateLimitConfig(user_per_minute=6, burst=1), clock=clock)
    assert budgets.check("g1", "u1", model=True) is None
    refused = budgets.check("g1", "u1", model=True)
    assert refused is not None
    assert refused.retry_after == pytest.approx(10.0)  # 6 a minute: one token every 10 s
    clock.now += 4
    again = budgets.check("g1", "u1", model=True)
    assert again is not None and again.retry_after == pytest.approx(6.0)
    clock.now += 6
    assert budgets.check("g1", "u1", model=True) is None


def test_commands_and_model_messages_do_not_share_a_budget() -> None:
    clock = _Clock()
    limits = RateLimitConfig(user_per_minute=1, burst=1, command_per_minute=1, command_burst=3)
    budgets = Budgets(limits, clock=clock)
    assert budgets.check("g1", "u1", model=True) is None
    assert budgets.check("g1", "u1", model=True) is not None
    for _ in range(3):
        assert budgets.check("g1", "u1", model=False) is None
    assert budgets.check("g1", "u1", model=False) is not None


def test_notice_wording() -> None:
    assert rate_limited(0.2).endswith("Try again in 1 second.")
    assert rate_limited(42.1).endswith("Try again in 43 seconds.")
    assert rate_limited(600).endswith("Try again in 10 minutes.")


async def test_every_limited_message_is_answered_and_commands_keep_working(
    tmp_path: Path, stub: StubLLM
) -> None:
    """No message is dropped without a word: each one over the model's budget is
    answered, once, with when to try again."""
    stub.fallback = s.text("hello!")
    limits = {"user_per_minute": 1, "chat_per_minute": 1, "burst": 1}
    async with make_bot(tmp_path, bot={"rate_limits": limits}, llm=_llm(stub)) as bot:
        replies = []
        for n in range(6):
            sender: dict[str, Any] = {"sender_id": f"u{n % 3}", "sender_name": f"U{n % 3}"}
            replies.append(await bot.handle(message(f"@groupmate hi {n}", n, **sender)))
        assert all(len(each) == 1 for each in replies)  # every one answered, once
        notices = [each[0].text for each in replies if "too many requests" in each[0].text]
        assert len(notices) == 4 and all("Try again in " in n for n in notices)
        # The model's budget is spent; what needs no model still answers, each one: the
        # commands, and reminders the grammar reads whole, sixteen in a row.
        for n in range(8):
            (reply,) = await bot.handle(message(f"/remind in {10 + n} minutes tea", 100 + n))
            assert "Reminder #" in reply.text, reply.text
            said = f"@groupmate remind me in {40 + n} minutes to stretch"
            (reply,) = await bot.handle(message(said, 200 + n))
            assert "Reminder #" in reply.text, reply.text


async def test_private_chat_always_answers(tmp_path: Path, stub: StubLLM) -> None:
    stub.fallback = s.text("hello!")
    limits = {"user_per_minute": 1, "burst": 1}
    async with make_bot(tmp_path, bot={"rate_limits": limits}, llm=_llm(stub)) as bot:
        replies = []
        for n in range(4):
            msg = message(f"hello {n}", n, chat="dm-u1", chat_type="private")
            replies += await bot.handle(msg)
    assert len(replies) == 4
    assert all("Try again in" in r.text for r in replies[1:])


async def test_the_operator_is_never_limited_and_is_admin(tmp_path: Path) -> None:
    limits = {"user_per_minute": 1, "chat_per_minute": 1, "burst": 1, "command_burst": 1}
    async with make_bot(tmp_path, bot={"rate_limits": limits}) as bot:
        for n in range(8):
            (reply,) = await bot.handle(message("@groupmate hi", n, from_operator=True))
            assert "too many requests" not in reply.text
        (tz,) = await bot.handle(message("/tz Asia/Tokyo", 50, from_operator=True))
        assert "Asia/Tokyo" in tz.text and "admin" not in tz.text.lower()
        (refused,) = await bot.handle(message("/tz Europe/Paris", 51))
        assert "admin" in refused.text.lower()
