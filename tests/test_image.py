"""The container image and the compose file, built and run here with podman (README, "Run
with Docker or Podman"; the tooling in tests/containers.py): the image serves /healthz,
sets a reminder through /v1/messages and delivers it to an outbound webhook on the host,
still has it after `podman restart` and fires it once; it refuses to start without a
token; the compose stack (groupmate + PostgreSQL) comes up and rides out a restart of the
database container. Prints the image's size, build time and cold start."""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.containers import (
    IMAGE,
    ROOT,
    TOKEN,
    Built,
    build_image,
    data,
    environment,
    healthy,
    podman,
    postgres_image,
    say,
)
from tests.ports import free_port
from tests.receiver import Receiver

pytestmark = pytest.mark.image
__all__ = ["data"]  # a fixture


@pytest.fixture(scope="module")
def image() -> Built:
    built = build_image()
    print(
        f"\nimage {built.name}: {built.size / 1e6:.0f} MB, {built.own / 1e6:.0f} MB less its "
        f"base, built in {built.seconds:.0f} s"
    )
    return built


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    hook = Receiver()
    hook.start(host="0.0.0.0")  # the container reaches the host at host.containers.internal
    yield hook
    hook.stop()


def test_the_image_serves_reminds_and_keeps_its_reminder_across_a_restart(
    image: Built, receiver: Receiver, data: Path
) -> None:
    name, port = f"gm-{uuid.uuid4().hex[:8]}", free_port()
    outbound = f"http://host.containers.internal:{receiver.port}/hook"
    began = time.monotonic()
    podman(
        "run", "--detach", "--name", name, "--volume", f"{data}:/data",
        "--env", f"GROUPMATE_TOKEN={TOKEN}", "--env", f"GROUPMATE_OUTBOUND_URL={outbound}",
        "--publish", f"127.0.0.1:{port}:8080", image.name,
    )  # fmt: skip
    base_url = f"http://127.0.0.1:{port}"
    try:
        health = healthy(base_url)
        print(f"cold start to a green /healthz: {time.monotonic() - began:.1f} s")
        assert health["status"] == "ok" and health["database"] == "ok"
        written = (data / "config.yaml").read_text()
        assert "url: ${GROUPMATE_DATABASE_URL:-sqlite:////data/groupmate.db}" in written
        assert "host: 0.0.0.0" in written and "token: ${GROUPMATE_TOKEN}" in written
        assert (data / "groupmate.db").exists()
        assert podman("top", name, "user").stdout.split()[1:] == ["groupmate"]
        assert podman("healthcheck", "run", name, check=False).returncode == 0
        assert httpx.post(f"{base_url}/v1/messages", json={}).status_code == 401
        assert say(base_url, "/remind in 1 minute stretch").startswith("⏰ Reminder #1")
        podman("restart", "--time", "10", name)
        healthy(base_url)
        assert "stretch" in say(base_url, "/reminders")  # kept in /data across the restart
        (delivered,) = receiver.wait_for(1, within=120)
        assert "stretch" in delivered.body["text"]
        time.sleep(5)
        assert len(receiver.calls) == 1  # once
    finally:
        podman("rm", "--force", name, check=False)


def test_the_image_refuses_to_start_without_a_token(image: Built, data: Path) -> None:
    name = f"gm-{uuid.uuid4().hex[:8]}"
    podman("run", "--name", name, "--volume", f"{data}:/data", image.name, check=False)
    try:
        state = podman("inspect", "--format", "{{.State.ExitCode}}", name).stdout.strip()
        logs = podman("logs", name).stderr + podman("logs", name).stdout
    finally:
        podman("rm", "--force", name, check=False)
    assert state == "2"
    assert "refusing to start: set GROUPMATE_TOKEN" in logs
    assert "Traceback" not in logs


def compose(project: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = ["podman-compose", "--file", str(ROOT / "compose.yaml"), "--project-name", project]
    done = subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=900, env=env, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_compose_with_postgresql_rides_out_a_database_restart(image: Built, data: Path) -> None:
    project, port = f"gm{uuid.uuid4().hex[:8]}", free_port()
    env = {
        **environment(),
        "GROUPMATE_IMAGE": IMAGE,
        "POSTGRES_IMAGE": postgres_image(),
        "GROUPMATE_TOKEN": TOKEN,
        "POSTGRES_PASSWORD": "composetest",
        "GROUPMATE_DATA": str(data),
        "GROUPMATE_PORT": str(port),
    }
    base_url = f"http://127.0.0.1:{port}"
    database = f"{project}_postgres_1"
    compose(project, "up", "--detach", "postgres", "groupmate", env=env)
    try:
        health = healthy(base_url, within=180)
        assert health["database"] == "ok"
        assert not (data / "groupmate.db").exists()  # its data is in PostgreSQL
        assert say(base_url, "/remind tomorrow at 9 water the plants").startswith("⏰ Reminder #1")
        podman("stop", "--time", "5", database)
        assert healthy(base_url)["database"] == "unavailable"
        down = say(base_url, "/reminders")
        assert "can't reach the reminder database right now" in down
        helped = say(base_url, "/help")  # needs no database: answered all the same
        assert helped.startswith("Commands: /remind") and "can't reach the reminder" in helped
        podman("start", database)
        deadline = time.monotonic() + 60
        while healthy(base_url)["database"] != "ok":
            assert time.monotonic() < deadline, "the bot did not see the database come back"
            time.sleep(1)
        assert "water the plants" in say(base_url, "/reminders")  # no restart of the bot
    finally:
        compose(project, "down", "--volumes", env=env)
