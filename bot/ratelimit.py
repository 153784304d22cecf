"""Token buckets per user and per chat.

Every message draws on a generous per-user budget no normal use trips; a message about
to reach the model draws on the model's budgets too (per chat and per user): a burst of
`/remind` commands must not cost the group its next question to the model, and the
model's budget must not make `/list` go quiet. A limited message is answered, saying
when to try again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from groupmate.bot.config import RateLimitConfig


@dataclass(slots=True)
class _Bucket:
    tokens: float
    updated: float


class RateLimiter:
    """`rate_per_minute` sustained, `burst` at once, per key."""

    def __init__(
        self,
        rate_per_minute: float,
        burst: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = 100_000,
    ) -> None:
        self._rate = rate_per_minute / 60
        self._burst = float(burst)
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: dict[str, _Bucket] = {}

    def _bucket(self, key: str) -> _Bucket:
        now = self._clock()
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self._max_keys:
                self._forget_full(now)
                if len(self._buckets) >= self._max_keys:
                    self._buckets.clear()  # under a flood of new keys, forget rather than scan
            bucket = self._buckets[key] = _Bucket(self._burst, now)
        else:
            bucket.tokens = min(self._burst, bucket.tokens + (now - bucket.updated) * self._rate)
            bucket.updated = now
        return bucket

    def _forget_full(self, now: float) -> None:
        # Keys whose buckets have refilled carry no state worth keeping.
        for key, bucket in list(self._buckets.items()):
            if bucket.tokens + (now - bucket.updated) * self._rate >= self._burst:
                del self._buckets[key]

    def available(self, key: str) -> bool:
        """Whether `key` has a token, without taking it."""
        return self._bucket(key).tokens >= 1

    def take(self, key: str) -> None:
        self._bucket(key).tokens -= 1

    def retry_after(self, key: str) -> float:
        bucket = self._bucket(key)
        return max(0.0, (1 - bucket.tokens) / self._rate)


@dataclass(frozen=True, slots=True)
class Refusal:
    """A message over its budget: when the sender may try again."""

    retry_after: float  # seconds


class Budgets:
    """The per-chat and per-user limits for model messages, and a generous per-user one
    for commands that need no model."""

    def __init__(
        self, limits: RateLimitConfig, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._per_chat = RateLimiter(limits.chat_per_minute, limits.burst * 2, clock=clock)
        self._per_user = RateLimiter(limits.user_per_minute, limits.burst, clock=clock)
        self._commands = RateLimiter(limits.command_per_minute, limits.command_burst, clock=clock)

    def check(self, chat: str, user: str, *, model: bool) -> Refusal | None:
        """None when allowed (the tokens are taken); else the refusal. `model`: the
        model's budgets, for a message about to reach it; else the one for any message."""
        key = f"{chat}:{user}"
        if model:
            limiters = [(self._per_chat, chat), (self._per_user, key)]
        else:
            limiters = [(self._commands, key)]
        for limiter, name in limiters:
            if not limiter.available(name):
                return Refusal(limiter.retry_after(name))
        # Take tokens only when every limit allows: a refused message costs nobody.
        for limiter, name in limiters:
            limiter.take(name)
        return None
