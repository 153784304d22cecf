"""A daily /summary action across a crash, in real processes: `groupmate serve` claims the
due digest and is killed (SIGKILL) while the model is still writing it; the next process
takes the claim over once its lease runs out and posts the digest once, late-marked."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from sqlalchemy import create_engine, update

from groupmate.storage.models import Reminder
from groupmate.testing.stub_llm import StubLLM, text
from tests.http_harness import TOKEN
from tests.ports import free_port
from tests.processes import wait_until_answers
from tests.receiver import Receiver

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def serving(config_path: Path, port: int) -> Iterator[subprocess.Popen[bytes]]:
    command = [sys.executable, "-m", "groupmate.bot.cli", "--config", str(config_path), "serve"]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL)
    try:
        wait_until_answers(f"http://127.0.0.1:{port}/healthz", process)
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(30)


def post(port: int, words: str, **fields: Any) -> list[dict[str, Any]]:
    body = {
        "chat_id": "g1",
        "chat_type": "group",
        "sender_id": "u-alice",
        "sender_name": "Alice",
        "text": words,
        "message_id": f"m{time.monotonic_ns()}",
    }
    body.update(fields)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    answer = httpx.post(f"http://127.0.0.1:{port}/v1/messages", json=body, headers=headers)
    answer.raise_for_status()
    replies: list[dict[str, Any]] = answer.json()["replies"]
    return replies


def digests(receiver: Receiver) -> list[str]:
    return [str(c.body.get("text", "")) for c in receiver.calls if "▶ /summary" in str(c.body)]


def test_a_digest_claimed_by_a_process_killed_mid_run_is_posted_once_late(
    tmp_path: Path, stub: StubLLM, receiver: Receiver
) -> None:
    port = free_port()
    database = tmp_path / "bot.db"
    config = {
        "bot": {"name": "groupmate", "timezone": "Europe/Berlin", "admins": ["u-admin"]},
        "storage": {"url": f"sqlite:///{database}"},
        "llm": {
            "base_url": stub.base_url,
            "api_key": "sk-test",
            "tool_mode": "native",
            "warm_up": False,
        },
        "adapters": {
            "console": {"enabled": False},
            "webhook": {
                "enabled": True,
                "port": port,
                "token": TOKEN,
                "outbound_url": receiver.url,
            },
        },
        # A dead process's claim is taken over after 3 s (2 minutes by default), and a
        # run more than 1 s after its time is late-marked (a minute by default).
        "reminders": {"watchdog_interval": "200ms", "lease": "3s", "late_after": "1s"},
    }
    config_path = tmp_path / "config.yaml"
    config_path.write_text(yaml.safe_dump(config))
    with serving(config_path, port) as first:
        created = post(port, "/remind every day at 18:00 /summary")
        assert "▶ /summary" in created[0]["text"]
        post(port, "the launch moves to friday", sender_id="u-bob", sender_name="Bob")
        time.sleep(1.5)  # said well before the digest's time (it covers up to then)
        # The model takes its time: the first process is mid-run when it dies.
        stub.script(text("never posted", delay=30), text("- Bob: the launch moves to Friday."))
        engine = create_engine(f"sqlite:///{database}")
        with engine.begin() as connection:  # due now
            due = datetime.now(UTC) - timedelta(seconds=1)
            connection.execute(update(Reminder).values(next_fire_at=due))
        engine.dispose()
        deadline = time.monotonic() + 20
        while not stub.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert stub.requests, "the first process never started the digest"
        first.send_signal(signal.SIGKILL)
        first.wait(10)
    assert digests(receiver) == []  # it died before posting
    with serving(config_path, port):
        deadline = time.monotonic() + 30
        while not digests(receiver) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)  # nothing more comes
    [posted] = digests(receiver)
    assert "the launch moves to Friday" in posted
    assert "after downtime" in posted  # late-marked: when it was due, when it came
    assert len(stub.requests) == 2  # the killed run, and the one that was posted
