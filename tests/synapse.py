"""A real Synapse homeserver for the Matrix tests, installed from PyPI into its own venv.

The venv lives in .cache/synapse-venv (gitignored) and is reused; a clean clone builds it
with `python -m venv` and pip on first use. Each test session gets a fresh server: SQLite,
one loopback listener, registration only through the shared-secret admin API, and rate
limits high enough that tests are never throttled by accident.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import yaml

from tests.ports import free_port
from tests.tool_venv import ensure_venv, stop_process, wait_until_up

SECRET = "groupmate-test-shared-secret"
SERVER_NAME = "localhost"
_GENEROUS = {"per_second": 1000, "burst_count": 1000}


def ensure_synapse() -> Path:
    """The venv's python, with matrix-synapse installed (once)."""
    return ensure_venv("synapse-venv", "matrix-synapse")


def _config(directory: Path, port: int) -> dict[str, Any]:
    return {
        "server_name": SERVER_NAME,
        "pid_file": str(directory / "homeserver.pid"),
        "listeners": [
            {
                "port": port,
                "bind_addresses": ["127.0.0.1"],
                "type": "http",
                "tls": False,
                "x_forwarded": False,
                "resources": [{"names": ["client"], "compress": False}],
            }
        ],
        "database": {"name": "sqlite3", "args": {"database": str(directory / "homeserver.db")}},
        "media_store_path": str(directory / "media"),
        "signing_key_path": str(directory / "signing.key"),
        "registration_shared_secret": SECRET,
        "enable_registration": False,
        "report_stats": False,
        "macaroon_secret_key": uuid.uuid4().hex,
        "form_secret": uuid.uuid4().hex,
        "trusted_key_servers": [],
        "suppress_key_server_warning": True,
        "presence": {"enabled": False},
        "rc_message": _GENEROUS,
        "rc_registration": _GENEROUS,
        "rc_joins": {"local": _GENEROUS, "remote": _GENEROUS},
        "rc_joins_per_room": _GENEROUS,
        "rc_invites": {"per_room": _GENEROUS, "per_user": _GENEROUS, "per_issuer": _GENEROUS},
        "rc_login": {"address": _GENEROUS, "account": _GENEROUS, "failed_attempts": _GENEROUS},
        "rc_admin_redaction": _GENEROUS,
    }


@dataclass(frozen=True, slots=True)
class User:
    user_id: str
    password: str
    access_token: str


class Synapse:
    """One homeserver process; `register` makes users, `client` acts as one."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, python: Path) -> None:
        directory = self.directory
        config = directory / "homeserver.yaml"
        config.write_text(yaml.safe_dump(_config(directory, self.port)))
        homeserver = [str(python), "-m", "synapse.app.homeserver", "-c", str(config)]
        subprocess.run([*homeserver, "--generate-keys"], check=True, cwd=directory)
        log = open(directory / "synapse.log", "wb")  # noqa: SIM115 (lives with the process)
        env = {**os.environ, "PYTHONPATH": ""}
        self.process = subprocess.Popen(
            homeserver, cwd=directory, stdout=log, stderr=subprocess.STDOUT, env=env
        )
        wait_until_up(
            self.process,
            f"{self.url}/health",
            what="synapse",
            log=directory / "synapse.log",
            within=60,
        )

    def stop(self) -> None:
        stop_process(self.process)

    def register(self, name: str, *, admin: bool = False) -> User:
        """A user made through the shared-secret admin API (registration is off)."""
        endpoint = f"{self.url}/_synapse/admin/v1/register"
        nonce = httpx.get(endpoint, timeout=10).json()["nonce"]
        password = uuid.uuid4().hex
        message = b"\x00".join(
            [nonce.encode(), name.encode(), password.encode(), b"admin" if admin else b"notadmin"]
        )
        mac = hmac.new(SECRET.encode(), message, hashlib.sha1).hexdigest()
        body = {"nonce": nonce, "username": name, "password": password, "admin": admin, "mac": mac}
        data = httpx.post(endpoint, json=body, timeout=10).raise_for_status().json()
        return User(data["user_id"], password, data["access_token"])

    def client(self, user: User) -> Client:
        return Client(self.url, user)


class Client:
    """A person's Matrix client: just the calls the tests make."""

    def __init__(self, url: str, user: User) -> None:
        self.user = user
        self.http = httpx.Client(
            base_url=f"{url}/_matrix/client/v3",
            headers={"Authorization": f"Bearer {user.access_token}"},
            timeout=30,
        )

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        response = self.http.request(method, path, json=body)
        response.raise_for_status()
        return response.json()

    def create_room(self, *, invite: list[str], encrypted: bool = False) -> str:
        body: dict[str, Any] = {"preset": "private_chat", "invite": invite}
        if encrypted:
            algorithm = {"algorithm": "m.megolm.v1.aes-sha2"}
            body["initial_state"] = [{"type": "m.room.encryption", "content": algorithm}]
        return str(self.call("POST", "/createRoom", body)["room_id"])

    def join(self, room_id: str) -> None:
        self.call("POST", f"/rooms/{quote(room_id)}/join", {})

    def members(self, room_id: str) -> set[str]:
        return set(self.call("GET", f"/rooms/{quote(room_id)}/joined_members")["joined"])

    def say(self, room_id: str, text: str, *, mention: User | None = None) -> str:
        content: dict[str, Any] = {"msgtype": "m.text", "body": text}
        if mention is not None:
            content["m.mentions"] = {"user_ids": [mention.user_id]}
        path = f"/rooms/{quote(room_id)}/send/m.room.message/{uuid.uuid4().hex}"
        return str(self.call("PUT", path, content)["event_id"])

    def messages(self, room_id: str, sender: str) -> list[dict[str, Any]]:
        """The room's recent messages from `sender`, oldest first."""
        path = f"/rooms/{quote(room_id)}/messages?dir=b&limit=100"
        events = self.call("GET", path)["chunk"]
        return [
            e for e in reversed(events) if e["type"] == "m.room.message" and e["sender"] == sender
        ]

    def close(self) -> None:
        self.http.close()


def membership(client: Client, room_id: str, user_id: str) -> str:
    path = f"/rooms/{quote(room_id)}/state/m.room.member/{quote(user_id)}"
    return str(client.call("GET", path)["membership"])
