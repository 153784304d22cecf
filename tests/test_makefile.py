"""The Makefile as a newcomer's shell runs it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _outside_make() -> dict[str, str]:
    """The environment of a shell, not of the `make test` running this."""
    inherited = ("PYTHON", "MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES")
    return {name: value for name, value in os.environ.items() if name not in inherited}


def test_the_python_probe_is_quiet_about_pyenv_shims_of_missing_versions(
    tmp_path: Path,
) -> None:
    """pyenv puts shims for every version it knows on the PATH; one whose version is not
    installed prints "pyenv: python3.13: command not found". `make` must pick the next
    Python without printing that."""
    shims = tmp_path / "shims"
    shims.mkdir()
    for version in ("python3.13", "python3.12"):
        shim = shims / version
        shim.write_text(f'#!/bin/sh\necho "pyenv: {version}: command not found" >&2\nexit 127\n')
        shim.chmod(0o755)
    (shims / "python3.11").symlink_to(sys.executable)
    make = shutil.which("make")
    assert make is not None
    done = subprocess.run(
        [make, "--no-print-directory", "--eval=show-python: ; @echo $(PYTHON)", "show-python"],
        cwd=ROOT,
        env={**_outside_make(), "PATH": f"{shims}:{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "python3.11"
    assert done.stderr == ""
