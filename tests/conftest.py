from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import ExitStack
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from groupmate.function_calls import Deps, FunctionCallLLM, MessageContext, ToolRegistry
from groupmate.function_calls.handlers.reminder_words import reminder_message
from groupmate.storage import (
    Database,
    DeliveryPolicy,
    OutgoingMessage,
    ReminderReader,
    ReminderService,
    SendError,
    upgrade,
)
from groupmate.testing.clock import DEFAULT_START
from groupmate.testing.clock import FakeClock as FakeClock  # tests import it from here
from groupmate.testing.stub_llm import StubLLM
from tests.http_harness import Servers
from tests.postgres import ENV_URL, create_database, drop_database, postgres_server
from tests.receiver import Receiver

ROOT = Path(__file__).resolve().parent.parent
FIXED_NOW = DEFAULT_START  # what a FakeClock (the kit's) shows until moved


# The browser tests' `page` fixture.
pytest_plugins = ["tests.browser", "tests.search_servers"]

_SHARED_POSTGRES = pytest.StashKey[ExitStack]()
# Groups of tests (by node id prefix) that each run on one xdist worker. The Synapse
# tests use the session's homeserver (test_matrix.py's `synapse`; one of them restarts
# it): one worker starts one. The probe lets test_parallel.py see that this holds.
ONE_WORKER: dict[str, tuple[str, ...]] = {
    "synapse": (
        "tests/test_matrix.py::",
        "tests/test_matrix_presses.py::",
        "tests/test_matrix_remind_mentions.py::",
    ),
    "probe": ("tests/parallel_probe.py::test_on_one_worker",),
}


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist (`-n`), the controller starts one PostgreSQL server for all the
    workers, which find it through GROUPMATE_TEST_POSTGRES_URL (inherited as they start):
    one initdb instead of one a worker. Each worker still makes its own template, and each
    test its own database, so they share nothing else."""
    controller = not hasattr(config, "workerinput")
    if controller and getattr(config.option, "numprocesses", None) and not os.environ.get(ENV_URL):
        stack = ExitStack()
        os.environ[ENV_URL] = stack.enter_context(postgres_server())
        config.stash[_SHARED_POSTGRES] = stack


def pytest_unconfigure(config: pytest.Config) -> None:
    stack = config.stash.get(_SHARED_POSTGRES, None)
    if stack is not None:
        del os.environ[ENV_URL]
        stack.close()


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: unknown without it
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`-n`'s default distribution ("load", a test at a time to whichever worker is free),
    except that each group of ONE_WORKER runs on one worker: xdist's own `loadgroup`
    can't group tests, since pytest 9.2 ignores its change to their node ids."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class OneWorkerForSome(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return next((g for g, ids in ONE_WORKER.items() if nodeid.startswith(ids)), nodeid)

    return OneWorkerForSome(config, log)


@pytest.fixture
def stub(groupmate_model_server: StubLLM) -> Iterator[StubLLM]:
    """The test kit's model server (one per session), reset around each test."""
    groupmate_model_server.reset()
    yield groupmate_model_server
    groupmate_model_server.reset()


def make_ctx(**overrides: Any) -> MessageContext:
    values: dict[str, Any] = {
        "chat_id": "chat-1",
        "chat_type": "group",
        "sender_id": "u-alice",
        "sender_name": "Alice",
        "timezone": "Europe/Berlin",
        "clock": lambda: FIXED_NOW,
    }
    values.update(overrides)
    return MessageContext(**values)


@pytest.fixture
def ctx() -> MessageContext:
    return make_ctx()


@pytest.fixture
def registry() -> ToolRegistry:
    return ToolRegistry()


@pytest.fixture
async def make_llm(stub: StubLLM) -> AsyncIterator[Any]:
    created: list[FunctionCallLLM] = []

    def factory(registry: ToolRegistry, **options: Any) -> FunctionCallLLM:
        options.setdefault("transport_retries", 0)
        llm = FunctionCallLLM(
            model=options.pop("model", "stub-model"),
            base_url=stub.base_url,
            api_key="sk-test-secret",
            registry=registry,
            **options,
        )
        created.append(llm)
        return llm

    yield factory
    for llm in created:
        await llm.aclose()


