"""The Matrix wire format without a homeserver: pills, escaping, reply fallbacks, and the
client's handling of M_LIMIT_EXCEEDED (a fake server behind httpx's mock transport)."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from bot.adapters.matrix_client import MatrixClient, MatrixError
from bot.adapters.matrix_format import (
    mentioned_users,
    plain_body,
    render,
    strip_leading_name,
    transaction_id,
)
from storage import Member


def test_people_become_pills_and_user_text_is_escaped() -> None:
    people = [Member("mx:@ann:hs", "ann"), Member("mx:@anna:hs", "anna")]
    content = render(
        "⏰ Reminder for @anna, @ann: <b>tea</b> & cake", msgtype="m.notice", people=people
    )
    assert content["msgtype"] == "m.notice"
    assert content["body"] == "⏰ Reminder for @anna, @ann: <b>tea</b> & cake"
    assert content["formatted_body"] == (
        '⏰ Reminder for <a href="https://matrix.to/#/@anna:hs">@anna</a>, '
        '<a href="https://matrix.to/#/@ann:hs">@ann</a>: &lt;b&gt;tea&lt;/b&gt; &amp; cake'
    )
    assert content["m.mentions"] == {"user_ids": ["@ann:hs", "@anna:hs"]}


def test_a_reply_points_at_its_event_and_keeps_line_breaks() -> None:
    content = render("one\ntwo", msgtype="m.text", mentions=("mx:@bo:hs",), in_reply_to="$e")
    assert content["formatted_body"] == "one<br>two"
    assert content["m.relates_to"] == {"m.in_reply_to": {"event_id": "$e"}}
    assert content["m.mentions"] == {"user_ids": ["@bo:hs"]}


def test_transaction_ids_are_stable_per_key() -> None:
    assert transaction_id("r1:2026-01-01T09:00:00+00:00") == transaction_id(
        "r1:2026-01-01T09:00:00+00:00"
    )
    assert transaction_id("r1:a") != transaction_id("r1:b")


def test_incoming_reply_fallback_and_mentions() -> None:
    content: dict[str, Any] = {
        "body": "> <@bot:hs> ⏰ Reminder: tea\n\nsnooze 10 minutes",
        "formatted_body": '<a href="https://matrix.to/#/%40bob%3Ahs">bob</a> hi',
        "m.mentions": {"user_ids": ["@bot:hs"]},
        "m.relates_to": {"m.in_reply_to": {"event_id": "$r"}},
    }
    assert plain_body(content) == "snooze 10 minutes"
    assert mentioned_users(content) == ["@bot:hs", "@bob:hs"]
    assert plain_body({"body": "> quoting without a reply"}) == "> quoting without a reply"


def test_a_leading_pill_name_is_taken_off() -> None:
    assert strip_leading_name("groupmate: /remind in 1 minute tea", ["groupmate"]) == (
        "/remind in 1 minute tea",
        True,
    )
    assert strip_leading_name("groupmates are fun", ["groupmate"]) == ("groupmates are fun", False)


def _client(handler: Any) -> MatrixClient:
    transport = httpx.MockTransport(handler)
    return MatrixClient("http://hs.invalid", access_token="secret-token", transport=transport)


async def test_rate_limits_are_waited_out_as_the_server_asks() -> None:
    calls: list[float] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(time.monotonic())
        if len(calls) == 1:
            body = {"errcode": "M_LIMIT_EXCEEDED", "error": "Too many", "retry_after_ms": 300}
            return httpx.Response(429, json=body)
        return httpx.Response(200, json={"event_id": "$sent"})

    client = _client(handler)
    assert await client.send("!r:hs", {"body": "hi"}, "txn1") == "$sent"
    assert calls[1] - calls[0] >= 0.3
    await client.aclose()


async def test_errors_name_the_errcode_never_the_token() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.headers["Authorization"] == "Bearer secret-token"
        return httpx.Response(403, json={"errcode": "M_FORBIDDEN", "error": "not in room"})

    client = _client(handler)
    with pytest.raises(MatrixError) as raised:
        await client.join("!r:hs")
    assert raised.value.errcode == "M_FORBIDDEN"
    assert "secret-token" not in str(raised.value)
    await client.aclose()
