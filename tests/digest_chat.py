"""A real-looking day of a team's group chat, 300 messages in English and Chinese: a
launch being planned, a dinner, links read by the bot, replies, reminders. Built the
same on every run; the offline digest tests read it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from groupmate.storage.chat_window import ReminderEvent, WindowMessage

ZONE = ZoneInfo("Asia/Shanghai")
SINCE = datetime(2026, 11, 24, 9, 0, tzinfo=ZONE).astimezone(UTC)  # a Tuesday
UNTIL = SINCE + timedelta(hours=24)
SIZE = 300

NAMES = {
    "alice": "Alice",
    "bob": "Bob",
    "wangfang": "王芳",
    "lilei": "李雷",
    "carol": "Carol",
    "dev": "Dev",
    "chenjing": "陈静",
    "marco": "Marco",
    "bot": "groupmate",
}

# (key, sender, text, the key it replies to). The threads of the day, in order.
SCRIPT: tuple[tuple[str, str, str, str | None], ...] = (
    ("hello", "alice", "morning all ☀️ launch sync at 10?", None),
    ("", "bob", "morning! 10 works", "hello"),
    ("", "wangfang", "早上好，10点可以", "hello"),
    (
        "slip",
        "alice",
        "Heads up: the payment provider review might slip a week. Should we move the launch date?",
        None,
    ),
    ("", "dev", "if we move it, Thursday 3 Dec is the earliest I'd trust", "slip"),
    ("", "carol", "marketing already booked the newsletter for the 1st though", "slip"),
    ("", "lilei", "支付那边我问一下，下午给大家答复", "slip"),
    ("", "marco", "can we soft-launch without payments?", "slip"),
    ("", "alice", "@Marco not really, checkout is the whole point", None),
    ("doc", "bob", "launch checklist is here https://docs.example.com/launch-checklist", None),
    (
        "",
        "bot",
        "📄 Launch checklist — Q4\nA list of the launch's tasks and owners."
        "\n\nhttps://docs.example.com/launch-checklist",
        "doc",
    ),
    ("", "carol", "thanks Bob, I added the press kit row", "doc"),
    ("", "chenjing", "我把测试用例也加进去了", "doc"),
    ("", "dev", "staging deploy is green btw", None),
    ("", "wangfang", "设计稿更新了：https://figma.example.com/file/abc123", None),
    ("", "marco", "the new hero image is 🔥", None),
    ("pay", "lilei", "支付供应商回复了：审核下周三完成，最晚周四", None),
    ("", "alice", "ok that settles it", "pay"),
    ("agreed", "alice", "We agreed: launch moves to Thursday 3 Dec, 10:00 Beijing time.", None),
    ("", "bob", "👍 updating the checklist", "agreed"),
    ("", "carol", "I'll ask the newsletter folks to move to the 3rd", "agreed"),
    ("", "wangfang", "好的，那就定在12月3日上线", "agreed"),
    ("", "chenjing", "测试截止到12月1日，之后只修严重bug", None),
    ("", "dev", "deadline for feature freeze: Monday 30 Nov EOD", None),
    ("q1", "carol", "@Alice can you send me the final pricing table before Friday?", None),
    ("", "bob", "Alice is on a flight until tonight fwiw", "q1"),
    ("", "marco", "let's do the release notes in English and Chinese this time", None),
    ("", "lilei", "同意，中文版我来写", None),
    ("", "bob", "/remind tomorrow at 10 pricing table for Carol", None),
    ("", "bot", "⏰ I'll remind you tomorrow (Wed 25 Nov) at 10:00: pricing table for Carol", None),
    ("", "chenjing", "有人知道staging的账号密码在哪吗？", None),
    ("", "dev", "in the vault, ping me if you can't find it", None),
    ("lunch", "wangfang", "中午吃什么？", None),
    ("", "lilei", "楼下新开的拉面？", "lunch"),
    ("", "marco", "ramen 🍜 yes", "lunch"),
    ("", "carol", "I'm in", "lunch"),
    ("", "chenjing", "我也去", "lunch"),
    ("", "bob", "save me a seat", "lunch"),
    (
        "",
        "dev",
        "here's the incident writeup from last week https://blog.example.org/postmortem-nov",
        None,
    ),
    ("", "alice", "@王芳 能把落地页的中文文案发我看看吗？", None),
    ("", "wangfang", "好的 @Alice 晚上发你", None),
    ("dinner", "carol", "team dinner before launch? how about Wednesday 2 Dec", None),
    ("", "lilei", "周三晚上可以", "dinner"),
    ("", "marco", "wed works", "dinner"),
    ("", "chenjing", "周三我要加班，周二行吗？", "dinner"),
    ("", "bob", "let's keep Wednesday, we can do a second one after launch", "dinner"),
    ("booked", "carol", "decided: dinner Wed 2 Dec 19:00 at 海底捞, I'll book", "dinner"),
    ("", "dev", "the load test report https://grafana.example.net/d/launch-load", None),
    ("", "bot", "📄 I can't read that link: it needs a login.", None),
    ("", "alice", "@Dev does the load test cover the China region?", None),
    ("", "dev", "@Alice yes, Shanghai and Singapore PoPs", None),
    ("", "wangfang", "@Alice 文案发你了，在共享盘里", None),
    ("", "lilei", "明天上午十点和支付那边开会，有人一起吗？", None),
    ("", "marco", "/remind every day at 9:30 standup", None),
    ("", "carol", "anyone seen the brand guidelines pdf?", None),
    ("", "bob", "https://docs.example.com/launch-checklist has a link to it", None),
    ("", "chenjing", "回归测试明天开始，大概需要三天", None),
    ("", "alice", "thanks everyone, great progress today 🙏", None),
    ("", "dev", "night folks", None),
    ("", "wangfang", "晚安", None),
)
# People's reactions to the scripted lines (by key): emoji and how many gave it.
REACTIONS: dict[str, tuple[tuple[str, int], ...]] = {
    "agreed": (("👍", 6), ("🎉", 3)),
    "booked": (("😋", 4), ("👍", 2)),
    "pay": (("😬", 1),),
}
# Small talk between the threads: most lines of a real day.
CHATTER: tuple[tuple[str, str], ...] = (
    ("bob", "ok"), ("wangfang", "收到"), ("marco", "lol"), ("carol", "sounds good"),
    ("lilei", "好的"), ("dev", "+1"), ("chenjing", "👍"), ("alice", "nice"),
    ("marco", "brb coffee ☕"), ("wangfang", "哈哈哈"), ("bob", "agree with Carol here"),
    ("carol", "one sec"), ("lilei", "在开会，晚点看"), ("dev", "on it"),
    ("chenjing", "明白"), ("marco", "haha true"), ("wangfang", "可以可以"),
    ("bob", "makes sense"), ("carol", "👀"), ("lilei", "稍等"), ("dev", "fixed"),
    ("chenjing", "好的收到"), ("alice", "ty!"), ("marco", "same"),
)  # fmt: skip


def messages() -> list[WindowMessage]:
    """The day's 300 messages, oldest first: the script in order, chatter in between."""
    keys: dict[str, str] = {}
    out: list[WindowMessage] = []
    at = SINCE + timedelta(minutes=2)
    script = iter(SCRIPT)
    spread = SIZE // len(SCRIPT)  # one scripted line in about every `spread`
    chatter = 0
    for number in range(SIZE):
        at += timedelta(minutes=(number * 7) % 5 + 1, seconds=(number * 13) % 60)
        line = next(script, None) if number % spread == 0 else None
        if line is None:
            sender, text = CHATTER[chatter % len(CHATTER)]
            chatter += 1
            key, reply = "", None
        else:
            key, sender, text, reply = line
        message_id = f"m{number}"
        if key:
            keys[key] = message_id
        out.append(
            WindowMessage(
                sender_id=sender,
                sender_name=NAMES[sender],
                text=text,
                at=at,
                from_bot=sender == "bot",
                message_id=None if sender == "bot" else message_id,
                reply_to=keys.get(reply) if reply else None,
                reactions=REACTIONS.get(key, ()),
            )
        )
    return out


def reminders() -> list[ReminderEvent]:
    """Bob's reminder for Carol's table and Marco's standup, set that day; yesterday's
    standup reminder going off that morning."""
    day = SINCE.astimezone(ZONE)
    return [
        ReminderEvent("fired", day.replace(hour=9, minute=30).astimezone(UTC), 3,
                      "standup", "marco", "Marco", ("marco",), ("Marco",), everyone=True),
        ReminderEvent("set", day.replace(hour=15, minute=41).astimezone(UTC), 7,
                      "pricing table for Carol", "bob", "Bob", ("bob",), ("Bob",)),
        ReminderEvent("set", day.replace(hour=20, minute=5).astimezone(UTC), 8, "standup",
                      "marco", "Marco", ("marco",), ("Marco",), everyone=True),
    ]  # fmt: skip
