"""Finding what was said: /find (offline), the chat_search tool through the stub model,
GET /v1/chats/{id}/search, and /forget me and /forget all, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from groupmate.testing.stub_llm import StubLLM, calls, text
from tests.conftest import FakeClock
from tests.http_harness import Api, Servers, llm_section

ALICE = {"sender_id": "u-alice", "sender_name": "Alice"}
BOB = {"sender_id": "u-bob", "sender_name": "Bob"}
CAROL = {"sender_id": "u-carol", "sender_name": "Carol"}
ADMIN = {"sender_id": "u-dana", "sender_name": "Dana", "sender_is_admin": True}
SAID = [
    (ALICE, "We agreed the launch date is March 3"),
    (BOB, "上次说的预算是多少？"),
    (ALICE, "预算大概五万块"),
    (BOB, "Launch party after the launch, then"),
    (CAROL, "the venue is booked"),
]


async def start(
    servers: Servers, database_url: str, clock: FakeClock | None = None, **sections: Any
) -> Api:
    api = await servers.start(clock, storage={"url": database_url}, **sections)
    for who, words in SAID:
        await api.say(words, **who)  # no mention: logged, not answered
    await api.say("launch budget 预算 of the other chat", chat_id="g2", **BOB)
    return api


async def find(api: Api, words: str, **who: Any) -> str:
    (reply,) = await api.say(f"/find {words}", **(who or ALICE))
    found: str = reply["text"]
    return found


def lines(reply: str) -> list[str]:
    return [line for line in reply.splitlines() if line.startswith("• ")]


async def test_find_words_chinese_phrases_senders_and_pages(
    servers: Servers, database_url: str
) -> None:
    api = await start(servers, database_url)
    launch = await find(api, "launch")
    assert len(lines(launch)) == 2
    # Newest first, with sender, local time and the match marked; never the other chat.
    assert lines(launch)[0].startswith("• Bob · ")
    assert lines(launch)[0].endswith(": «Launch» party after the «launch», then")
    assert lines(launch)[1].endswith(": We agreed the «launch» date is March 3")
    assert "other chat" not in launch and "More:" not in launch
    # A two-character Chinese word inside a sentence, in Chinese.
    budget = await find(api, "预算")
    assert budget.startswith("🔎 “预算”，最新的在前")
    # /查找 is /find, with or without a space after it.
    for written in ("/查找 预算", "/查找预算"):
        (found,) = await api.say(written, **ALICE)
        assert found["text"] == budget, written
    assert [line.split(": ", 1)[1] for line in lines(budget)] == [
        "«预算»大概五万块",
        "上次说的«预算»是多少？",
    ]
    # All words, any order; a quoted phrase keeps its words together.
    assert len(lines(await find(api, "date launch"))) == 1
    assert len(lines(await find(api, '"launch date"'))) == 1
    assert "Nothing in this chat matches" in await find(api, '"date launch"')
    # from:@name narrows to one sender (their name, its first word, or their id).
    by_bob = await find(api, "launch from:@bob")
    assert [line.split(" · ")[0] for line in lines(by_bob)] == ["• Bob"]
    (by_id,) = lines(await find(api, "from:u-carol"))
    assert by_id.startswith("• Carol · ") and by_id.endswith(": the venue is booked")
    assert "Nothing in this chat matches “venue” from alice" in await find(api, "venue from:alice")
    # Pages of five, and how to see more.
    for n in range(6):
        await api.say(f"launch chatter {n}", **CAROL)
    first = await find(api, "launch")
    assert len(lines(first)) == 5 and first.endswith("More: /find launch 2")
    second = await find(api, "launch 2")
    assert "(page 2)" in second and "More:" not in second
    assert [line.split(": ", 1)[1] for line in lines(second)] == [
        "«launch» chatter 0",
        "«Launch» party after the «launch», then",
        "We agreed the «launch» date is March 3",
    ]
    assert (await find(api, "launch 3")).startswith("No page 3: fewer messages match “launch”.")
    # A number of 3 digits, or quoted, is part of what is sought, not a page.
    await api.say("meet in room 101 at noon, room 12 is taken", **CAROL)
    assert lines(await find(api, "room 101"))[0].endswith(
        "in «room» «101» at noon, «room» 12 is taken"
    )
    assert "«room 12»" in await find(api, '"room 12"')
    # Words are words, not patterns.
    await api.say("we are 100% sure, 1000 users", **CAROL)
    assert len(lines(await find(api, "100%"))) == 1
    assert "Nothing in this chat matches “10_0”" in await find(api, "10_0")
    # The search's own message is not one of its results, mention and all.
    (mentioned,) = await api.say("@groupmate /find venue", **ALICE)
    assert len(lines(mentioned["text"])) == 1
    # The other chat finds only its own.
    (other,) = await api.say("/find launch", chat_id="g2", **BOB)
    assert len(lines(other["text"])) == 1 and "other chat" in other["text"]
    usage = await find(api, "from:")
    assert usage.startswith("🔎 Nothing") or usage.startswith("Usage")


async def test_search_endpoint(servers: Servers, database_url: str) -> None:
    api = await start(servers, database_url)
    answer = await api.client.get("/v1/chats/g1/search", params={"q": "launch", "limit": 1})
    assert answer.status_code == 200, answer.text
    (hit,) = answer.json()
    assert set(hit) == {"message_id", "sender_id", "sender_name", "text", "at"}
    assert (hit["sender_id"], hit["text"]) == ("u-bob", "Launch party after the launch, then")
    older = await api.client.get(
        "/v1/chats/g1/search", params={"q": "launch", "before": hit["message_id"]}
    )
    assert [h["text"] for h in older.json()] == ["We agreed the launch date is March 3"]
    by_time = await api.client.get(
        "/v1/chats/g1/search", params={"q": "launch", "before": hit["at"]}
    )
    assert [h["text"] for h in by_time.json()] == ["We agreed the launch date is March 3"]
    zh = await api.client.get("/v1/chats/g1/search", params={"q": "预算 from:@alice"})
    assert [h["text"] for h in zh.json()] == ["预算大概五万块"]
    other = await api.client.get("/v1/chats/g2/search", params={"q": "launch"})
    assert [h["text"] for h in other.json()] == ["launch budget 预算 of the other chat"]
    unknown = await api.client.get("/v1/chats/g1/search", params={"q": "x", "before": "nope"})
    assert unknown.status_code == 404
    bare = await api.client.get(api.base_url + "/v1/chats/g1/search", params={"q": "launch"})
    assert bare.status_code == 200  # the client sends the token; without it:
    import httpx

    async with httpx.AsyncClient(base_url=api.base_url) as anonymous:
        refused = await anonymous.get("/v1/chats/g1/search", params={"q": "launch"})
    assert refused.status_code == 401


async def test_forget_me_asks_then_deletes_only_the_senders_own(
    servers: Servers, database_url: str
) -> None:
    api = await start(servers, database_url)
    (asked,) = await api.say("/forget me", **BOB)
    # Bob's two messages and his command: everything he said here.
    assert "deletes the 3 messages you wrote in this chat" in asked["text"]
    assert "Reply yes within 2 minutes" in asked["text"]
    assert len(lines(await find(api, "launch"))) == 2  # nothing deleted yet
    # Someone else's yes is not Bob's; a yes without a question is not for the bot.
    assert await api.say("yes", mentions_bot=False, **ALICE) == []
    (done,) = await api.say("yes", mentions_bot=False, **BOB)
    assert done["text"].startswith("🗑️ Deleted your 4 message(s) in this chat (and my 1 ")
    launch = await find(api, "launch")
    assert [line.split(" · ")[0] for line in lines(launch)] == ["• Alice"]
    assert [line.split(" · ")[0] for line in lines(await find(api, "预算"))] == ["• Alice"]
    # Only this chat: Bob's message in the other chat stays.
    (other,) = await api.say("/find launch", chat_id="g2", **BOB)
    assert len(lines(other["text"])) == 1
    # The token can't be written instead of the yes.
    (forged,) = await api.say("/forget me_or_all=me confirmation=abc", **ALICE)
    assert forged["text"].startswith("Nothing was deleted")
    assert len(lines(await find(api, "launch"))) == 1
    entries = (await api.client.get("/v1/audit", params={"chat_id": "g1"})).json()["entries"]
    forgets = [e for e in entries if e["tool"] == "chat_forget"]
    assert [(e["sender_id"], e["outcome"]) for e in forgets] == [
        ("u-alice", "refused"),
        ("u-bob", "ok"),
    ]


async def test_a_question_lapses_at_anything_else_the_sender_says(
    servers: Servers, tmp_path: Path
) -> None:
    api = await start(servers, f"sqlite:///{tmp_path / 'lapse.db'}")
    alice = [{"user_id": "u-alice", "name": "Alice"}]
    cases: list[tuple[str, dict[str, Any]]] = [
        ("lunch?", {}),  # anything else: the question lapses
        ("ok", {"reply_to_message_id": "m-alice-1"}),  # "ok" to someone else
        ("ok", {"mentions": alice}),
    ]
    for words, fields in cases:
        (asked,) = await api.say("/forget me", **BOB)
        assert "Reply yes within 2 minutes" in asked["text"]
        await api.say(words, mentions_bot=False, **BOB, **fields)
        assert await api.say("yes", mentions_bot=False, **BOB) == []  # nothing waits now
        assert len(lines(await find(api, "launch"))) == 2  # nothing deleted


async def test_a_late_yes_deletes_nothing(servers: Servers, tmp_path: Path) -> None:
    clock = FakeClock()
    api = await start(servers, f"sqlite:///{tmp_path / 'late.db'}", clock)
    (asked,) = await api.say("/forget me", **BOB)
    assert "Reply yes within 2 minutes" in asked["text"]
    clock.advance(timedelta(minutes=2, seconds=1))
    assert await api.say("yes", mentions_bot=False, **BOB) == []  # not for the bot now
    (late,) = await api.say("@groupmate yes", **BOB)  # to the bot: no question waits
    assert "Deleted" not in late["text"]
    assert [line.split(" · ")[0] for line in lines(await find(api, "launch"))] == [
        "• Bob",
        "• Alice",
    ]


async def test_forget_all_is_for_chat_admins(servers: Servers, database_url: str) -> None:
    api = await start(servers, database_url)
    (refused,) = await api.say("/forget all", **ALICE)
    assert refused["text"].startswith("Only a chat admin can clear this chat's log")
    assert await api.say("yes", mentions_bot=False, **ALICE) == []
    (asked,) = await api.say("/forget all", **ADMIN)
    assert "deletes all " in asked["text"] and "Reply yes" in asked["text"]
    (done,) = await api.say("是", mentions_bot=False, **ADMIN)
    assert done["text"].startswith("🗑️ 已清空这个群的记录")
    assert "Nothing in this chat matches" in await find(api, "launch")
    (other,) = await api.say("/find launch", chat_id="g2", **BOB)
    assert len(lines(other["text"])) == 1
    entries = (await api.client.get("/v1/audit", params={"chat_id": "g1"})).json()["entries"]
    assert ("u-dana", "ok") in {(e["sender_id"], e["outcome"]) for e in entries}


async def test_chat_search_answers_with_citations(servers: Servers, stub: StubLLM) -> None:
    api = await start(servers, f"sqlite:///{servers.tmp_path / 'memory.db'}", llm=llm_section(stub))
    stub.script(
        calls(("chat_search", {"query": "launch"})),
        text("We said the launch is on March 3 [2]."),
    )
    (reply,) = await api.say("@groupmate when did we say the launch is?", **CAROL)
    answer, _, sources = reply["text"].partition("\n\n")
    assert answer == "We said the launch is on March 3 [2]."
    assert sources.startswith("[2] Alice, ") and sources.endswith(
        ": We agreed the launch date is March 3"
    )
    # The model was given this chat's matches only, never the question itself.
    given = stub.requests[1]["messages"][-1]["content"]
    assert "[1] Bob" in given and "[2] Alice" in given
    assert "other chat" not in given and "when did we say" not in given.split("Chat messages")[1]
    # Nothing matches: the bot says so itself, and the model is not asked to answer.
    stub.reset()
    stub.script(calls(("chat_search", {"query": "spreadsheet"})))
    (nothing,) = await api.say("@groupmate what did we say about the spreadsheet?", **CAROL)
    assert nothing["text"] == (
        "🔎 I found nothing in this chat about “spreadsheet”, so I can't say."
    )
    assert len(stub.requests) == 1
    # In Chinese.
    stub.reset()
    stub.script(calls(("chat_search", {"query": "预算"})), text("预算大概五万块 [1]。"))
    (zh,) = await api.say("@groupmate 上次说的预算是多少？", **CAROL)
    assert zh["text"].startswith("预算大概五万块 [1]。\n\n[1] Alice, ")
    assert "月" in zh["text"].splitlines()[2]


async def test_the_family_switches_off(servers: Servers, tmp_path: Path) -> None:
    api = await start(servers, f"sqlite:///{tmp_path / 'off.db'}", builtins={"memory": False})
    assert await api.say("/find launch", **ALICE) == []  # not this bot's command now
    (private,) = await api.say("/forget me", chat_id="p1", chat_type="private", **ALICE)
    assert "Deleted" not in private["text"] and "Reply yes" not in private["text"]