async def eventually(
    condition: Callable[[], bool | Awaitable[bool]], *, within: float = 5.0, every: float = 0.02
) -> None:
    """Poll until `condition` holds; fail after `within` seconds. For state no event marks."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        outcome = condition()
        if outcome if isinstance(outcome, bool) else await outcome:
            return
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {within} s")
        await asyncio.sleep(every)


# --- reminders: databases, a controllable clock, a recording sender -------------------


class Outbox:
    """The platform side of reminder delivery: records messages, can refuse some."""

    def __init__(self) -> None:
        self.messages: list[OutgoingMessage] = []
        self.failures_left = 0
        self.attempts = 0
        self.arrived = asyncio.Event()
        # A platform that gives sent messages no id of their own (DingTalk): the adapter
        # names each by its words, so two alike share one.
        self.same_id: str | None = None

    async def __call__(self, message: OutgoingMessage) -> str:
        """Like a platform, answers with the sent message's id: msg-1, msg-2, ..."""
        self.attempts += 1
        if self.failures_left > 0:
            self.failures_left -= 1
            raise SendError("the platform answered 502")
        self.messages.append(message)
        self.arrived.set()
        return self.same_id or f"msg-{len(self.messages)}"

    async def wait_for(self, count: int, *, within: float = 5.0) -> None:
        async with asyncio.timeout(within):
            while len(self.messages) < count:
                self.arrived.clear()
                await self.arrived.wait()

    def texts(self) -> list[str]:
        return [message.text for message in self.messages]


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    with postgres_server() as url:
        yield url


@pytest.fixture(scope="session")
def pg_template(pg_server: str) -> str:
    """A migrated database that each test's database is copied from."""
    url = create_database(pg_server)
    database = Database(url)
    upgrade(database)
    database.close()
    return url.rsplit("/", 1)[1]


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file that each test's is copied from: a copy takes a millisecond,
    running the migrations about 70."""
    path = tmp_path_factory.mktemp("sqlite-template") / "groupmate.db"
    database = Database(f"sqlite:///{path}")
    upgrade(database)
    database.close()
    return path


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, migrated database on each backend."""
    if request.param == "sqlite":
        path = tmp_path / "groupmate.db"
        shutil.copyfile(request.getfixturevalue("sqlite_template"), path)
        yield f"sqlite:///{path}"
        return
    server: str = request.getfixturevalue("pg_server")
    url = create_database(server, template=request.getfixturevalue("pg_template"))
    yield url
    drop_database(server, url)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def outbox() -> Outbox:
    return Outbox()


FAST_POLICY = DeliveryPolicy(
    retry_base=timedelta(milliseconds=10),
    retry_max=timedelta(milliseconds=40),
    send_attempts=3,
    watchdog_interval=timedelta(hours=1),
)


@pytest.fixture
async def reminders(
    database_url: str, clock: FakeClock, outbox: Outbox
) -> AsyncIterator[ReminderService]:
    async with ReminderService.open(
        database_url,
        sender=outbox,
        compose=reminder_message,
        default_timezone="Europe/Berlin",
        policy=FAST_POLICY,
        clock=clock,
    ) as service:
        yield service


def chat_ctx(service: ReminderService, clock: FakeClock, **overrides: Any) -> MessageContext:
    """A message context wired to the reminder service, on the fake clock."""
    deps = Deps({ReminderService: service, ReminderReader: ReminderReader(service)})
    values: dict[str, Any] = {"deps": deps, "clock": clock}
    values.update(overrides)
    return make_ctx(**values)


# --- the HTTP API: bots on real uvicorn, and a receiver for their outbound calls -------


@pytest.fixture
async def servers(tmp_path: Path) -> AsyncIterator[Servers]:
    started = Servers(tmp_path)
    yield started
    await started.aclose()


@pytest.fixture(scope="session")
def receiver_server() -> Iterator[Receiver]:
    receiver = Receiver()
    receiver.start()
    yield receiver
    receiver.stop()


@pytest.fixture
def receiver(receiver_server: Receiver) -> Receiver:
    receiver_server.calls.clear()
    receiver_server.fail_next = 0
    receiver_server.reply_message_id = None
    return receiver_server


# --- reminder delivery in real processes (tests/reminder_worker.py) ------------------


class Worker:
    """`python -m tests.reminder_worker` as a child process."""

    def __init__(
        self, url: str, sink: Path, options: dict[str, float | int], name: str = "worker"
    ) -> None:
        args = [sys.executable, "-m", "tests.reminder_worker", "--url", url]
        args += ["--sink", str(sink), "--name", name]
        for key, value in options.items():
            args += [f"--{key.replace('_', '-')}", str(value)]
        self.process = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        ready = threading.Event()
        threading.Thread(target=self._await_ready, args=(ready,), daemon=True).start()
        if not ready.wait(60):
            self.process.kill()
            raise RuntimeError("the worker did not start")

    def _await_ready(self, ready: threading.Event) -> None:
        assert self.process.stdout is not None
        if self.process.stdout.readline().strip() == "ready":
            ready.set()

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(30) == 0


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    started: list[Worker] = []
    yield started
    for worker in started:
        if worker.process.poll() is None:
            worker.process.kill()
            worker.process.wait()
