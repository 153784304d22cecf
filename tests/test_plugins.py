"""Plugins: loaded by module name with typed settings, services and a store; through the
same invoker as every tool; one that breaks leaves the bot serving and says why."""

from __future__ import annotations

import importlib
import logging
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from groupmate.function_calls import ToolRegistry
from groupmate.function_calls.handlers import builtin_tools
from groupmate.function_calls.registry import tool_options
from groupmate.storage.audit import AuditQuery
from groupmate.testing import TestBot
from tests.docs_pages import page
from tests.http_harness import Servers
from tests.plugin_fixtures.dice import LoadedDie

DICE = "tests.plugin_fixtures.dice"
ROOT = Path(__file__).resolve().parent.parent


def statuses(bot: TestBot) -> dict[str, Any]:
    return {s.name: s for s in bot.plugins if not s.builtin}


async def test_importing_a_plugin_registers_nothing(groupmate_bot: Any) -> None:
    module = importlib.import_module("tests.plugin_fixtures.plain")
    assert tool_options(module.split_bill) is not None  # marked, and nowhere registered:
    bot = await groupmate_bot()
    assert "split_bill" not in bot.app.registry  # a bot that does not name the plugin
    assert "split_bill" not in builtin_tools()
    assert ToolRegistry([module.split_bill]).names() == ["split_bill"]  # built when taken
    enabled = await groupmate_bot(plugins=["tests.plugin_fixtures.plain"])
    assert "split_bill" in enabled.app.registry


async def test_a_plugin_answers_by_command_and_through_the_model(groupmate_bot: Any) -> None:
    bot = await groupmate_bot(plugins=[{"module": DICE, "settings": {"sides": 20}}])
    assert statuses(bot)["dice"].state == "loaded"
    assert statuses(bot)["dice"].tools == ("roll_dice", "last_roll", "roll_secret")
    # The slash command: no model.
    assert await bot.say("/roll count=2") == ["🎲 2d20: 40 (roll #1)"]
    assert bot.model.requests == []
    # The model picks the tool; the handler's typed settings, service and store.
    bot.model.calls("roll_dice", {"count": 3})
    assert await bot.say("roll three dice please", sender="bob") == ["🎲 3d20: 60 (roll #2)"]
    assert await bot.say("/lastroll") == ["Bob rolled 60 on d20."]
    assert await bot.store("dice", chat="group-1").get("last") == {"by": "Bob", "total": 60}
    assert await bot.store("dice").get("rolls") == 2  # global: every chat's rolls
    assert await bot.say("/lastroll", chat="group-2") == ["No one rolled here yet."]
    # The gate of every tool: audited as any write.
    assert bot.app.audit is not None
    rows = await bot.app.audit.page(AuditQuery(chat_id="group-1", tool="roll_dice"))
    assert [(r.source, r.outcome) for r in rows] == [("model", "ok"), ("command", "ok")]


async def test_the_configs_options_narrow_a_plugins_tools(groupmate_bot: Any) -> None:
    spec = {"module": DICE, "scope": "group", "admin_only": True, "tools": {"deny": ["roll_*t"]}}
    bot = await groupmate_bot(plugins=[spec])
    assert statuses(bot)["dice"].tools == ("roll_dice", "last_roll")
    assert "roll_secret" not in bot.app.registry
    tool = bot.app.registry.get("roll_dice")
    assert (tool.scope, tool.admin_only) == ("group", True)
    replies = await bot.say("/roll")
    assert "roll" not in replies[0].casefold() or "isn't available" in replies[0]
    assert "🎲" not in replies[0]
    assert (await bot.say("/roll", admin=True))[0].startswith("🎲 1d6")


async def test_a_services_lifecycle_follows_the_bot(tmp_path: Path) -> None:
    opened, closed = LoadedDie.opened, LoadedDie.closed
    async with TestBot(plugins=[DICE], tmp_path=tmp_path) as bot:
        assert (LoadedDie.opened, LoadedDie.closed) == (opened + 1, closed)
        assert await bot.say("/roll") == ["🎲 1d6: 6 (roll #1)"]
    assert LoadedDie.closed == closed + 1


