"""The groupmate test kit's pytest fixtures; installing groupmate registers them (the
`pytest11` entry point `groupmate`; `-p no:groupmate` turns them off).

- `groupmate_bot`: a factory, `bot = await groupmate_bot(plugins=[...], config={...})`,
  that starts a `groupmate.testing.TestBot` and closes it when the test ends. Async: it
  needs pytest-asyncio (`asyncio_mode = "auto"`, or mark the tests `@pytest.mark.asyncio`).
- `groupmate_model`: the scripted model of this test's bots (reset for each test), to
  script replies before a bot starts. Bots of one test share it.
- `groupmate_model_server`: the model's server, one per test session.

Only this module is imported at startup: the bot itself when a test uses a fixture.
"""

from __future__ import annotations

import importlib.util
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

if TYPE_CHECKING:
    from groupmate.testing.bot import BotFactory, PluginSpec, TestBot
    from groupmate.testing.clock import FakeClock
    from groupmate.testing.model import ScriptedModel
    from groupmate.testing.stub_llm import StubLLM


@pytest.fixture(scope="session")
def groupmate_model_server() -> Iterator[StubLLM]:
    """The scripted Chat Completions server on 127.0.0.1, shared by the session."""
    from groupmate.testing.stub_llm import StubLLM

    server = StubLLM()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def groupmate_model(groupmate_model_server: StubLLM) -> Iterator[ScriptedModel]:
    """The scripted model of this test, with nothing scripted and nothing sent yet."""
    from groupmate.testing.model import ScriptedModel

    model = ScriptedModel(groupmate_model_server)
    yield model
    model.reset()


if importlib.util.find_spec("pytest_asyncio") is not None:
    import pytest_asyncio

    @pytest_asyncio.fixture
    async def groupmate_bot(
        groupmate_model: ScriptedModel, tmp_path: Path
    ) -> AsyncIterator[BotFactory]:
        """Start test bots: `bot = await groupmate_bot(plugins=[...], config={...})`."""
        from groupmate.testing.bot import TestBot

        started: list[TestBot] = []

        async def start(
            *,
            plugins: Sequence[PluginSpec] = (),
            config: Mapping[str, Any] | None = None,
            clock: FakeClock | None = None,
        ) -> TestBot:
            folder = tmp_path / ("groupmate" if not started else f"groupmate-{len(started) + 1}")
            bot = TestBot(
                plugins=plugins, config=config, tmp_path=folder, clock=clock, model=groupmate_model
            )
            await bot.__aenter__()
            started.append(bot)
            return bot

        yield start
        for bot in reversed(started):
            await bot.aclose()

else:

    @pytest.fixture(name="groupmate_bot")
    def _groupmate_bot_needs_pytest_asyncio() -> NoReturn:
        pytest.fail("the groupmate_bot fixture needs pytest-asyncio: pip install pytest-asyncio")
