"""The adapter contract: outgoing messages reach the adapter that owns the chat, adapters
start with the bot and stop before it, /healthz shows their status, long texts split."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from starlette.routing import BaseRoute

from groupmate.bot.adapters.base import Adapter, BotHost, split_text
from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.bot.messages import IncomingMessage
from groupmate.function_calls.services import MemberDirectory
from groupmate.storage import Member, OutgoingMessage
from tests.http_harness import Servers


class Recorder:
    """A platform in memory: what the bot sent it, and its lifecycle."""

    name = "memory"
    chat_prefix = "mem:"

    def __init__(self) -> None:
        self.sent: list[OutgoingMessage] = []
        self.events: list[str] = []
        self.bot: BotHost | None = None

    async def start(self, bot: BotHost) -> None:
        self.events.append("start")
        self.bot = bot

    async def stop(self) -> None:
        self.events.append("stop")

    async def send(self, message: OutgoingMessage) -> str | None:
        self.sent.append(message)
        return f"mem-{len(self.sent)}"

    def status(self) -> dict[str, Any]:
        return {"connected": True, "sent": len(self.sent)}

    def routes(self) -> Sequence[BaseRoute]:
        return ()

    async def find(self, chat_id: str, name: str) -> Member | None:
        return Member("mem:u-bob", "bob") if name == "bob" else None


def test_the_recorder_keeps_the_contract() -> None:
    assert isinstance(Recorder(), Adapter) and isinstance(Recorder(), MemberDirectory)


async def test_outgoing_goes_to_the_owning_adapter_and_members_come_from_it(
    tmp_path: Path,
) -> None:
    config = parse_config({"storage": {"url": f"sqlite:///{tmp_path / 'b.db'}"}}, environ={})
    recorder = Recorder()
    bot = Bot(config)
    bot.add_adapter(recorder)
    async with bot:
        assert recorder.events == ["start"] and recorder.bot is bot
        assert await bot.outbound(OutgoingMessage("mem:g1", "hi")) == "mem-1"
        message = IncomingMessage(
            chat_id="mem:g1",
            chat_type="group",
            sender_id="mem:u-ann",
            sender_name="Ann",
            text="/remind @bob tomorrow at 9 send the slides",
        )
        (reply,) = await bot.handle(message)
        assert "Reminder #1 for @bob (mentioning you too) set for" in reply.text
        with pytest.raises(RuntimeError):
            bot.add_adapter(Recorder())
    assert recorder.events == ["start", "stop"]


async def test_healthz_shows_each_adapter(servers: Servers) -> None:
    api = await servers.start()
    health = (await api.client.get("/healthz")).json()
    assert health == {
        "status": "ok",
        "database": "ok",
        "llm": "off",
        "adapters": {},
        "plugins": {},
        "reminders_waiting": {},
    }


def test_each_present_section_builds_its_adapter() -> None:
    from groupmate.bot.adapters import configured

    sections = {
        "telegram": {"token": "123:abc"},
        "matrix": {"homeserver": "http://127.0.0.1:1", "user_id": "@bot:local", "password": "p"},
        "onebot": {"access_token": "t"},
        "slack": {"bot_token": "xoxb-1", "signing_secret": "s"},
        "discord": {"token": "d"},
        "lark": {"app_id": "cli_1", "app_secret": "s", "verification_token": "v"},
        "dingtalk": {"client_id": "ding1", "client_secret": "s"},
    }
    config = parse_config({"adapters": sections}, environ={})
    adapters = configured(config)
    assert [(a.name, a.chat_prefix) for a in adapters] == [
        ("telegram", "tg:"),
        ("matrix", "mx:"),
        ("onebot", "qq:"),
        ("slack", "sl:"),
        ("discord", "dc:"),
        ("lark", "lk:"),
        ("dingtalk", "dt:"),
    ]
    assert all(isinstance(a, Adapter) for a in adapters)
    assert configured(parse_config({}, environ={})) == []


@pytest.mark.parametrize(
    ("text", "limit", "pieces"),
    [
        ("short", 10, ["short"]),
        ("", 10, [""]),
        ("aaaa\n\nbbbb", 6, ["aaaa", "bbbb"]),
        ("aaaa bbbb\ncccc", 10, ["aaaa bbbb", "cccc"]),
        ("aaaa bbbb cccc", 10, ["aaaa bbbb", "cccc"]),
        ("a" * 25, 10, ["a" * 10, "a" * 10, "a" * 5]),
    ],
)
def test_split_text(text: str, limit: int, pieces: list[str]) -> None:
    assert split_text(text, limit) == pieces
    assert all(len(piece) <= limit for piece in split_text(text, limit))


def test_a_5000_character_reply_splits_in_two_at_a_paragraph() -> None:
    first = ("word " * 700).strip()
    second = ("more " * 300).strip()
    parts = split_text(f"{first}\n\n{second}", 4096)
    assert parts == [first, second]