@pytest.mark.parametrize(
    ("spec", "name", "reason"),
    [
        (
            {"module": DICE, "settings": {"sides": 1}},
            "dice",
            "plugins[0].settings.sides: Input should be greater than 1",
        ),
        (
            {"module": DICE, "settings": {"side": 20}},
            "dice",
            "plugins[0].settings.side: no such setting; did you mean sides?",
        ),
        (
            "tests.plugin_fixtures.broken_import",
            "tests.plugin_fixtures.broken_import",
            "cannot import tests.plugin_fixtures.broken_import: ModuleNotFoundError: "
            "No module named 'groupmate_no_such_dependency'",
        ),
        ("tests.plugin_fixtures.clash", "clash", "tool name 'help' is taken by a built-in tool"),
        ("groupmate_no_such_plugin", "groupmate_no_such_plugin", "cannot import"),
        (
            "tests.plugin_fixtures.bad_service",
            "badservice",
            "a service did not start: ConnectionError (the log at DEBUG level has the details)",
        ),
        (
            "tests.plugin_fixtures.shadow",
            "shadow",
            "ChatLog is already provided (by the bot",
        ),
        (
            "tests.plugin_fixtures.named_summary",
            "summary",
            "another plugin is named 'summary'",
        ),
        (
            "tests.plugin_fixtures.peek",
            "peek",
            "parameter 'stores' (PluginStores): nothing provides it",
        ),
        (
            "tests.plugin_fixtures.needy",
            "needy",
            "parameter 'thing' (Unprovided): nothing provides it",
        ),
        (
            {"module": "tests.plugin_fixtures.raising", "settings": {"x": 1}},
            "raising",
            "plugins[0].settings: this plugin takes no settings",
        ),
    ],
)
async def test_a_broken_plugin_leaves_the_bot_serving(
    groupmate_bot: Any, caplog: pytest.LogCaptureFixture, spec: Any, name: str, reason: str
) -> None:
    caplog.set_level(logging.ERROR)
    bot = await groupmate_bot(plugins=[spec, "tests.plugin_fixtures.plain"])
    found = statuses(bot)
    assert found[name].state == "failed"
    assert reason in (found[name].error or "")
    assert found["plain"].state == "loaded"  # the other plugin is unharmed
    assert await bot.say("/help")  # and the bot serves
    bot.model.calls("split_bill", {"total": 90, "people": 4})
    assert await bot.say("split 90 between 4") == ["Alice, that's 22.50 each."]
    logged = [r.getMessage() for r in caplog.records if "is not loaded" in r.getMessage()]
    assert len(logged) == 1 and reason in logged[0]  # once
    assert "SECRET123" not in str(found[name]) + " ".join(r.getMessage() for r in caplog.records)
    if name == "summary":  # the built-in family of that name is unharmed
        assert {s.name: s.state for s in bot.plugins if s.builtin}["summary"] == "loaded"
        assert "summary" in bot.app.registry


async def test_plugins_with_a_service_of_one_type_each_get_their_own(
    groupmate_bot: Any,
) -> None:
    twins = [
        {"module": "tests.plugin_fixtures.twin_a", "settings": {"words": "hello from a"}},
        {"module": "tests.plugin_fixtures.twin_b", "settings": {"words": "hello from b"}},
        {"module": DICE, "disabled": True},
    ]
    bot = await groupmate_bot(plugins=twins)
    assert {n: s.state for n, s in statuses(bot).items()} == {
        "twin_a": "loaded",
        "twin_b": "loaded",
        DICE: "disabled",
    }
    assert await bot.say("/hia") == ["hello from a"]
    assert await bot.say("/hib") == ["hello from b"]
    assert "roll_dice" not in bot.app.registry


