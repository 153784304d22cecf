"""QQ through OneBot v11: a client that connects like NapCat to the bot's real HTTP server
(reverse WebSocket, universal role) posts events and answers the bot's actions."""

from __future__ import annotations

import ipaddress
import logging
import socket
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest
from sqlalchemy import update
from websockets.exceptions import InvalidStatus

from groupmate.bot.adapters.onebot_segments import parse_cq, read, render
from groupmate.storage import Member, OutgoingMessage, SendError
from groupmate.storage.models import Reminder
from tests.conftest import eventually
from tests.http_harness import Api, Servers
from tests.onebot_client import OneBotClient, at, reply, text

ACCESS = "ob-s3cret"
BOT_A, BOT_B = 10001, 10002
GROUP, OTHER_GROUP = 100, 200
ALICE, BOB, CAROL = 111, 222, 333


async def start(servers: Servers, **sections: Any) -> Api:
    onebot = {"access_token": ACCESS, "timeout": 2}
    # Many quick retries: a reminder due while the socket is down waits for the reconnect.
    retries = {"send_attempts": 20, "retry_base": "50ms", "retry_max": "200ms"}
    return await servers.start(adapters={"onebot": onebot}, reminders=retries, **sections)


def ws_url(api: Api, path: str = "/onebot/v11/ws") -> str:
    return api.base_url.replace("http://", "ws://") + path


async def account(api: Api, self_id: int = BOT_A, **options: Any) -> OneBotClient:
    return await OneBotClient(ws_url(api), self_id, ACCESS, **options).connect()


async def fire_now(api: Api, chat_id: str, short_id: int) -> None:
    """Move one reminder's next time to now in the table; the watchdog delivers it."""
    assert api.bot.reminders is not None

    def rewind(session: Any) -> None:
        query = update(Reminder).where(Reminder.chat_id == chat_id, Reminder.short_id == short_id)
        session.execute(query.values(next_fire_at=datetime.now(UTC) - timedelta(seconds=1)))

    await api.bot.reminders.database.write(rewind)


def sent_text(action: dict[str, Any]) -> str:
    """The text of a sent message, with `at` segments as "@<qq>"."""
    shown = {"text": lambda d: d["text"], "at": lambda d: f"@{d['qq']}", "reply": lambda d: ""}
    return "".join(shown[s["type"]](s["data"]) for s in action["params"]["message"])


async def test_a_group_mention_is_answered_with_a_reply_to_it(servers: Servers) -> None:
    api = await start(servers)
    qq = await account(api)
    asked = await qq.group_message(GROUP, ALICE, [at(BOT_A), text(" /remind me tomorrow at 9 tea")])
    answer = await qq.next_action()
    assert answer["action"] == "send_group_msg"
    assert answer["params"]["group_id"] == GROUP
    first, *_ = answer["params"]["message"]
    assert first == {"type": "reply", "data": {"id": str(asked)}}
    assert "Reminder #1 set for" in sent_text(answer)
    listed = (await api.client.get(f"/v1/chats/qq:group:{GROUP}/reminders")).json()
    assert [(r["content"], r["created_by"]) for r in listed] == [("tea", f"qq:{ALICE}")]
    # Not addressed to the bot: no answer.
    await qq.group_message(GROUP, ALICE, "just chatting")
    await qq.group_message(GROUP, ALICE, [at(BOT_A), text(" /list")])
    assert "• /reminders" in sent_text(await qq.next_action())  # the command nearest "list"


async def test_a_private_message_is_answered_privately(servers: Servers) -> None:
    api = await start(servers)
    qq = await account(api)
    await qq.private_message(CAROL, "hello")
    answer = await qq.next_action()
    assert answer["action"] == "send_private_msg"
    assert answer["params"]["user_id"] == CAROL
    assert "no language model is configured" in sent_text(answer)


