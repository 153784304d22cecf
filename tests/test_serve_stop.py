"""`groupmate serve` stopped with Ctrl-C (SIGINT) or SIGTERM while a web page holds the
playground's event stream open: it stops at once and quietly."""

from __future__ import annotations

import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.test_cli import _config, _env


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_serve_stops_at_once_with_a_page_listening(tmp_path: Path, stop: signal.Signals) -> None:
    config = _config(tmp_path, adapters={"webhook": {"port": 0}})
    process = subprocess.Popen(
        [sys.executable, "-m", "groupmate.bot.cli", "serve", "--config", str(config)],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ended = threading.Event()
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 60)
        assert ready, "serve printed nothing"
        port = int(process.stdout.readline().strip().rsplit(":", 1)[1])
        with (
            httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client,
            client.stream("GET", "/v1/events") as events,
        ):
            lines = events.iter_lines()
            assert next(lines) == ": connected"

            def read_to_the_end() -> None:  # as the browser does, until the server ends it
                for _ in lines:
                    pass
                ended.set()

            reader = threading.Thread(target=read_to_the_end, daemon=True)
            reader.start()
            process.send_signal(stop)
            started = time.monotonic()
            _, stderr = process.communicate(timeout=30)
            took = time.monotonic() - started
            reader.join(5)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, stderr
    assert took < 2, f"serve took {took:.1f} s to stop"
    assert "Traceback" not in stderr and "CancelledError" not in stderr, stderr
    assert ended.is_set()  # the page's stream ended, as at any stop: it reconnects later
