"""Tests that test_parallel.py runs under `pytest -n 2`: each writes down its worker and
the PostgreSQL server it got, for that test to check how the workers were kept apart."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

PROBE_DIR = "GROUPMATE_PARALLEL_PROBE_DIR"


def _write_down(request: pytest.FixtureRequest, pg_server: str) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    line = json.dumps({"test": request.node.name, "worker": worker, "pg_server": pg_server})
    with open(Path(os.environ[PROBE_DIR]) / f"{worker}.jsonl", "a") as notes:
        notes.write(line + "\n")


@pytest.mark.parametrize("n", range(6))
def test_on_one_worker(pg_server: str, request: pytest.FixtureRequest, n: int) -> None:
    """A group of tests/conftest.py's ONE_WORKER, as the Synapse tests are."""
    _write_down(request, pg_server)


@pytest.mark.parametrize("n", range(6))
def test_anywhere(pg_server: str, request: pytest.FixtureRequest, n: int) -> None:
    _write_down(request, pg_server)