async def test_a_plugin_handler_that_raises_gets_a_short_answer(
    groupmate_bot: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    bot = await groupmate_bot(plugins=["tests.plugin_fixtures.raising"])
    assert await bot.say("/breakit") == ["Sorry, that failed on my side; please try again."]
    assert any("10.0.0.7" in (r.exc_text or r.getMessage()) for r in caplog.records)
    assert await bot.say("/help")  # still serving


async def test_builtin_families_can_be_switched_off(groupmate_bot: Any) -> None:
    bot = await groupmate_bot(config={"builtins": {"search": False, "reminders": False}})
    names = bot.app.registry.names()
    assert "web_search" not in names and "reminder_set" not in names
    assert {"help", "chat_tools", "summary", "read_url", "set_timezone"} <= set(names)
    built = {s.name: s.state for s in bot.plugins if s.builtin}
    assert "search" not in built and built["links"] == "loaded"
    # Their commands say so, in words without a tool's name; /help leaves them out; the
    # grammar's fast path and the offers step aside for the model.
    for command in ("/remind in 5 minutes stretch", "/reminders", "/snooze 10", "/search x"):
        assert await bot.say(command) == ["That isn't available on this bot."]
    (help_text,) = await bot.say("/help")
    assert "/remind" not in help_text and "/search" not in help_text
    assert "/summary [N]" in help_text and "/tz <zone>" in help_text
    bot.model.answers("I can't set reminders here.")
    assert await bot.say("remind me in 5 minutes to stretch") == ["I can't set reminders here."]
    assert "reminder_set" not in bot.model.offered_tools()


async def test_a_plugin_survives_a_restart_with_its_data(tmp_path: Path) -> None:
    async with TestBot(plugins=[DICE], tmp_path=tmp_path) as bot:
        assert await bot.say("/roll") == ["🎲 1d6: 6 (roll #1)"]
    async with TestBot(plugins=[DICE], tmp_path=tmp_path) as bot:
        assert await bot.say("/lastroll") == ["Alice rolled 6 on d6."]
        assert await bot.say("/roll") == ["🎲 1d6: 6 (roll #2)"]


async def test_deleting_a_chats_data_deletes_its_plugin_values(servers: Servers) -> None:
    api = await servers.start(plugins=[DICE])
    for chat in ("api:a", "api:b"):
        assert (await api.say("/roll", chat_id=chat))[0]["text"].startswith("🎲")
    bot = api.bot
    assert await bot.plugin_store("dice", "api:a").get("last") is not None
    deleted = await api.client.delete("/v1/chats/api:a")
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["plugin_values"] == 1
    assert await bot.plugin_store("dice", "api:a").get("last") is None
    assert await bot.plugin_store("dice", "api:b").get("last") is not None  # not b's
    assert await bot.plugin_store("dice", None).get("rolls") == 2  # nor the global
    assert (await api.say("/lastroll", chat_id="api:a"))[0]["text"] == "No one rolled here yet."
    status = (await api.client.get("/v1/status")).json()
    dice = next(p for p in status["plugins"] if p["name"] == "dice")
    assert dice["state"] == "loaded" and dice["tools"][0] == "roll_dice"
    rows = await bot.audit.page(AuditQuery(tool="chat_data_delete"))  # type: ignore[union-attr]
    assert [(r.chat_id, r.source, r.outcome) for r in rows] == [("api:a", "rest", "ok")]


async def test_status_and_healthz_say_why_a_plugin_failed(servers: Servers) -> None:
    secret = "s3cret-dice-token"
    bad = {"module": DICE, "settings": {"sides": 0, "token": secret}}
    api = await servers.start(plugins=[bad, "tests.plugin_fixtures.plain"])
    health = (await api.client.get("/healthz")).json()
    status = await api.client.get("/v1/status")
    assert health["status"] == "ok"
    assert health["plugins"]["plain"] == "loaded"
    assert health["plugins"]["dice"] == "failed"  # why is for the operator: /v1/status
    dice = next(p for p in status.json()["plugins"] if p["name"] == "dice")
    assert dice["state"] == "failed" and "greater than 1" in dice["error"]
    assert secret not in status.text + str(health)


def test_check_exits_non_zero_naming_the_broken_plugin(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        f"storage: {{url: 'sqlite:///{tmp_path / 'bot.db'}'}}\n"
        "plugins:\n"
        f"  - module: {DICE}\n    settings: {{sides: 1, token: '${{DICE_TOKEN}}'}}\n"
        "  - tests.plugin_fixtures.plain\n",
        encoding="utf-8",
    )
    env = {"DICE_TOKEN": "s3cret-dice-token", "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-m", "groupmate.bot.cli", "--config", str(config), "check"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "plugin dice does not load: plugins[0].settings.sides: Input should be greater" in (
        done.stderr
    )
    assert "plugin plain (tests.plugin_fixtures.plain): loaded, tools split_bill" in done.stdout
    assert "s3cret-dice-token" not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    listed = subprocess.run(
        [sys.executable, "-m", "groupmate.bot.cli", "--config", str(config), "plugins"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    assert listed.returncode == 1
    assert "plugin dice (tests.plugin_fixtures.dice): failed" in listed.stdout


async def test_the_readmes_plugin_example_loads_as_written(
    groupmate_bot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    section = page("developers/plugins.md")
    [example] = [b for b in re.findall(r"```python\n(.*?)```", section, re.S) if "@plugin" in b]
    (tmp_path / "readme_weather.py").write_text(example)
    monkeypatch.syspath_prepend(str(tmp_path))
    settings = {"base_url": "http://127.0.0.1:9", "api_key": "k3y-from-env"}
    bot = await groupmate_bot(plugins=[{"module": "readme_weather", "settings": settings}])
    weather = statuses(bot)["weather"]
    assert (weather.state, weather.tools) == ("loaded", ("weather",))
    tool = bot.app.registry.get("weather")
    assert [d.kind.__name__ for d in tool.deps] == ["AsyncClient", "PluginStore"]
    assert "k3y-from-env" not in str(bot.plugins)
