"""`make test` runs the suite in xdist workers: what they share and what they don't."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text

from groupmate.storage import Database, current_revision, head_revision
from tests.conftest import ONE_WORKER
from tests.parallel_probe import PROBE_DIR
from tests.postgres import ENV_URL

ROOT = Path(__file__).resolve().parent.parent


def test_workers_share_one_postgresql_server_and_a_group_runs_on_one_worker(
    tmp_path: Path,
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    # Not this run's server: the one the inner run's controller starts for its workers.
    env = {name: value for name, value in os.environ.items() if name != ENV_URL}
    env[PROBE_DIR] = str(notes)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2"]
    command += ["--basetemp", str(tmp_path / "run")]
    done = subprocess.run(
        [*command, "tests/parallel_probe.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [json.loads(line) for path in notes.iterdir() for line in path.open()]
    assert len(rows) == 12
    assert {row["worker"] for row in rows} == {"gw0", "gw1"}
    assert len({row["worker"] for row in rows if row["test"].startswith("test_on_one_")}) == 1
    assert len({row["pg_server"] for row in rows}) == 1


@pytest.mark.parametrize("n", [1, 2])
def test_each_test_gets_a_migrated_database_of_its_own(database_url: str, n: int) -> None:
    """SQLite's is a copy of a migrated file, PostgreSQL's of a migrated database: the
    second test would find the first one's table in a shared one."""
    database = Database(database_url)
    try:
        assert current_revision(database) == head_revision()
        with database.write_session() as session:
            session.execute(text("CREATE TABLE left_by_a_test (n INTEGER)"))
    finally:
        database.close()


def test_every_test_on_the_session_synapse_is_in_its_one_worker_group() -> None:
    """A test module that takes test_matrix.py's `synapse` and is not in the group would
    start a second homeserver on another worker, or meet the one a test restarts."""
    on_synapse = set()
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            functions = ast.FunctionDef | ast.AsyncFunctionDef
            if isinstance(node, functions) and any(a.arg == "synapse" for a in node.args.args):
                on_synapse.add(f"tests/{path.name}::")
    assert on_synapse and on_synapse <= set(ONE_WORKER["synapse"])
