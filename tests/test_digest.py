"""The offline digest, case by case in English and Chinese, and the digest of a
real-looking 300-message day (printed: `pytest -s tests/test_digest.py`)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from groupmate.function_calls.digest_core import MAX_LINES, offline_digest
from groupmate.function_calls.digest_lines import is_question, line_kind, mentions
from groupmate.function_calls.language import Lang
from groupmate.storage.chat_window import ReminderEvent, WindowMessage
from tests import digest_chat

SHANGHAI = ZoneInfo("Asia/Shanghai")
SINCE = datetime(2026, 11, 24, 1, 0, tzinfo=UTC)  # 09:00 in Shanghai, a Tuesday
UNTIL = SINCE + timedelta(hours=12)


def msg(
    minute: int,
    sender: str,
    text: str,
    *,
    mid: str | None = None,
    reply: str | None = None,
    bot: bool = False,
) -> WindowMessage:
    name = {"alice": "Alice", "bob": "Bob", "wf": "王芳", "bot": "groupmate"}.get(sender, sender)
    at = SINCE + timedelta(minutes=minute)
    return WindowMessage(sender, name, text, at, bot, mid, reply)


def digest(
    messages: list[WindowMessage], lang: Lang = "en", reminders: list[ReminderEvent] | None = None
) -> str:
    return offline_digest(messages, reminders or [], SHANGHAI, SINCE, UNTIL, lang=lang)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("We agreed to ship on the 3rd", "decision"),
        ("ok, we decided: Postgres it is", "decision"),
        ("let's use the blue logo", "decision"),
        ("Lets meet at the lake", "decision"),
        ("the deadline is end of month", "decision"),
        ("the report is due by Monday", "decision"),
        ("我们决定用 PostgreSQL", "decision"),
        ("报名截止到周五", "decision"),
        ("说好了周六去爬山", "decision"),
        ("那就这样吧", "decision"),
        ("see you on Thursday", "date"),
        ("moved to Dec 3", "date"),
        ("how about 3 December", "date"),
        ("2026-12-03 works for me", "date"),
        ("tomorrow?", "date"),
        ("next week maybe", "date"),
        ("下周三开会", "date"),
        ("12月3日上线", "date"),
        ("星期五见", "date"),
        ("明天再说", "date"),
        ("lol", None),
        ("好的", None),
        ("I'm so tired today", None),
        ("今天好累", None),
        ("Monique is here", None),
    ],
)
def test_a_line_carries_a_decision_or_a_date(text: str, kind: str | None) -> None:
    assert line_kind(text) == kind


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("can you check?", True),
        ("能帮我看看吗", True),
        ("谁有空？", True),
        ("你们吃了没有", True),
        ("ok", False),
        ("好的。", False),
    ],
)
def test_a_question_in_either_language(text: str, asks: bool) -> None:
    assert is_question(text) is asks


@pytest.mark.parametrize(
    ("text", "user_id", "name", "named"),
    [
        ("@Alice can you look", "u1", "Alice", True),
        ("alice, ping me", "u1", "Alice", True),
        ("ask Alice Chen", "u1", "Alice Chen", True),
        ("ask Alice about it", "u1", "Alice Chen", True),
        ("@u1 hi", "u1", "", True),
        ("Malice aforethought", "u1", "Alice", False),
        ("@Anna can you look", "u3", "Ann", False),  # another handle that starts alike
        ("I will do it tonight", "u4", "Will Chen", False),  # a word, not the name
        ("Will, can you do it?", "u4", "Will Chen", True),
        ("@王芳 看一下", "wf", "王芳", True),
        ("王芳说得对", "wf", "王芳", True),
        ("芳草萋萋", "wf", "王芳", False),
    ],
)
def test_a_mention_by_handle_or_name(text: str, user_id: str, name: str, named: bool) -> None:
    assert mentions(text, user_id, name) is named


def test_who_spoke_and_how_much_leaving_the_bot_out() -> None:
    text = digest(
        [
            msg(1, "bob", "hi"),
            msg(2, "alice", "hi"),
            msg(3, "bob", "how are you"),
            msg(4, "bot", "⏰ I'll remind you", bot=True),
            msg(5, "wf", "早"),
        ]
    )
    assert "4 messages from 3 people, and 1 to and from the bot." in text
    assert "👥 Who spoke: Bob 2, Alice 1, 王芳 1" in text  # most first, then by name
    zh = digest([msg(1, "wf", "早"), msg(2, "wf", "在吗")], "zh")
    assert "1 人发了 2 条消息。" in zh and "👥 发言：王芳 2" in zh


def test_the_messages_most_replied_to() -> None:
    text = digest(
        [
            msg(1, "alice", "Should we move the launch?", mid="a"),
            msg(2, "bob", "yes", mid="b", reply="a"),
            msg(3, "wf", "同意", mid="c", reply="a"),
            msg(4, "bob", "@groupmate is it raining?", mid="q"),  # to the bot: not counted
            msg(4, "bot", "(an answer)", reply="q", bot=True),  # the bot's: not counted
            msg(5, "alice", "ok", mid="d", reply="b"),
            msg(6, "bob", "that old thing", mid="e", reply="before-the-window"),
        ]
    )
    replied = text.split("💬 Most replied to and reacted to:\n")[1].splitlines()
    assert replied[:3] == [
        "• Alice, 09:01: “Should we move the launch?” (2 replies)",
        "• Bob, 09:02: “yes” (1 reply)",
        "📌 Decisions and 📅 dates:",  # "that old thing" replied to a message before it
    ]
    zh = digest([msg(1, "wf", "吃什么？", mid="a"), msg(2, "bob", "面", reply="a")], "zh")
    assert "• 王芳，09:01：“吃什么？”（1 条回复）" in zh
    assert "Most replied" not in digest([msg(1, "bob", "no replies today")])


def test_reactions_count_with_replies() -> None:
    """A message with reactions and no reply is among them; replies and reactions add up
    to its place; each emoji is shown with how many gave it."""

    def reacted(message: WindowMessage, *counts: tuple[str, int]) -> WindowMessage:
        return dataclasses.replace(message, reactions=counts)

    text = digest(
        [
            reacted(msg(1, "alice", "Launch moved to Friday", mid="a"), ("👍", 3), ("🎉", 1)),
            msg(2, "bob", "which time?", mid="b"),
            msg(3, "wf", "10点", mid="c", reply="b"),
            reacted(msg(4, "alice", "10 am", mid="d", reply="b"), ("👍", 1)),
            msg(5, "bob", "ok", mid="e"),
        ]
    )
    listed = text.split("💬 Most replied to and reacted to:\n")[1].splitlines()
    assert listed[:3] == [
        "• Alice, 09:01: “Launch moved to Friday” (👍 3 🎉 1)",
        "• Bob, 09:02: “which time?” (2 replies)",
        "• Alice, 09:04: “10 am” (👍 1)",
    ]
    zh = digest(
        [reacted(msg(1, "wf", "周五上线", mid="a"), ("👍", 2)), msg(2, "bob", "好", reply="a")],
        "zh",
    )
    assert "💬 回复和表情最多的消息：\n• 王芳，09:01：“周五上线”（1 条回复，👍 2）" in zh


def test_links_with_the_titles_the_link_reader_gave() -> None:
    text = digest(
        [
            msg(1, "bob", "plan: https://docs.example.com/plan", mid="a"),
            msg(2, "bot", "📄 The Plan\nIts points.\n\nhttps://docs.example.com/plan", bot=True),
            msg(3, "alice", "and https://x.example.org/p?q=1."),
            msg(4, "bot", "📄 I can't read that link: it needs a login.", bot=True),
            msg(5, "wf", "再发一次 https://docs.example.com/plan"),
        ]
    )
    links = text.split("🔗 Links shared:\n")[1].splitlines()
    assert links[0] == "• “The Plan” https://docs.example.com/plan (×2) (Bob, 09:01)"  # noqa: RUF001
    assert links[1] == "• https://x.example.org/p?q=1 (Alice, 09:03)"
    zh = digest([msg(1, "wf", "看这个 https://a.example.cn/x")], "zh")
    assert "🔗 分享的链接：\n• https://a.example.cn/x（王芳，09:01）" in zh


def test_reminders_set_and_fired_in_the_window() -> None:
    at = SINCE + timedelta(hours=1)
    events = [
        ReminderEvent("fired", at, 2, "standup", "bob", "Bob", ("bob",), ("Bob",), late=True),
        ReminderEvent("set", at + timedelta(minutes=5), 5, "send slides", "bob", "Bob",
                      ("bob", "wf"), ("Bob", "王芳")),
        ReminderEvent("set", at - timedelta(days=1), 1, "old", "bob", "Bob"),  # before it
    ]  # fmt: skip
    text = digest([msg(1, "bob", "hi")], reminders=events)
    assert "⏰ Reminders:\n• #2 went off 10:00 (late): “standup”\n" in text
    assert "• #5 set by Bob, 10:05: “send slides” (for 王芳)" in text
    assert "old" not in text
    zh = digest([], "zh", reminders=events)
    assert zh.startswith("📋 离线摘要，") and "\n这段时间没有消息。\n⏰ 提醒：\n" in zh
    assert "• #2 已提醒，10:00（迟到）：“standup”" in zh
    assert "• #5 由 Bob 设置，10:05：“send slides”（提醒 王芳）" in zh


def test_decisions_and_dates_quoted_with_sender_and_local_time() -> None:
    text = digest(
        [
            msg(0, "alice", "We agreed: launch on Thursday 3 Dec"),
            msg(61, "wf", "好的，那就定在12月3日上线"),
            msg(62, "bob", "dinner on Wednesday?"),
            msg(63, "bob", "/remind friday at 9 slides"),  # shown as the reminder it set
            msg(64, "bot", "⏰ Reminder set for Friday", bot=True),
            msg(65, "alice", "lol"),
        ]
    )
    lines = text.split("📌 Decisions and 📅 dates:\n")[1].splitlines()
    assert lines == [
        "📌 Alice, 09:00: “We agreed: launch on Thursday 3 Dec”",
        "📌 王芳, 10:01: “好的，那就定在12月3日上线”",
        "📅 Bob, 10:02: “dinner on Wednesday?”",
    ]
    zh = digest([msg(0, "wf", "报名截止到周五")], "zh")
    assert "📌 决定与 📅 日期：\n📌 王芳，09:00：“报名截止到周五”" in zh


def test_many_decisions_keep_the_newest_and_say_how_many_more() -> None:
    said = [msg(n, "bob", f"let's do step {n}") for n in range(MAX_LINES + 4)]
    said.append(msg(30, "alice", "see you Friday"))
    text = digest(said)
    assert "let's do step 3”" not in text and "let's do step 4”" in text
    assert "see you Friday" not in text  # decisions first
    assert text.endswith("… and 5 more")


def test_only_the_window_in_the_chats_zone() -> None:
    before = msg(-5, "bob", "we agreed on something earlier")
    after = msg(12 * 60, "bob", "let's talk later")
    inside = msg(30, "bob", "hello")
    text = digest([before, inside, after])
    assert "\n1 message from 1 person.\n" in text
    assert "earlier" not in text and "later" not in text
    assert text.startswith("📋 Offline digest, Tue 24 Nov 09:00 – Tue 24 Nov 21:00 (Asia/Shanghai)")


def test_a_longer_window_writes_weekdays_then_dates() -> None:
    week = offline_digest(
        [msg(60 * 30, "bob", "let's go")], [], SHANGHAI, SINCE, SINCE + timedelta(days=3)
    )
    assert "📌 Bob, Wed 15:00: “let's go”" in week
    month = offline_digest(
        [msg(60 * 30, "wf", "决定了")], [], SHANGHAI, SINCE, SINCE + timedelta(days=30), lang="zh"
    )
    assert "📌 王芳，11-25 15:00：“决定了”" in month


def test_an_empty_window_says_so() -> None:
    assert digest([]).endswith("\nNo messages in this window.")
    assert digest([], "zh").endswith("\n这段时间没有消息。")


def test_the_300_message_day() -> None:
    day = digest_chat.messages()
    assert len(day) == digest_chat.SIZE == 300
    text = offline_digest(
        day, digest_chat.reminders(), digest_chat.ZONE, digest_chat.SINCE, digest_chat.UNTIL
    )
    print(f"\n{text}\n")
    again = offline_digest(
        list(day), digest_chat.reminders(), digest_chat.ZONE, digest_chat.SINCE, digest_chat.UNTIL
    )
    assert text == again  # deterministic
    # The three the bot answered were meant for it: with its answers, not the talk.
    assert "294 messages from 8 people, and 6 to and from the bot." in text
    assert "• 王芳, Tue 18:21: “中午吃什么？” (5 replies)" in text
    agreed = "• Alice, Tue 14:17: “We agreed: launch moves to Thursday 3 Dec, 10:00 Beijing time.”"
    assert f"{agreed} (3 replies, 👍 6 🎉 3)" in text  # first: 12 replies and reactions
    assert text.index(agreed) < text.index("“中午吃什么？”")
    assert "• “Launch checklist — Q4” https://docs.example.com/launch-checklist (×2)" in text  # noqa: RUF001
    assert "• https://grafana.example.net/d/launch-load (Dev, Tue 22:44)" in text  # no title
    assert "• #7 set by Bob, Tue 15:41: “pricing table for Carol”" in text
    assert "📌 Alice, Tue 14:17: “We agreed: launch moves to Thursday 3 Dec" in text
    assert "📌 陈静, Tue 15:27: “测试截止到12月1日，之后只修严重bug”" in text
    assert "📌 Carol, Tue 22:26: “decided: dinner Wed 2 Dec 19:00 at 海底捞, I'll book”" in text
    zh = offline_digest(
        day, digest_chat.reminders(), digest_chat.ZONE, digest_chat.SINCE, digest_chat.UNTIL,
        lang="zh",
    )  # fmt: skip
    print(f"{zh}\n")
    assert zh.startswith("📋 离线摘要，11月24日 周二 09:00 至 11月25日 周三 09:00（Asia/Shanghai）")
    assert "📌 李雷，周二 16:54：“同意，中文版我来写”" in zh
