"""Who the HTTP API trusts: with and without adapters.webhook.token (real uvicorn)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from tests.http_harness import TOKEN, Api, Servers

REFUSED = "Only a group admin can change this chat's time zone."
CHANGED = "🌍 This chat's time zone is now Asia/Tokyo."


@pytest.fixture
async def open_api(servers: Servers) -> Api:
    return await servers.start(adapters={"webhook": {"token": None}})


@pytest.fixture
async def anonymous(open_api: Api) -> AsyncIterator[httpx.AsyncClient]:
    """A caller with no Authorization header at all."""
    async with httpx.AsyncClient(base_url=open_api.base_url) as client:
        yield client


async def say(client: httpx.AsyncClient, text: str, sender: str, **fields: object) -> str:
    body = {
        "chat_id": "g1",
        "chat_type": "group",
        "sender_id": sender,
        "sender_name": sender,
        "text": text,
        **fields,
    }
    response = await client.post("/v1/messages", json=body)
    assert response.status_code == 200, response.text
    (reply,) = response.json()["replies"]
    answer: str = reply["text"]
    return answer


async def test_without_a_token_the_api_is_open_but_admin_claims_are_ignored(
    open_api: Api, anonymous: httpx.AsyncClient
) -> None:
    listed = await anonymous.get("/v1/chats/g1/reminders")
    assert (listed.status_code, listed.json()) == (200, [])
    claimed = await say(anonymous, "/tz Asia/Tokyo", "u-alice", sender_is_admin=True)
    assert claimed == REFUSED
    assert open_api.bot.reminders is not None
    assert await open_api.bot.reminders.timezone_of("g1") == "Europe/Berlin"
    # Admins named in the config (bot.admins) still are admins.
    by_admin = await say(anonymous, "/tz Asia/Tokyo", "u-admin")
    assert by_admin.startswith(CHANGED)


async def test_with_the_token_the_platforms_admin_flag_is_trusted(servers: Servers) -> None:
    api = await servers.start()  # adapters.webhook.token is set; the client sends it
    assert await say(api.client, "/tz Asia/Tokyo", "u-alice") == REFUSED
    granted = await say(api.client, "/tz Asia/Tokyo", "u-alice", sender_is_admin=True)
    assert granted.startswith(CHANGED)
    body = {"chat_id": "g1", "chat_type": "group", "sender_id": "u-eve", "text": "/tz UTC"}
    async with httpx.AsyncClient(base_url=api.base_url) as stranger:
        for headers in ({}, {"Authorization": f"Bearer {TOKEN}-not"}):
            denied = await stranger.post(
                "/v1/messages", json={**body, "sender_is_admin": True}, headers=headers
            )
            assert denied.status_code == 401
    assert api.bot.reminders is not None
    assert await api.bot.reminders.timezone_of("g1") == "Asia/Tokyo"
