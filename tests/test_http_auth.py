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


@pytest.mark.parametrize("token", [TOKEN, None], ids=["token", "no-token"])
async def test_the_audit_says_how_a_rest_caller_was_authenticated(
    servers: Servers, token: str | None
) -> None:
    """A REST call is the token holder's: "token" when one is configured; with none,
    whoever reached the port made it: "none", never a token that does not exist."""
    api = await servers.start(adapters={"webhook": {"token": token}})
    await api.say("/remind tomorrow at 9 tea")
    assert (await api.client.delete("/v1/chats/g1/reminders/1")).status_code == 204
    answer = await api.client.get("/v1/audit", params={"tool": "reminder_delete"})
    (entry,) = answer.json()["entries"]
    expected = ("api", "rest", "token" if token else "none")
    assert (entry["sender_id"], entry["source"], entry["auth"]) == expected


async def test_the_playground_acts_as_its_person(servers: Servers) -> None:
    """`as_user` (the playground's side panel): the member's rights, as their /cancel
    would have; `as_admin` grants an admin's."""
    api = await servers.start()
    await api.say("/remind tomorrow at 9 tea")  # Alice's
    bob = {"as_user": "u-bob", "as_name": "Bob"}
    refused = await api.client.delete("/v1/chats/g1/reminders/1", params=bob)
    assert refused.status_code == 403
    assert refused.json()["error"] == (
        "Reminder #1 was set by Alice; only they or a group admin can delete it."
    )
    zone = await api.client.put("/v1/chats/g1/settings", params=bob, json={"timezone": "UTC"})
    assert zone.status_code == 403
    admin = {**bob, "as_admin": "true"}
    zone = await api.client.put("/v1/chats/g1/settings", params=admin, json={"timezone": "UTC"})
    assert (zone.status_code, zone.json()["timezone"]) == (200, "UTC")
    deleted = await api.client.delete("/v1/chats/g1/reminders/1", params=admin)
    assert deleted.status_code == 204
    answer = await api.client.get("/v1/audit", params={"tool": "reminder_delete"})
    entries = answer.json()["entries"]
    rows = [(e["sender_name"], e["source"], e["auth"], e["outcome"]) for e in entries]
    assert rows == [
        ("Bob", "playground", "token", "ok"),
        ("Bob", "playground", "token", "refused"),
    ]


async def test_without_a_token_the_playgrounds_admin_switch_counts_in_its_chats_only(
    open_api: Api, anonymous: httpx.AsyncClient
) -> None:
    """The playground's web: chats are simulated: its admin switch is trusted there
    (whoever reached the port administers every chat through /v1 anyway); a platform's
    chat posted here still gets no admin from a claim."""
    claimed = await say(anonymous, "/tz Asia/Tokyo", "u-alice", sender_is_admin=True)
    assert claimed == REFUSED
    body = {"chat_id": "web:group", "sender_is_admin": True}
    changed = await say(anonymous, "/tz Asia/Tokyo", "alice", **body)
    assert changed.startswith(CHANGED)
