"""A throwaway PostgreSQL server for tests and benchmarks, installed when missing.

Set GROUPMATE_TEST_POSTGRES_URL to use an existing server instead (a URL to a database
the user may create databases from, e.g. postgresql://postgres@127.0.0.1:5432/postgres).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from tests.ports import free_port

ENV_URL = "GROUPMATE_TEST_POSTGRES_URL"


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    if found:
        return Path(found[0]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _install() -> Path:
    if os.geteuid() != 0:
        raise RuntimeError(
            "PostgreSQL is not installed and this user cannot install it; install the "
            f"'postgresql' package or set {ENV_URL}"
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "postgresql"],
        check=True,
        env=env,
    )
    bindir = _bindir()
    if bindir is None:
        raise RuntimeError("installed PostgreSQL but found no initdb")
    return bindir


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a private server; yields a psycopg URL of its `postgres` database."""
    if os.environ.get(ENV_URL):
        yield os.environ[ENV_URL]
        return
    bindir = _bindir() or _install()
    data = Path(tempfile.mkdtemp(prefix="groupmate-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        # The server refuses to run as root.
        account = pwd.getpwnam("postgres")
        os.chown(data, account.pw_uid, account.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    port = free_port()
    db, log = str(data / "db"), str(data / "log")
    options = f"-F -p {port} -k {data} -c listen_addresses=127.0.0.1 -c max_connections=300"
    try:
        for command in (
            ["initdb", "-D", db, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"],
            ["pg_ctl", "-D", db, "-l", log, "-w", "-t", "60", "-o", options, "start"],
        ):
            command[0] = str(bindir / command[0])
            subprocess.run([*as_user, *command], check=True, capture_output=True)
    except subprocess.CalledProcessError as exc:
        raise RuntimeError(f"could not start PostgreSQL: {exc.stderr.decode()}") from exc
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(
            [*as_user, str(bindir / "pg_ctl"), "-D", db, "-m", "immediate", "stop"],
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        shutil.rmtree(data, ignore_errors=True)


def _admin(server_url: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(server_url.replace("+psycopg", ""), autocommit=True)


def create_database(server_url: str, *, template: str | None = None) -> str:
    """A new empty (or template-copied) database; returns its URL."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    clause = f" TEMPLATE {template}" if template else ""
    with _admin(server_url) as connection:
        connection.execute(f"CREATE DATABASE {name}{clause}".encode())
    return server_url.rsplit("/", 1)[0] + f"/{name}"


def drop_database(server_url: str, database_url: str) -> None:
    name = database_url.rsplit("/", 1)[1]
    with _admin(server_url) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)".encode())
