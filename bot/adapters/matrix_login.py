"""Matrix login: a configured access token, or a password login kept in the database
so that restarts reuse one device (transaction ids deduplicate per device)."""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

from groupmate.bot.adapters.matrix_client import MatrixClient, MatrixError
from groupmate.storage.adapter_state import load_state, save_state

if TYPE_CHECKING:
    from groupmate.bot.adapters.matrix_settings import MatrixSettings
    from groupmate.storage import Database

log = logging.getLogger(__name__)


async def log_in(
    client: MatrixClient, settings: MatrixSettings, database: Database, key: str
) -> None:
    """The configured token; else the token of an earlier password login (the same
    device, so transaction ids keep deduplicating); else log in with the password. The
    login is kept in the database under `key`."""
    if settings.access_token is not None:
        client.access_token = settings.access_token.get_secret_value()
        await _check_identity(client, settings.user_id)
        return
    if settings.password is None:
        raise MatrixError("M_CONFIG", "adapters.matrix needs access_token or password")
    stored = json.loads(await load_state(database, key) or "{}")
    if stored.get("access_token"):
        client.access_token = stored["access_token"]
        try:
            await _check_identity(client, settings.user_id)
            log.info("matrix: resumed the login of device %s", stored.get("device_id"))
            return
        except MatrixError as exc:
            if exc.errcode != "M_UNKNOWN_TOKEN":
                raise
    client.access_token = None
    data = await client.login(settings.password.get_secret_value(), stored.get("device_id"))
    login = {"access_token": data.access_token, "device_id": data.device_id}
    await save_state(database, key, json.dumps(login))
    client.access_token = login["access_token"]
    log.info("matrix: logged in as %s (device %s)", settings.user_id, login["device_id"])
    await _check_identity(client, settings.user_id)


async def _check_identity(client: MatrixClient, user_id: str) -> None:
    actual = await client.whoami()
    if actual != user_id:
        raise MatrixError("M_CONFIG", f"the token belongs to {actual}, not {user_id}")
