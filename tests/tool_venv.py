"""Real servers the tests run (Synapse, llama.cpp): their virtual environments, each in
.cache/<name> (gitignored) and made once per clone (a lock keeps parallel sessions from
installing over each other), and starting and stopping their processes."""

from __future__ import annotations

import fcntl
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


def ensure_venv(name: str, *requirements: str, find_links: Path | None = None) -> Path:
    """The venv's python, with `requirements` installed."""
    venv = ROOT / ".cache" / name
    python = venv / "bin" / "python"
    venv.parent.mkdir(parents=True, exist_ok=True)
    with open(venv.parent / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        ready = venv / ".installed"
        if not ready.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            links = ["--find-links", str(find_links)] if find_links is not None else []
            subprocess.run(
                [str(python), "-m", "pip", "install", "--quiet", *links, *requirements],
                check=True,
            )
            ready.touch()
    return python


def wait_until_up(
    process: subprocess.Popen[bytes], url: str, *, what: str, log: Path, within: float
) -> None:
    """Poll `url` until it answers 200; fail at once if the process exits."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited: see {log}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{what} did not come up within {within:.0f} s")


def stop_process(process: subprocess.Popen[bytes] | None, within: float = 20) -> None:
    """SIGTERM, and SIGKILL if it has not ended `within` seconds later."""
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=within)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
