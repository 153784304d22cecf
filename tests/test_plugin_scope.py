"""A plugin's config narrows its tools, never widens them: its `scope` meets each tool's
own (both∩group = group, private∩private = private, private∩group = nowhere, and the
config is warned of that tool by name), through a real bot, its commands and its one
tool set."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from groupmate.function_calls.internal_text import NOT_AVAILABLE
from groupmate.testing import TestBot
from tests.conftest import make_ctx

SCOPED = "tests.plugin_fixtures.scoped"
HIDDEN = NOT_AVAILABLE.english  # a tool this sender may not use here


async def said(bot: TestBot, text: str, **where: Any) -> str:
    return "\n".join(await bot.say(text, **where))


def tools_of(bot: TestBot) -> tuple[str, ...]:
    (status,) = [s for s in bot.plugins if s.name == "scoped"]
    return status.tools


async def test_a_group_scope_never_makes_a_private_tool_a_group_tool(
    groupmate_bot: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="groupmate.function_calls.plugins.loader")
    bot = await groupmate_bot(plugins=[{"module": SCOPED, "scope": "group"}])
    # private ∩ group: no chat is both, so the diary is offered nowhere: not even as a
    # command (the words go to the model, which the test has not scripted).
    asked = len(bot.model.requests)
    assert "diary written" not in await said(bot, "/diary")
    assert "diary written" not in await said(bot, "/diary", private=True)
    assert len(bot.model.requests) == asked + 2
    assert "diary" not in bot.app.registry
    assert tools_of(bot) == ("poll", "wave")
    (warning,) = [r.getMessage() for r in caplog.records if "nowhere" in r.getMessage()]
    assert "plugins[0].scope" in warning and "diary" in warning and "private" in warning
    # both ∩ group = group; group ∩ group = group.
    assert await said(bot, "/poll") == "poll started"
    assert await said(bot, "/poll", private=True) == HIDDEN
    assert await said(bot, "/wave") == "waved"
    assert [bot.app.registry.get(name).scope for name in ("poll", "wave")] == ["group"] * 2


async def test_a_private_scope_keeps_a_private_tool_private(groupmate_bot: Any) -> None:
    bot = await groupmate_bot(plugins=[{"module": SCOPED, "scope": "private"}])
    assert tools_of(bot) == ("diary", "poll")  # the group-only wave is offered nowhere
    assert await said(bot, "/diary", private=True) == "diary written"
    assert await said(bot, "/diary") == HIDDEN
    assert await said(bot, "/poll", private=True) == "poll started"
    assert await said(bot, "/poll") == HIDDEN
    # In a group chat both are held but hidden, as the invoker refuses them: by scope.
    listing = bot.app.registry.listing(make_ctx(chat_type="group"))
    assert (listing.reason("diary"), listing.reason("poll")) == ("scope", "scope")


async def test_without_a_scope_each_tool_keeps_its_own(groupmate_bot: Any) -> None:
    bot = await groupmate_bot(plugins=[SCOPED])
    assert tools_of(bot) == ("diary", "poll", "wave")
    assert await said(bot, "/diary", private=True) == "diary written"
    assert await said(bot, "/wave") == "waved"
    assert await said(bot, "/wave", private=True) == HIDDEN


async def test_a_scope_that_leaves_no_tool_fails_the_plugin(tmp_path: Any) -> None:
    spec = {"module": SCOPED, "scope": "group", "tools": ["diary"]}
    async with TestBot(plugins=[spec], tmp_path=tmp_path) as bot:
        (status,) = [s for s in bot.plugins if s.module == SCOPED]
        assert status.state == "failed"
        assert status.error == "plugins[0].scope leaves none of the plugin's tools"
