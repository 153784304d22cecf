"""Rate limits: model messages and free commands draw on separate budgets, the notice
says when to try again, a private chat always hears it, and the operator is never limited."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.answering import rate_limited
from bot.config import RateLimitConfig
from bot.ratelimit import Budgets
from tests.test_router import make_bot, message


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_refusal_says_when_a_token_is_back() -> None:
    clock = _Clock()
    budgets = Budgets(RateLimitConfig(user_per_minute=6, burst=1), clock=clock)
    assert budgets.check("g1", "u1", command=False, private=False) is None
    refused = budgets.check("g1", "u1", command=False, private=False)
    assert refused is not None and refused.notify
    assert refused.retry_after == pytest.approx(10.0)  # 6 a minute: one token every 10 s
    clock.now += 4
    again = budgets.check("g1", "u1", command=False, private=False)
    assert again is not None and not again.notify and again.retry_after == pytest.approx(6.0)
    clock.now += 6
    assert budgets.check("g1", "u1", command=False, private=False) is None


def test_commands_and_model_messages_do_not_share_a_budget() -> None:
    clock = _Clock()
    limits = RateLimitConfig(user_per_minute=1, burst=1, command_per_minute=1, command_burst=3)
    budgets = Budgets(limits, clock=clock)
    assert budgets.check("g1", "u1", command=False, private=False) is None
    assert budgets.check("g1", "u1", command=False, private=False) is not None
    for _ in range(3):
        assert budgets.check("g1", "u1", command=True, private=False) is None
    assert budgets.check("g1", "u1", command=True, private=False) is not None


def test_a_private_chat_hears_every_refusal() -> None:
    budgets = Budgets(RateLimitConfig(user_per_minute=1, burst=1), clock=_Clock())
    budgets.check("dm", "u1", command=False, private=True)
    notices = [budgets.check("dm", "u1", command=False, private=True) for _ in range(3)]
    assert all(n is not None and n.notify for n in notices)


def test_notice_wording() -> None:
    assert rate_limited(0.2).endswith("Try again in 1 second.")
    assert rate_limited(42.1).endswith("Try again in 43 seconds.")
    assert rate_limited(600).endswith("Try again in 10 minutes.")


async def test_group_gets_one_notice_and_commands_keep_working(tmp_path: Path) -> None:
    limits = {"user_per_minute": 1, "chat_per_minute": 1, "burst": 1}
    async with make_bot(tmp_path, bot={"rate_limits": limits}) as bot:
        texts: list[str] = []
        for n in range(6):
            sender: dict[str, Any] = {"sender_id": f"u{n % 3}", "sender_name": f"U{n % 3}"}
            texts += [r.text for r in await bot.handle(message(f"@groupmate hi {n}", n, **sender))]
        notices = [t for t in texts if "too many requests" in t]
        assert len(notices) == 1 and "Try again in " in notices[0]
        assert len(texts) == 3  # a burst of 2 for the chat, then one notice, then quiet
        # The model's budget is spent; commands that need no model still answer, each one.
        for n in range(10):
            (reply,) = await bot.handle(message(f"/remind in {10 + n} minutes tea", 100 + n))
            assert "Reminder #" in reply.text, reply.text


async def test_private_chat_always_answers(tmp_path: Path) -> None:
    limits = {"user_per_minute": 1, "burst": 1}
    async with make_bot(tmp_path, bot={"rate_limits": limits}) as bot:
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
