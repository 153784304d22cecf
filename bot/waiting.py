"""Reminders that wait for a process to deliver them, in the operator's words.

A process claims only the chats it delivers to (`storage.reach`). A reminder of a
platform that no running process serves is therefore not failed but left due; this is
how /healthz, `/v1/status` and the dashboard say so, and what to start.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from groupmate.bot.adapters import platform_of
from groupmate.storage import WaitingChat

# What serves each platform's chats, as the operator would start it.
_SERVED_BY = {
    "console": "the terminal chat (`groupmate chat`, `make chat`)",
    "web": "the web playground (`groupmate serve`, `make run`)",
    "webhook": "a process with adapters.webhook.outbound_url set",
}
_NAMES = {
    "console": "terminal",
    "web": "playground",
    "onebot": "OneBot (QQ)",
    "dingtalk": "DingTalk",
    "webhook": "webhook",
}


@dataclass(frozen=True, slots=True)
class WaitingPlatform:
    """One platform's waiting reminders: how many, in which chats, due since when."""

    platform: str  # a key of CHAT_PREFIXES, or "webhook"
    chats: tuple[str, ...]
    reminders: int
    due_since: datetime

    @property
    def advice(self) -> str:
        """The sentence the dashboard shows: what waits, and what delivers it."""
        name = _NAMES.get(self.platform, self.platform.capitalize())
        served = _SERVED_BY.get(self.platform, f"a process with adapters.{self.platform} set")
        count = f"{self.reminders} reminder{'s' if self.reminders != 1 else ''}"
        return (
            f"{count} in {name} chats {'are' if self.reminders != 1 else 'is'} waiting: "
            f"no running groupmate process delivers there. Start {served} on this "
            f"database to send them; any past its grace window is recorded as missed."
        )


def by_platform(chats: list[WaitingChat]) -> list[WaitingPlatform]:
    """The waiting chats grouped by platform, the longest-waiting first."""
    grouped: dict[str, list[WaitingChat]] = {}
    for chat in chats:
        grouped.setdefault(platform_of(chat.chat_id), []).append(chat)
    found = [
        WaitingPlatform(
            platform=platform,
            chats=tuple(chat.chat_id for chat in waiting),
            reminders=sum(chat.reminders for chat in waiting),
            due_since=min(chat.due_since for chat in waiting),
        )
        for platform, waiting in grouped.items()
    ]
    return sorted(found, key=lambda platform: platform.due_since)
