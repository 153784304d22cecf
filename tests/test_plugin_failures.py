"""A plugin that is misconfigured or clashes is never silent: a settings key its model
does not declare is refused with the setting it was likely meant to be (even where the
model lets extra keys in), `check` exits non-zero for a command whose name is taken
(serve keeps answering it with the first holder), and a command of a plugin that failed
to load says so in one line, in the user's language, through the real router."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field

from groupmate.function_calls.settings_keys import undeclared_keys
from groupmate.testing import BotFactory, TestBot

POLL = "tests.plugin_fixtures.poll"
CLASH = "tests.plugin_fixtures.command_clash"
ROOT = Path(__file__).resolve().parent.parent
UNAVAILABLE = (
    "/vote is unavailable right now: the poll plugin failed to load. "
    "An admin can see why in the dashboard (or `groupmate check`)."
)


def status(bot: TestBot, name: str) -> Any:
    return next(s for s in bot.plugins if s.name == name)


@pytest.mark.parametrize(
    ("settings", "reason"),
    [
        (
            {"max_option": 4},
            "plugins[0].settings.max_option: no such setting; did you mean max_options?",
        ),
        (
            {"labels": {"yse": "sure"}},
            "plugins[0].settings.labels.yse: no such setting; did you mean yes?",
        ),
        (
            {"colour": "red"},
            "plugins[0].settings.colour: no such setting (here: max_options, labels, aliases)",
        ),
    ],
)
async def test_a_setting_the_plugin_does_not_declare_is_refused(
    groupmate_bot: BotFactory, settings: dict[str, Any], reason: str
) -> None:
    """PollSettings has `extra="allow"`: pydantic alone would load these quietly."""
    bot = await groupmate_bot(plugins=[{"module": POLL, "settings": settings}])
    poll = status(bot, "poll")
    assert (poll.state, poll.error) == ("failed", reason)
    assert poll.commands == ("vote",)  # known, though it failed


async def test_declared_settings_and_free_form_mappings_load(groupmate_bot: BotFactory) -> None:
    settings = {"max_options": 4, "labels": {"yes": "sure"}, "aliases": {"pizza": "🍕"}}
    bot = await groupmate_bot(plugins=[{"module": POLL, "settings": settings}])
    assert status(bot, "poll").state == "loaded"
    assert await bot.say("/vote pizza") == ["pizza: 1"]
    assert await bot.say("/vote pizza") == ["pizza: 2"]


async def test_a_failed_plugins_command_says_it_is_unavailable(
    groupmate_bot: BotFactory,
) -> None:
    bot = await groupmate_bot(
        plugins=[
            {"module": POLL, "settings": {"max_option": 4}},
            "tests.plugin_fixtures.bad_service",  # loaded, then its service did not start
            "tests.plugin_fixtures.broken_import",  # its commands are unknown
        ]
    )
    assert await bot.say("/vote pizza") == [UNAVAILABLE]
    assert await bot.say("/vote 披萨") == [
        "/vote 暂时不可用：poll 插件没有加载成功。"
        "管理员可以在控制面板（或用 `groupmate check`）查看原因。"
    ]
    assert await bot.say("/needsclient") == [
        "/needsclient is unavailable right now: the badservice plugin failed to load. "
        "An admin can see why in the dashboard (or `groupmate check`)."
    ]
    assert bot.model.requests == []  # answered by the bot, not the model
    (help_text,) = await bot.say("/help")
    assert "/vote" not in help_text  # /help lists what works
    # A command no loaded or failed plugin declared is words, as before: the model's.
    bot.model.answers("I don't know that command.")
    assert await bot.say("/frobnicate") == ["I don't know that command."]
    assert len(bot.model.requests) == 1


async def test_a_taken_command_name_keeps_its_first_holder(groupmate_bot: BotFactory) -> None:
    """Serve's behaviour, which `check` reports: the built-in, then the earlier plugin."""
    bot = await groupmate_bot(plugins=[POLL, CLASH])
    assert status(bot, "ballot").state == "loaded"
    assert await bot.say("/vote tea") == ["tea: 1"]  # the poll plugin's
    assert await bot.say("/ballots") == ["no ballots yet"]  # its own name works
    assert "the plugin's summary" not in await bot.say("/summary")


def _check(tmp_path: Path, plugins: list[Any]) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "config.yaml"
    data = {"storage": {"url": f"sqlite:///{tmp_path / 'bot.db'}"}, "plugins": plugins}
    config.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "groupmate.bot.cli", "--config", str(config), "check"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


def test_check_refuses_an_undeclared_setting_and_a_taken_command(tmp_path: Path) -> None:
    done = _check(tmp_path, [{"module": POLL, "settings": {"max_option": 4}}])
    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        "groupmate: plugin poll does not load: plugins[0].settings.max_option: no such "
        "setting; did you mean max_options?"
    ) in done.stderr
    clashing = _check(tmp_path, [POLL, CLASH])
    assert clashing.returncode == 1, clashing.stdout + clashing.stderr
    assert "plugin ballot (tests.plugin_fixtures.command_clash): loaded" in clashing.stdout
    lines = [line for line in clashing.stderr.splitlines() if "is taken by" in line]
    assert lines == [
        "groupmate: plugin ballot: command /summary is taken by the built-in command "
        "/summary; the bot answers /summary with that one, not this plugin's. Rename the "
        "plugin's command (@tool_function(command=...))",
        "groupmate: plugin ballot: command /vote is taken by plugin poll's /vote; the bot "
        "answers /vote with that one, not this plugin's. Rename the plugin's command "
        "(@tool_function(command=...))",
    ]
    assert "Traceback" not in clashing.stderr
    fine = _check(tmp_path, [POLL])
    assert fine.returncode == 0, fine.stdout + fine.stderr


def test_undeclared_keys_at_any_depth_aliases_and_free_form_mappings() -> None:
    class Option(BaseModel):
        model_config = ConfigDict(extra="allow")
        label: str = ""

    class Settings(BaseModel):
        model_config = ConfigDict(extra="allow", populate_by_name=True)
        max_options: int = Field(3, alias="maxOptions")
        options: list[Option] = []
        default: Option | None = None
        aliases: dict[str, Option] | None = None

    data = {
        "maxOptions": 4,
        "max_options": 4,
        "options": [{"label": "a"}, {"lable": "b"}],
        "default": {"colour": "red"},
        "aliases": {"anything": {"whatever": 1}},
        "extra": True,
    }
    assert undeclared_keys(Settings, data) == [
        ("options", 1, "lable"),
        ("default", "colour"),
        ("extra",),
    ]