async def test_a_reply_to_the_bots_message_reaches_the_bot(servers: Servers) -> None:
    api = await start(servers)
    qq = await account(api)
    await qq.group_message(GROUP, ALICE, [at(BOT_A), text(" /list")])
    ours = (await qq.next_action())["message_id"]
    await qq.group_message(GROUP, ALICE, [reply(ours), text("what now?")], card="Ali")
    again = await qq.next_action()
    assert again["params"]["message"][0]["type"] == "reply"
    assert "no language model is configured" in sent_text(again)
    # A reply to somebody else's message, without a mention, is not for the bot.
    other = await qq.group_message(GROUP, BOB, "lunch?", nickname="Bob")
    await qq.group_message(GROUP, ALICE, [reply(other), text("what now?")])
    last = await qq.group_message(GROUP, ALICE, [at(BOT_A), text(" /list")])
    assert (await qq.next_action())["params"]["message"][0]["data"]["id"] == str(last)


async def test_a_reminder_mentions_with_an_at_segment(servers: Servers) -> None:
    api = await start(servers)
    qq = await account(api)
    await qq.group_message(GROUP, BOB, "hi all", nickname="Bob")  # the bot now knows Bob
    await qq.group_message(
        GROUP, ALICE, [at(BOT_A), text(" /remind "), at(BOB), text(" tomorrow at 9 slides")]
    )
    assert "Reminder #1 for @Bob (mentioning you too) set for" in sent_text(await qq.next_action())
    await fire_now(api, f"qq:group:{GROUP}", 1)
    delivered = await qq.next_action()
    assert delivered["action"] == "send_group_msg"
    assert delivered["params"]["message"] == [
        {"type": "text", "data": {"text": "⏰ Reminder for "}},
        {"type": "at", "data": {"qq": str(BOB)}},
        {"type": "text", "data": {"text": " (set by "}},
        {"type": "at", "data": {"qq": str(ALICE)}},  # who set it is always mentioned
        {"type": "text", "data": {"text": "): slides"}},
    ]
    # The reminder is the bot's message: a reply to it snoozes it, no mention needed.
    await qq.group_message(GROUP, BOB, [reply(delivered["message_id"]), text("snooze 10m")])
    assert sent_text(await qq.next_action()).startswith("💤 Snoozed #1 until")


async def test_remind_us_ats_the_member_who_asked_and_an_admins_ats_all(servers: Servers) -> None:
    api = await start(servers)
    qq = await account(api)
    ask = [at(BOT_A), text(" /remind us tomorrow at 9 stretch")]
    await qq.group_message(GROUP, BOB, ask, nickname="Bob")
    assert "mentioning only you" in sent_text(await qq.next_action())
    ask = [at(BOT_A), text(" /remind everyone tomorrow at 9 run")]
    await qq.group_message(GROUP, ALICE, ask, role="admin")
    assert "Reminder #2 for everyone" in sent_text(await qq.next_action())
    await fire_now(api, f"qq:group:{GROUP}", 1)
    assert (await qq.next_action())["params"]["message"] == [
        {"type": "text", "data": {"text": "⏰ Reminder for "}},
        {"type": "at", "data": {"qq": str(BOB)}},
        {"type": "text", "data": {"text": ": stretch"}},
    ]
    await fire_now(api, f"qq:group:{GROUP}", 2)
    assert (await qq.next_action())["params"]["message"] == [
        {"type": "at", "data": {"qq": "all"}},  # OneBot's @全体成员
        {"type": "text", "data": {"text": " "}},
        {"type": "text", "data": {"text": "⏰ Reminder for everyone (set by "}},
        {"type": "at", "data": {"qq": str(ALICE)}},
        {"type": "text", "data": {"text": "): run"}},
    ]


