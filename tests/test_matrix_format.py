"""The Matrix wire format without a homeserver: pills, escaping, reply fallbacks, and the
client's handling of M_LIMIT_EXCEEDED and errors (against a small real HTTP server)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from groupmate.bot.adapters.matrix_client import MatrixClient, MatrixError
from groupmate.bot.adapters.matrix_format import (
    mentioned_users,
    plain_body,
    render,
    replacement,
    reply_target,
    seeded_keys,
    strip_leading_name,
    thread_root,
    transaction_id,
)
from groupmate.bot.presses import ButtonData
from groupmate.storage import Button, Member
from groupmate.testing.threaded_server import ThreadedServer
from tests.ports import free_port


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


class FakeHomeserver:
    """A real HTTP server in front of the client: sends are rate limited `limited` times
    (asking for `retry_after_ms`) before they succeed; joins are always refused."""

    def __init__(self, *, limited: int = 0, retry_after_ms: int = 300) -> None:
        self.limited = limited
        self.retry_after_ms = retry_after_ms
        self.calls: list[float] = []
        self.tokens: list[str] = []
        api = "/_matrix/client/v3"
        send = api + "/rooms/{room}/send/m.room.message/{txn}"
        self._server = ThreadedServer(
            Starlette(
                routes=[
                    Route(send, self._send, methods=["PUT"]),
                    Route(api + "/join/{room}", self._join, methods=["POST"]),
                ]
            )
        )

    def __enter__(self) -> str:
        return f"http://127.0.0.1:{self._server.start()}"

    def __exit__(self, *exc: object) -> None:
        self._server.stop()

    async def _send(self, request: Request) -> Response:
        self.calls.append(time.monotonic())
        if len(self.calls) <= self.limited:
            body = {"errcode": "M_LIMIT_EXCEEDED", "error": "Too many"}
            return JSONResponse(body | {"retry_after_ms": self.retry_after_ms}, 429)
        return JSONResponse({"event_id": "$sent:hs"})

    async def _join(self, request: Request) -> Response:
        self.tokens.append(request.headers["Authorization"])
        return JSONResponse({"errcode": "M_FORBIDDEN", "error": "not in room"}, 403)


async def test_rate_limits_are_waited_out_as_the_server_asks() -> None:
    homeserver = FakeHomeserver(limited=1)
    with homeserver as url:
        client = MatrixClient(url, "@bot:hs", access_token="secret-token")
        assert await client.send("!r:hs", {"body": "hi"}, "txn1") == "$sent:hs"
        await client.aclose()
    assert homeserver.calls[1] - homeserver.calls[0] >= 0.3


async def test_a_server_asking_for_a_long_wait_is_given_up_on() -> None:
    homeserver = FakeHomeserver(limited=1, retry_after_ms=120_000)
    with homeserver as url:
        client = MatrixClient(url, "@bot:hs", access_token="secret-token")
        with pytest.raises(MatrixError) as raised:
            await client.send("!r:hs", {"body": "hi"}, "txn1")
        await client.aclose()
    assert raised.value.errcode == "M_LIMIT_EXCEEDED"
    assert len(homeserver.calls) == 1


async def test_errors_name_the_errcode_never_the_token() -> None:
    homeserver = FakeHomeserver()
    with homeserver as url:
        client = MatrixClient(url, "@bot:hs", access_token="secret-token")
        with pytest.raises(MatrixError) as raised:
            await client.join("!r:hs")
        await client.aclose()
    assert homeserver.tokens == ["Bearer secret-token"]
    assert (raised.value.errcode, raised.value.status) == ("M_FORBIDDEN", 403)
    assert "secret-token" not in str(raised.value)


async def test_a_dead_server_fails_at_once_for_the_adapter_to_back_off() -> None:
    url = f"http://127.0.0.1:{free_port()}"  # a port nothing listens on
    client = MatrixClient(url, "@bot:hs", access_token="secret-token")
    with pytest.raises(MatrixError) as raised:
        await client.join("!r:hs")
    await client.aclose()
    assert raised.value.errcode == "M_CONNECTION"
    assert "secret-token" not in str(raised.value)


async def test_calls_before_a_login_are_refused_like_the_server_would() -> None:
    client = MatrixClient("http://127.0.0.1:9", "@bot:hs")
    with pytest.raises(MatrixError) as raised:
        await client.join("!r:hs")
    await client.aclose()
    assert raised.value.errcode == "M_MISSING_TOKEN"


def test_a_threads_fallback_is_no_reply_and_answers_go_into_the_thread() -> None:
    fallback = {"rel_type": "m.thread", "event_id": "$root", "is_falling_back": True}
    fallback["m.in_reply_to"] = {"event_id": "$latest"}
    picked = {**fallback, "is_falling_back": False}
    assert reply_target({"m.relates_to": fallback}) is None
    assert thread_root({"m.relates_to": fallback}) == "$root"
    assert reply_target({"m.relates_to": picked}) == "$latest"  # a reply inside the thread
    assert thread_root({"m.relates_to": {"m.in_reply_to": {"event_id": "$e"}}}) is None
    content = render("ok", msgtype="m.notice", in_reply_to="$asked", thread="$root")
    assert content["m.relates_to"] == {
        "rel_type": "m.thread",
        "event_id": "$root",
        "is_falling_back": False,
        "m.in_reply_to": {"event_id": "$asked"},
    }


def test_seeded_reactions_are_those_the_buttons_stand_for() -> None:
    """✅ for Done, 💤 for Snooze 1 h, 👍 for Remind me too, once each, in the buttons'
    order; Snooze 10 min and Tomorrow have none, and another bot's data seeds nothing."""

    def button(action: Any, preset: Any = None) -> Button:
        return Button(action, ButtonData(action, "r1", None, preset).encode())

    row = (button("snooze", "10m"), button("me_too"), button("snooze", "tomorrow"))
    rows = (row, (button("done"), button("snooze", "1h"), button("done")))
    assert seeded_keys(rows) == ["👍", "✅", "💤"]
    assert seeded_keys(((button("snooze", "10m"),),)) == []
    assert seeded_keys(((Button("Done", "gm2:d:r1:"), Button("Vote", "poll:1")),)) == []


def test_an_edit_carries_the_new_content_and_mentions_no_one_again() -> None:
    content = render("Tea\n✅ Done by @Bob", msgtype="m.text", people=[Member("mx:@b:x", "Bob")])
    content["m.relates_to"] = {"m.in_reply_to": {"event_id": "$q"}}
    edit = replacement("$orig", content)
    assert edit["m.relates_to"] == {"rel_type": "m.replace", "event_id": "$orig"}
    assert edit["body"] == "* Tea\n✅ Done by @Bob"
    assert edit["m.mentions"] == {}
    new = edit["m.new_content"]
    assert new["body"] == "Tea\n✅ Done by @Bob" and "m.relates_to" not in new
    assert 'href="https://matrix.to/#/@b:x"' in new["formatted_body"]
