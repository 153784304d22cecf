"""The offline digest: what a window of a chat held, without a model. Who spoke and how
much, the messages most replied and reacted to, links shared (titled where the link reader read
them), reminders set and fired, and the lines that carry decisions or dates, each quoted
with its sender and local time. A pure function of its inputs: the same window gives the
same digest, in English or Chinese."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from groupmate.function_calls.digest_lines import LineKind, line_kind
from groupmate.function_calls.language import Lang
from groupmate.function_calls.links.found import find_links
from groupmate.storage.chat_window import ReminderEvent, WindowMessage

MAX_SPEAKERS = 12
MAX_REPLIED = 5
MAX_LINKS = 10
MAX_REMINDERS = 10
MAX_LINES = 15
QUOTE_CHARS = 140
# read_url's answers start with the page's title after this mark (see handlers.read_url).
_PAGE_MARK = "📄 "
_WEEKDAYS: dict[Lang, tuple[str, ...]] = {
    "en": ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"),
    "zh": ("周一", "周二", "周三", "周四", "周五", "周六", "周日"),
}
_MARKS: dict[LineKind, str] = {"decision": "📌", "date": "📅"}
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True, slots=True)
class Clock:
    """How the digest writes times: the chat's zone, and as briefly as the window
    allows (a time alone within one day, a weekday within a week, else the date)."""

    zone: ZoneInfo
    lang: Lang
    since: datetime
    until: datetime

    def at(self, moment: datetime) -> str:
        local = moment.astimezone(self.zone)
        start, end = self.since.astimezone(self.zone), self.until.astimezone(self.zone)
        if start.date() == end.date():
            return f"{local:%H:%M}"
        if end - start < timedelta(days=6):
            return f"{_WEEKDAYS[self.lang][local.weekday()]} {local:%H:%M}"
        return f"{local:%m-%d %H:%M}"

    def full(self, moment: datetime) -> str:
        local = moment.astimezone(self.zone)
        day = _WEEKDAYS[self.lang][local.weekday()]
        if self.lang == "zh":
            return f"{local.month}月{local.day}日 {day} {local:%H:%M}"
        return f"{day} {local.day} {_MONTHS[local.month - 1]} {local:%H:%M}"

    def span(self) -> str:
        if self.lang == "zh":
            return f"{self.full(self.since)} 至 {self.full(self.until)}（{self.zone.key}）"
        return f"{self.full(self.since)} – {self.full(self.until)} ({self.zone.key})"


def quote(text: str, limit: int = QUOTE_CHARS) -> str:
    """One line of a message, in quotes, cut to `limit` characters."""
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    return f"“{flat}”"


def name_of(message: WindowMessage) -> str:
    return message.sender_name or message.sender_id


def said(message: WindowMessage, clock: Clock) -> str:
    """ "Alice, Mon 14:05: “…”": a quoted line with its sender and local time."""
    comma = "，" if clock.lang == "zh" else ", "
    colon = "：" if clock.lang == "zh" else ": "
    return f"{name_of(message)}{comma}{clock.at(message.at)}{colon}{quote(message.text)}"


def people(messages: Sequence[WindowMessage]) -> list[WindowMessage]:
    """The people's conversation among the window's messages: neither the bot's own nor
    those meant for it (a command, or a request it answered: "@bot remind me friday…")."""
    answered = {m.reply_to for m in messages if m.from_bot and m.reply_to}
    return [
        m
        for m in messages
        if not m.from_bot and not m.text.startswith("/") and m.message_id not in answered
    ]


def speakers(messages: Sequence[WindowMessage]) -> list[tuple[str, int]]:
    """Each person and how many messages they sent, most first (then by name)."""
    counts = Counter(name_of(m) for m in people(messages))
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


@dataclass(frozen=True, slots=True)
class Engaged:
    """A message people replied to or reacted to: how many replies it had."""

    message: WindowMessage
    replies: int

    @property
    def score(self) -> int:
        return self.replies + self.message.reacted


def most_engaged(messages: Sequence[WindowMessage]) -> list[Engaged]:
    """The window's messages people replied to or reacted to most (at least once), most
    replies and reactions together first, then oldest first. A reply to a message before
    the window is not counted (it can't be quoted); the bot's replies never are."""
    said = [m for m in people(messages) if m.message_id]
    by_id = {m.message_id for m in said}
    replies = Counter(m.reply_to for m in people(messages) if m.reply_to in by_id)
    found = [Engaged(m, replies[m.message_id]) for m in said]
    ranked = sorted((e for e in found if e.score), key=lambda e: (-e.score, e.message.at))
    return ranked[:MAX_REPLIED]


@dataclass(frozen=True, slots=True)
class SharedLink:
    url: str
    title: str | None
    first: WindowMessage
    times: int


def shared_links(messages: Sequence[WindowMessage]) -> list[SharedLink]:
    """Links people posted (to each other or for the bot to read), first sharing first,
    each once; its title where the link reader's answer in the window gives one."""
    titles = link_titles(messages)
    firsts: dict[str, WindowMessage] = {}
    counts: Counter[str] = Counter()
    for message in (m for m in messages if not m.from_bot):
        for url in find_links(message.text):
            firsts.setdefault(url, message)
            counts[url] += 1
    return [SharedLink(url, titles.get(url), first, counts[url]) for url, first in firsts.items()]


def link_titles(messages: Sequence[WindowMessage]) -> dict[str, str]:
    """Page titles the bot's read_url answers gave ("📄 Title\\n…\\nSource: URL"), by URL;
    an answer without its URL (a refusal: "I can't read that link") gives none."""
    titles: dict[str, str] = {}
    for message in messages:
        if not message.from_bot or not message.text.startswith(_PAGE_MARK):
            continue
        title = message.text.removeprefix(_PAGE_MARK).split("\n", 1)[0].strip()
        for url in find_links(message.text):
            if title:
                titles.setdefault(url, title)
    return titles


def marked_lines(messages: Sequence[WindowMessage]) -> list[tuple[WindowMessage, LineKind]]:
    """People's lines that carry a decision or a date, in order."""
    found: list[tuple[WindowMessage, LineKind]] = []
    # A command or request to the bot ("/remind friday …") is shown as what it did.
    for message in people(messages):
        kind = line_kind(message.text)
        if kind is not None:
            found.append((message, kind))
    return found


def most_telling(
    lines: list[tuple[WindowMessage, LineKind]], limit: int = MAX_LINES
) -> list[tuple[WindowMessage, LineKind]]:
    """At most `limit` of `marked_lines`: decisions before dates, the newest of each
    kind, shown in time order."""
    order = {id(line): n for n, line in enumerate(lines)}
    decided = [line for line in lines if line[1] == "decision"]
    dated = [line for line in lines if line[1] == "date"]
    kept = (decided[::-1] + dated[::-1])[:limit]
    return sorted(kept, key=lambda line: order[id(line)])


def reminder_line(event: ReminderEvent, clock: Clock) -> str:
    what = quote(event.content, 100)
    when = clock.at(event.at)
    others = [n for n, i in zip(event.for_names, event.for_ids, strict=True) if i != event.by_id]
    if clock.lang == "zh":
        if event.kind == "fired":
            return f"#{event.short_id} 已提醒，{when}{'（迟到）' if event.late else ''}：{what}"
        audience = "（提醒所有人）" if event.everyone else ""
        audience = audience or (f"（提醒 {'、'.join(others)}）" if others else "")
        gone = "（已取消）" if event.cancelled else ""
        return f"#{event.short_id} 由 {event.by_name} 设置，{when}：{what}{audience}{gone}"
    if event.kind == "fired":
        return f"#{event.short_id} went off {when}{' (late)' if event.late else ''}: {what}"
    audience = " (for everyone)" if event.everyone else ""
    audience = audience or (f" (for {', '.join(others)})" if others else "")
    gone = " (cancelled)" if event.cancelled else ""
    return f"#{event.short_id} set by {event.by_name}, {when}: {what}{audience}{gone}"


_WORDS: dict[Lang, dict[str, str]] = {
    "en": {
        "title": "📋 Offline digest, {span}",
        "bot": ", and {bot} to and from the bot",
        "empty": "No messages in this window.",
        "spoke": "👥 Who spoke: ",
        "others": ", and {n} others",
        "replied": "💬 Most replied to and reacted to:",
        "replies": "{n} replies",
        "reply": "1 reply",
        "counts": " ({counts})",
        "and": ", ",
        "links": "🔗 Links shared:",
        "times": " (×{n})",  # noqa: RUF001
        "reminders": "⏰ Reminders:",
        "lines": "📌 Decisions and 📅 dates:",
        "more": "… and {n} more",
        "cut": "(Only the newest {n} messages were read.)",
    },
    "zh": {
        "title": "📋 离线摘要，{span}",
        "bot": "，与机器人往来 {bot} 条",
        "empty": "这段时间没有消息。",
        "spoke": "👥 发言：",
        "others": "，另有 {n} 人",
        "replied": "💬 回复和表情最多的消息：",
        "replies": "{n} 条回复",
        "reply": "1 条回复",
        "counts": "（{counts}）",
        "and": "，",
        "links": "🔗 分享的链接：",
        "times": "（×{n}）",  # noqa: RUF001
        "reminders": "⏰ 提醒：",
        "lines": "📌 决定与 📅 日期：",
        "more": "…… 另有 {n} 条",
        "cut": "（只读了最新的 {n} 条消息。）",
    },
}


def offline_digest(
    messages: Sequence[WindowMessage],
    reminders: Sequence[ReminderEvent],
    zone: ZoneInfo,
    since: datetime,
    until: datetime,
    *,
    lang: Lang = "en",
    cut: int | None = None,
) -> str:
    """The digest of the messages and reminder events with since <= time < until (the
    caller's window; nothing outside it is shown). `cut`: the window held more messages
    than were read, the newest `cut` of them."""
    words = _WORDS[lang]
    clock = Clock(zone, lang, since, until)
    messages = [m for m in messages if since <= m.at < until]
    reminders = [r for r in reminders if since <= r.at < until]
    title = words["title"].format(span=clock.span())
    spoken = speakers(messages)
    if not messages:
        return "\n".join([title, words["empty"], *_reminders(reminders, clock, words)])
    total = sum(count for _, count in spoken)
    head = _counted(lang, total, len(spoken))
    bot = len(messages) - total
    head += words["bot"].format(bot=bot) if bot else ""
    out = [f"{title}\n{head}{'。' if lang == 'zh' else '.'}"]
    if cut is not None:
        out.append(words["cut"].format(n=cut))
    if spoken:
        listed = ("、" if lang == "zh" else ", ").join(
            f"{name} {n}" for name, n in spoken[:MAX_SPEAKERS]
        )
        rest = len(spoken) - MAX_SPEAKERS
        out.append(words["spoke"] + listed + (words["others"].format(n=rest) if rest > 0 else ""))
    engaged = most_engaged(messages)
    if engaged:
        out.append(words["replied"])
        out += [f"• {said(e.message, clock)}{_engagement(e, words)}" for e in engaged]
    out += _links(shared_links(messages), clock, words)
    out += _reminders(reminders, clock, words)
    found = marked_lines(messages)
    lines = [f"{_MARKS[kind]} {said(m, clock)}" for m, kind in most_telling(found)]
    if len(found) > len(lines):
        lines.append(words["more"].format(n=len(found) - len(lines)))
    out += _listed(words["lines"], lines, words, limit=len(lines), bullet=False)
    return "\n".join(out)


def _engagement(engaged: Engaged, words: dict[str, str]) -> str:
    """ " (2 replies, 👍 3 🎉 1)": the replies, then each emoji and how many gave it."""
    n = engaged.replies
    parts = [words["reply"] if n == 1 else words["replies"].format(n=n)] if n else []
    if engaged.message.reactions:
        parts.append(" ".join(f"{emoji} {count}" for emoji, count in engaged.message.reactions))
    return words["counts"].format(counts=words["and"].join(parts))


def _reminders(
    reminders: Sequence[ReminderEvent], clock: Clock, words: dict[str, str]
) -> list[str]:
    return _listed(words["reminders"], [reminder_line(r, clock) for r in reminders], words)


def _counted(lang: Lang, messages: int, speakers: int) -> str:
    if lang == "zh":
        return f"{speakers} 人发了 {messages} 条消息"
    said = f"{messages} message{'' if messages == 1 else 's'}"
    return f"{said} from {speakers} {'person' if speakers == 1 else 'people'}"


def _links(links: list[SharedLink], clock: Clock, words: dict[str, str]) -> list[str]:
    lines = []
    for link in links:
        title = f"{quote(link.title, 80)} " if link.title else ""
        times = words["times"].format(n=link.times) if link.times > 1 else ""
        when = clock.at(link.first.at)
        by = (
            f"（{name_of(link.first)}，{when}）"
            if clock.lang == "zh"
            else (f" ({name_of(link.first)}, {when})")
        )
        lines.append(f"{title}{link.url}{times}{by}")
    return _listed(words["links"], lines, words, limit=MAX_LINKS)


def _listed(
    heading: str,
    lines: list[str],
    words: dict[str, str],
    *,
    limit: int = MAX_REMINDERS,
    bullet: bool = True,
) -> list[str]:
    """A section: its heading and up to `limit` lines (the first), or nothing at all."""
    if not lines:
        return []
    shown = [f"• {line}" if bullet else line for line in lines[:limit]]
    if len(lines) > limit:
        shown.append(words["more"].format(n=len(lines) - limit))
    return [heading, *shown]