async def test_a_reminder_due_while_disconnected_arrives_after_the_reconnect(
    servers: Servers, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    api = await start(servers)
    qq = await account(api)
    await qq.group_message(GROUP, ALICE, [at(BOT_A), text(" /remind me tomorrow at 9 call")])
    await qq.next_action()
    await qq.close()
    await eventually(lambda: "account 10001 disconnected" in caplog.text)
    health = (await api.client.get("/healthz")).json()["adapters"]["onebot"]
    assert health["connected"] is False and not health["accounts"][str(BOT_A)]["connected"]
    await fire_now(api, f"qq:group:{GROUP}", 1)
    await eventually(lambda: "no OneBot account is connected" in caplog.text)
    back = await account(api)
    delivered = await back.next_action()
    assert sent_text(delivered) == f"⏰ Reminder for @{ALICE}: call"
    assert delivered["params"]["message"][1] == {"type": "at", "data": {"qq": str(ALICE)}}
    health = (await api.client.get("/healthz")).json()["adapters"]["onebot"]
    assert health["accounts"][str(BOT_A)]["connected"] is True
    before = health["accounts"][str(BOT_A)]["last_event"]
    heartbeat = {"post_type": "meta_event", "meta_event_type": "heartbeat", "interval": 5000}
    await back.post({**heartbeat, "status": {"online": True, "good": True}})

    async def heard() -> bool:
        health = (await api.client.get("/healthz")).json()["adapters"]["onebot"]
        return bool(health["accounts"][str(BOT_A)]["last_event"] > before)

    await eventually(heard)


async def test_a_wrong_token_or_path_is_refused_and_logged(
    servers: Servers, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    api = await start(servers)
    with pytest.raises(InvalidStatus) as refused:
        await OneBotClient(ws_url(api), BOT_A, "guess").connect()
    assert refused.value.response.status_code == 403
    assert "wrong access token" in caplog.text
    with pytest.raises(InvalidStatus):
        await OneBotClient(ws_url(api), BOT_A, None).connect()
    assert "no access token" in caplog.text
    with pytest.raises(InvalidStatus):
        await OneBotClient(ws_url(api, "/ws"), BOT_A, ACCESS).connect()
    assert "wrong path, the OneBot endpoint is /onebot/v11/ws" in caplog.text
    assert (await api.client.get("/healthz")).json()["adapters"]["onebot"]["accounts"] == {}
    # The token as a query parameter is accepted too, as the spec allows.
    qq = await account(api, query=True)
    await qq.private_message(CAROL, "/list")
    assert (await qq.next_action())["action"] == "send_private_msg"
    assert ACCESS not in caplog.text


async def test_cq_code_strings_are_parsed_and_unescaped(servers: Servers) -> None:
    api = await start(servers)
    qq = await account(api)
    message = f"[CQ:at,qq={BOT_A}] /remind me tomorrow at 9 milk &amp; bread &#91;2&#93;"
    await qq.group_message(GROUP, ALICE, message)
    assert "Reminder #1 set for" in sent_text(await qq.next_action())
    listed = (await api.client.get(f"/v1/chats/qq:group:{GROUP}/reminders")).json()
    assert [r["content"] for r in listed] == ["milk & bread [2]"]
    # An at of a member the bot has never seen names them by number.
    await qq.group_message(
        GROUP, ALICE, f"[CQ:at,qq={BOT_A}] /remind [CQ:at,qq=555] tomorrow at 9 x"
    )
    assert "Reminder #2 for @555 (mentioning you too) set for" in sent_text(await qq.next_action())
    await fire_now(api, f"qq:group:{GROUP}", 2)
    assert (await qq.next_action())["params"]["message"][1] == at(555)


def test_cq_parsing_and_rendering() -> None:
    segments = parse_cq("a&amp;#91;b [CQ:image,file=x&#44;y.jpg][CQ:at,qq=222]c[CQ:reply,id=-5]")
    assert segments == [
        {"type": "text", "data": {"text": "a&#91;b "}},
        {"type": "image", "data": {"file": "x,y.jpg"}},
        {"type": "at", "data": {"qq": "222"}},
        {"type": "text", "data": {"text": "c"}},
        {"type": "reply", "data": {"id": "-5"}},
    ]
    got = read(segments, {"1"}, lambda qq: {"222": "Bob"}[qq])
    assert (got.text, got.mentions, got.mentions_bot, got.reply_to) == (
        "a&#91;b @Bobc",
        (Member("qq:222", "Bob"),),
        False,
        "-5",
    )
    people = (Member("qq:7", "bob"), Member("qq:8", "bobby"))
    assert render("@bobby and @bob", people, ["qq:7", "qq:8", "qq:9", "tg:1"]) == [
        {"type": "at", "data": {"qq": "9"}},
        {"type": "text", "data": {"text": " "}},
        {"type": "at", "data": {"qq": "8"}},
        {"type": "text", "data": {"text": " and "}},
        {"type": "at", "data": {"qq": "7"}},
    ]


async def test_two_accounts_are_kept_apart(servers: Servers) -> None:
    api = await start(servers)
    first, second = await account(api, BOT_A), await account(api, BOT_B)
    await second.group_message(OTHER_GROUP, BOB, [at(BOT_B), text(" /remind me tomorrow at 9 b")])
    answered = await second.next_action()
    assert answered["params"]["group_id"] == OTHER_GROUP
    await first.group_message(GROUP, ALICE, [at(BOT_A), text(" /remind me tomorrow at 9 a")])
    assert (await first.next_action())["params"]["group_id"] == GROUP
    await fire_now(api, f"qq:group:{OTHER_GROUP}", 1)
    assert sent_text(await second.next_action()) == f"⏰ Reminder for @{BOB}: b"
    await fire_now(api, f"qq:group:{GROUP}", 1)
    assert sent_text(await first.next_action()) == f"⏰ Reminder for @{ALICE}: a"
    assert first.actions.empty() and second.actions.empty()
    # A group both accounts sit in: its message comes through both and is handled once;
    # when the account that saw the group last is gone, the other one delivers.
    shared = 300
    ask = [at(BOT_A), text(" /remind me tomorrow at 9 c")]
    await first.group_message(shared, ALICE, ask)
    assert "Reminder #1 set" in sent_text(await first.next_action())
    await second.group_message(shared, ALICE, ask)
    await second.private_message(CAROL, "/list")  # handled after the repeat was dropped
    assert (await second.next_action())["action"] == "send_private_msg"
    await second.close()
    await fire_now(api, f"qq:group:{shared}", 1)
    assert sent_text(await first.next_action()) == f"⏰ Reminder for @{ALICE}: c"
    assert first.actions.empty()
    health = (await api.client.get("/healthz")).json()["adapters"]["onebot"]
    assert health["connected"] is True
    assert {k: v["connected"] for k, v in health["accounts"].items()} == {
        str(BOT_A): True,
        str(BOT_B): False,
    }


async def test_without_an_access_token_this_machine_may_connect(servers: Servers) -> None:
    api = await servers.start(adapters={"onebot": {}})
    qq = await OneBotClient(ws_url(api), BOT_A, None).connect()
    await qq.private_message(CAROL, "/list")
    assert (await qq.next_action())["params"]["user_id"] == CAROL


def outward_address() -> str | None:
    """This machine's address on its network (not loopback), if it has one."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.250", 9))  # a UDP "connect" sends nothing; it picks a route
        address = str(probe.getsockname()[0])
    except OSError:
        return None
    finally:
        probe.close()
    return None if ipaddress.ip_address(address).is_loopback else address


async def test_without_an_access_token_another_machine_is_refused(
    servers: Servers, caplog: pytest.LogCaptureFixture
) -> None:
    address = outward_address()
    if address is None:
        pytest.skip("this machine has no non-loopback address to connect from")
    caplog.set_level(logging.WARNING)
    api = await servers.start(host="0.0.0.0", adapters={"onebot": {}})
    port = urlsplit(api.base_url).port
    with pytest.raises(InvalidStatus) as refused:
        await OneBotClient(f"ws://{address}:{port}/onebot/v11/ws", BOT_A, None).connect()
    assert refused.value.response.status_code == 403
    assert f"refused a connection from {address}:" in caplog.text
    assert "adapters.onebot.access_token is not set" in caplog.text
    health = (await api.client.get("/healthz")).json()
    assert health["adapters"]["onebot"]["accounts"] == {}
    # From this machine the same server is served.
    qq = await OneBotClient(ws_url(api), BOT_A, None).connect()
    await qq.private_message(CAROL, "/list")
    assert (await qq.next_action())["params"]["user_id"] == CAROL


async def test_a_member_named_by_text_is_found_in_the_group_member_list(servers: Servers) -> None:
    api = await start(servers)
    qq = await account(api)
    qq.members = [{"group_id": GROUP, "user_id": 444, "nickname": "Dave", "card": "", "role": ""}]
    await qq.group_message(GROUP, ALICE, [at(BOT_A), text(" /remind @dave tomorrow at 9 x")])
    assert "Reminder #1 for @Dave (mentioning you too) set for" in sent_text(await qq.next_action())
    await fire_now(api, f"qq:group:{GROUP}", 1)
    assert (await qq.next_action())["params"]["message"][1] == at(444)
    # Two members go by "Sam" (one by card, one by nickname): never one of them at random.
    qq.members += [
        {"group_id": GROUP, "user_id": 555, "nickname": "x", "card": "Sam", "role": ""},
        {"group_id": GROUP, "user_id": 556, "nickname": "Sam", "card": "", "role": ""},
    ]
    await qq.group_message(GROUP, ALICE, [at(BOT_A), text(" /remind @sam tomorrow at 9 x")])
    assert "Reminder #" not in sent_text(await qq.next_action())


async def test_a_long_message_goes_in_pieces_and_names_the_first(servers: Servers) -> None:
    api = await start(servers)
    qq = await account(api)
    await qq.private_message(CAROL, "/list")
    await qq.next_action()
    first, second = "a " * 1400, "b " * 800
    sent = await api.bot.outbound(OutgoingMessage(f"qq:private:{CAROL}", first + "\n\n" + second))
    pieces = [await qq.next_action(), await qq.next_action()]
    assert [sent_text(p).strip() for p in pieces] == [first.strip(), second.strip()]
    assert sent == str(pieces[0]["message_id"])
    # A chat no account has seen since the start: with one account there is no choice.
    await api.bot.outbound(OutgoingMessage("qq:group:999", "hi"))
    assert (await qq.next_action())["params"]["group_id"] == 999
    await qq.close()
    with pytest.raises(SendError, match="no OneBot account is connected"):
        await api.bot.outbound(OutgoingMessage("qq:group:999", "hi"))


async def test_a_reply_to_a_reminder_sent_before_a_restart_snoozes_it(servers: Servers) -> None:
    api = await start(servers)
    qq = await account(api)
    await qq.group_message(GROUP, ALICE, [at(BOT_A), text(" /remind me tomorrow at 9 tea")])
    await qq.next_action()
    await fire_now(api, f"qq:group:{GROUP}", 1)
    reminder = (await qq.next_action())["message_id"]
    await servers.aclose()  # the bot restarts: it has forgotten what it sent
    await qq.close()
    api = await start(servers)
    remembers = qq.sent  # QQ still knows the messages the bot sent
    qq = OneBotClient(ws_url(api), BOT_A, ACCESS)
    qq.sent = remembers
    await qq.connect()
    await qq.group_message(GROUP, ALICE, [reply(reminder), text("snooze 10m")])
    assert sent_text(await qq.next_action()).startswith("💤 Snoozed #1 until")
    # A reply to a message the bot did not send stays between the members.
    other = await qq.group_message(GROUP, BOB, "lunch?", nickname="Bob")
    await qq.group_message(GROUP, ALICE, [reply(other), text("snooze 10m")])
    await qq.private_message(CAROL, "/list")
    assert (await qq.next_action())["action"] == "send_private_msg"
