"""The processes a test or benchmark runs beside itself: the stub LLM, `groupmate serve`, a
throwaway PostgreSQL. Each is a context manager that waits until it answers."""

from __future__ import annotations

import itertools
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.ports import free_port
from tests.postgres import create_database, postgres_server


def wait_until_answers(url: str, process: subprocess.Popen[bytes], within: float = 60) -> None:
    deadline = time.monotonic() + within
    while True:
        try:
            httpx.get(url, timeout=1).raise_for_status()
            return
        except httpx.HTTPError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"{url} did not answer") from None
            time.sleep(0.05)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextmanager
def stub_llm(
    delay: float, *, tool: str = "echo", arguments: str = '{"text": "hi"}'
) -> Iterator[str]:
    """The scripted Chat Completions server in its own process; yields its base URL.
    Every conversation calls `tool`, then (once the tool's result is in) says "done"."""
    port = free_port()
    command = [sys.executable, "-m", "groupmate.testing.stub_llm", "--port", str(port)]
    command += ["--delay", str(delay), "--tool", tool, "--arguments", arguments]
    process = subprocess.Popen(command)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        wait_until_answers(f"{base_url}/models", process)
        yield base_url
    finally:
        _stop(process)


@contextmanager
def serve(
    config: dict[str, Any],
    *extra: str,
    python: str = sys.executable,
    program: list[str] | None = None,
) -> Iterator[str]:
    """`groupmate serve` with this config (its webhook port is chosen here) under the
    interpreter `python` (another venv's, say), or as `program` (an installed `groupmate`
    script); yields the base URL of its HTTP API."""
    port = free_port()
    adapters = config.get("adapters", {})
    config = {
        **config,
        "adapters": {**adapters, "webhook": {**adapters.get("webhook", {}), "port": port}},
    }
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        program = program or [python, "-m", "groupmate.bot.cli"]
        command = [*program, "--config", str(path), "serve", *extra]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        base_url = f"http://127.0.0.1:{port}"
        try:
            wait_until_answers(f"{base_url}/healthz", process)
            yield base_url
        finally:
            _stop(process)


@contextmanager
def databases(backend: str) -> Iterator[Callable[[], str]]:
    """Yields a function that makes a new empty database of this backend ("sqlite" or
    "postgresql", one private server for all of them) and returns its URL."""
    with tempfile.TemporaryDirectory() as folder:
        if backend == "sqlite":
            names = itertools.count()
            yield lambda: f"sqlite:///{folder}/bench-{next(names)}.db"
            return
        with postgres_server() as server:
            yield lambda: create_database(server)
