"""OneBot v11 message segments: CQ-code strings parsed into segments, segments read into
text and mentions, and the bot's own messages rendered back into segments.

Pure functions on plain data, so the adapter's socket handling stays apart from them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from groupmate.storage import Member

Segment = dict[str, Any]  # {"type": "text", "data": {"text": "hi"}}, as the spec has it

_CQ_CODE = re.compile(r"\[CQ:([A-Za-z0-9_.\-]+)((?:,[^\]]*)?)\]")
# Order matters when unescaping: "&amp;" last, so "&amp;#91;" stays the text "&#91;".
_UNESCAPES = (("&#91;", "["), ("&#93;", "]"), ("&#44;", ","), ("&amp;", "&"))


def unescape(text: str) -> str:
    """CQ escaping undone. "&#44;" is escaped only inside parameter values, but undoing it
    in plain text too is harmless: a literal "&#44;" there arrives as "&amp;#44;"."""
    for escaped, plain in _UNESCAPES:
        text = text.replace(escaped, plain)
    return text


def parse_cq(message: str) -> list[Segment]:
    """A CQ-code string ("hi [CQ:at,qq=123] there") as a segment array."""
    segments: list[Segment] = []
    position = 0
    for code in _CQ_CODE.finditer(message):
        if code.start() > position:
            segments.append(text_segment(unescape(message[position : code.start()])))
        data: dict[str, str] = {}
        for pair in code.group(2).split(",")[1:]:
            key, _, value = pair.partition("=")
            data[key] = unescape(value)
        segments.append({"type": code.group(1), "data": data})
        position = code.end()
    if position < len(message):
        segments.append(text_segment(unescape(message[position:])))
    return segments


def text_segment(text: str) -> Segment:
    return {"type": "text", "data": {"text": text}}


def at_segment(qq: str) -> Segment:
    return {"type": "at", "data": {"qq": qq}}


def reply_segment(message_id: str) -> Segment:
    return {"type": "reply", "data": {"id": message_id}}


def segments_of(message: Any) -> list[Segment]:
    """The event's `message` in either format the spec allows (array or CQ string)."""
    if isinstance(message, str):
        return parse_cq(message)
    if isinstance(message, list):
        return [
            {"type": str(s.get("type", "")), "data": s.get("data") or {}}
            for s in message
            if isinstance(s, dict)
        ]
    return []


@dataclass(frozen=True, slots=True)
class ReadMessage:
    """What the bot needs from a segment array."""

    text: str
    mentions: tuple[Member, ...]
    mentions_bot: bool
    reply_to: str | None  # the OneBot message id this one replies to


def read(
    segments: Sequence[Segment], bot_ids: Iterable[str], name_of: Callable[[str], str]
) -> ReadMessage:
    """Plain text of the text segments; `at`s of the bot's accounts are dropped from the
    text (the router sees `mentions_bot`), `at`s of others become "@name" and mentions."""
    ours = set(bot_ids)
    parts: list[str] = []
    mentions: list[Member] = []
    mentions_bot = False
    reply_to: str | None = None
    for segment in segments:
        kind, data = segment["type"], segment["data"]
        if kind == "text":
            parts.append(str(data.get("text", "")))
        elif kind == "at":
            qq = str(data.get("qq", ""))
            if qq in ours:
                mentions_bot = True
            elif qq == "all":
                parts.append("@all")
            elif qq:
                name = str(data.get("name") or "") or name_of(qq)
                parts.append(f"@{name}")
                if all(m.user_id != f"qq:{qq}" for m in mentions):
                    mentions.append(Member(f"qq:{qq}", name))
        elif kind == "reply" and reply_to is None and data.get("id") is not None:
            reply_to = str(data["id"])
    return ReadMessage("".join(parts).strip(), tuple(mentions), mentions_bot, reply_to)


def render(
    text: str, people: Sequence[Member], mentions: Sequence[str], *, everyone: bool = False
) -> list[Segment]:
    """The bot's text with each "@name" of `people` as an `at` segment; mentioned ids the
    text does not name go in front, so that nobody meant to be pinged is missed; with
    `everyone`, an `at` of all (`qq=all`, the spec's @全体成员) before them."""
    by_name = {f"@{p.name}": _qq(p.user_id) for p in people if p.name and _qq(p.user_id)}
    named: set[str] = set()
    segments: list[Segment] = []
    if by_name:
        # Longest names first, so "@bobby" is not read as "@bob" + "by".
        pattern = re.compile("|".join(re.escape(n) for n in sorted(by_name, key=len, reverse=True)))
        position = 0
        for found in pattern.finditer(text):
            if found.start() > position:
                segments.append(text_segment(text[position : found.start()]))
            qq = by_name[found.group(0)]
            segments.append(at_segment(qq))
            named.add(qq)
            position = found.end()
        text = text[position:]
    if text:
        segments.append(text_segment(text))
    missing = [qq for m in mentions if (qq := _qq(m)) and qq not in named]
    front: list[Segment] = [at_segment("all"), text_segment(" ")] if everyone else []
    for qq in dict.fromkeys(missing):
        front += [at_segment(qq), text_segment(" ")]
    return front + segments


def _qq(user_id: str) -> str:
    """The QQ number of a "qq:<number>" id; "" for ids of other platforms."""
    number = user_id.removeprefix("qq:")
    return number if number != user_id and number.isdigit() else ""
