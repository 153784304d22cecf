"""Virtual environments for real servers the tests run (Synapse, llama.cpp): each in
.cache/<name> (gitignored), made once per clone; a lock keeps parallel sessions from
installing over each other."""

from __future__ import annotations

import fcntl
import subprocess
import sys
from pathlib import Path

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
