"""Matrix message bodies both ways: pills and m.mentions out, plain text and mentioned
users in. Pure functions, so the wire format is tested without a homeserver."""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

from groupmate.bot.adapters import CHAT_PREFIXES
from groupmate.bot.messages import IncomingReaction
from groupmate.bot.presses import REACTION_PRESSES, ButtonData
from groupmate.function_calls import ChatType
from groupmate.storage import Button, Member

PREFIX = CHAT_PREFIXES["matrix"]
_PILL = re.compile(r"""href=["']https://matrix\.to/#/([^"'?/]+)""")


def wire_id(user_id: str) -> str:
    """ "mx:@alice:example.org" as the bot knows it -> "@alice:example.org"."""
    return user_id.removeprefix(PREFIX)


def transaction_id(key: str) -> str:
    """A txnId from a stable key: the homeserver answers a repeated PUT with the event it
    made the first time, so a resend after a crash is not a second message."""
    return "gm-" + hashlib.sha256(key.encode()).hexdigest()[:40]


def pill(user_id: str, name: str) -> str:
    return f'<a href="https://matrix.to/#/{html.escape(user_id)}">{html.escape(name)}</a>'


def render(
    text: str,
    *,
    msgtype: str,
    people: Sequence[Member] = (),
    mentions: Iterable[str] = (),
    in_reply_to: str | None = None,
    thread: str | None = None,
    everyone: bool = False,
) -> dict[str, Any]:
    """The content of an m.room.message: the text as the body, an HTML copy with each
    "@name" of `people` as a pill, and m.mentions so clients notify exactly those (and
    with `everyone` the whole room: `"room": true`, the spec's @room mention, which
    notifies where the bot's power level allows room notifications)."""
    formatted = html.escape(text)
    named = {html.escape(f"@{p.name}"): p for p in people if p.name}
    if named:
        # One pass, longest names first: "@ann" never eats the start of "@anna", and a
        # pill already made is never searched again.
        shown = sorted(named, key=len, reverse=True)
        pattern = re.compile("|".join(re.escape(name) for name in shown) + r"(?![\w])")
        formatted = pattern.sub(
            lambda m: pill(wire_id(named[m[0]].user_id), f"@{named[m[0]].name}"), formatted
        )
    users = list(dict.fromkeys(wire_id(u) for u in [*mentions, *(p.user_id for p in people)]))
    content: dict[str, Any] = {
        "msgtype": msgtype,
        "body": text,
        "format": "org.matrix.custom.html",
        "formatted_body": formatted.replace("\n", "<br>"),
        "m.mentions": {"user_ids": users} | ({"room": True} if everyone else {}),
    }
    if thread:  # in the thread, answering `in_reply_to` there
        content["m.relates_to"] = {
            "rel_type": "m.thread",
            "event_id": thread,
            "is_falling_back": in_reply_to is None,
            "m.in_reply_to": {"event_id": in_reply_to or thread},
        }
    elif in_reply_to:
        content["m.relates_to"] = {"m.in_reply_to": {"event_id": in_reply_to}}
    return content


def plain_body(content: dict[str, Any]) -> str:
    """The message text without the quoted fallback older clients put above a reply."""
    body = str(content.get("body", ""))
    if _in_reply_to(content) and body.startswith("> "):
        lines = body.split("\n")
        while lines and lines[0].startswith(">"):
            lines.pop(0)
        body = "\n".join(lines).lstrip("\n")
    return body


def _in_reply_to(content: dict[str, Any]) -> str | None:
    relates = content.get("m.relates_to")
    if not isinstance(relates, dict):
        return None
    reply = relates.get("m.in_reply_to")
    event_id = reply.get("event_id") if isinstance(reply, dict) else None
    return event_id if isinstance(event_id, str) else None


def reply_target(content: dict[str, Any]) -> str | None:
    """The event a message answers; None when its m.in_reply_to is only a thread's
    fallback (`is_falling_back`: the thread's latest event, for clients without
    threads), which the sender did not pick."""
    relates = content.get("m.relates_to")
    if isinstance(relates, dict) and relates.get("is_falling_back") is True:
        return None
    return _in_reply_to(content)


def thread_root(content: dict[str, Any]) -> str | None:
    """The first event of the thread (m.thread) a message was posted in."""
    relates = content.get("m.relates_to")
    if not isinstance(relates, dict) or relates.get("rel_type") != "m.thread":
        return None
    root = relates.get("event_id")
    return root if isinstance(root, str) else None


def is_edit(content: dict[str, Any]) -> bool:
    relates = content.get("m.relates_to")
    return isinstance(relates, dict) and relates.get("rel_type") == "m.replace"


def mentioned_users(content: dict[str, Any]) -> list[str]:
    """Users the message mentions: its m.mentions, and pills in its HTML (older clients
    send only those)."""
    users: list[str] = []
    mentions = content.get("m.mentions")
    if isinstance(mentions, dict) and isinstance(mentions.get("user_ids"), list):
        users += [u for u in mentions["user_ids"] if isinstance(u, str)]
    formatted = content.get("formatted_body")
    if isinstance(formatted, str):
        pills = (unquote(target) for target in _PILL.findall(formatted))
        users += [user for user in pills if user.startswith("@")]
    return list(dict.fromkeys(users))


def strip_leading_name(text: str, names: Iterable[str]) -> tuple[str, bool]:
    """Clients turn a pill into "name: text" in the plain body; the router knows only
    "@name", so a leading "name:" (or "@name") addressed to the bot is taken off here."""
    for name in names:
        if not name:
            continue
        match = re.match(rf"@?{re.escape(name)}\s*[:,]\s*", text, re.IGNORECASE)
        if match:
            return text[match.end() :], True
    return text, False


def after_join(timeline: list[dict[str, Any]], user_id: str) -> list[dict[str, Any]]:
    """The events after `user_id` joined: what came before is history it never saw."""
    for index in range(len(timeline) - 1, -1, -1):
        event = timeline[index]
        if (
            event.get("type") == "m.room.member"
            and event.get("state_key") == user_id
            and event.get("content", {}).get("membership") == "join"
            and event.get("unsigned", {}).get("prev_content", {}).get("membership") != "join"
        ):
            return timeline[index + 1 :]
    return timeline


def names_any(text: str, names: Iterable[str]) -> bool:
    """One of `names` (the bot's display name) written out as a word, as people do
    without a pill."""
    return any(
        name and re.search(rf"(?<![\w@]){re.escape(name)}\b", text, re.IGNORECASE) for name in names
    )


def room_kind(members: int) -> ChatType:
    """A room of two (the bot and one person) is a private chat; more, a group."""
    return "private" if members <= 2 else "group"


def reaction_of(
    event: dict[str, Any], chat_id: str, chat_type: ChatType
) -> IncomingReaction | None:
    """An m.reaction (an m.annotation of a message, its key the emoji), or a redaction,
    which takes back the reaction it redacts (a redaction of anything else takes back
    nothing); None for anything else."""
    content = event.get("content", {})
    at = datetime.fromtimestamp(int(event["origin_server_ts"]) / 1000, UTC)
    sender = PREFIX + str(event["sender"])
    if event.get("type") == "m.room.redaction":
        # Room versions before 11 put it beside the content; 11 inside.
        redacts = event.get("redacts") or content.get("redacts")
        if not isinstance(redacts, str):
            return None
        return IncomingReaction(
            chat_id, chat_type, sender, "", "", added=False, timestamp=at, reaction_id=redacts
        )
    relates = content.get("m.relates_to")
    if not isinstance(relates, dict) or relates.get("rel_type") != "m.annotation":
        return None
    target, key = relates.get("event_id"), relates.get("key")
    if not isinstance(target, str) or not isinstance(key, str) or not key:
        return None
    reaction_id = str(event["event_id"])
    return IncomingReaction(
        chat_id, chat_type, sender, target, key, timestamp=at, reaction_id=reaction_id
    )


def seeded_keys(buttons: Sequence[Sequence[Button]]) -> list[str]:
    """The reactions that stand for a message's buttons (✅ for Done, 💤 for Snooze 1 h,
    👍 for Remind me too), in the buttons' order: Matrix has no buttons, so the bot puts
    these on the message for people to click. A button without a reaction (Snooze
    10 min) is left to the reply words."""
    actions = {button: key for key, button in REACTION_PRESSES.items()}
    keys: list[str] = []
    for row in buttons:
        for button in row:
            data = ButtonData.decode(button.data)
            key = None if data is None else actions.get((data.action, data.preset))
            if key is not None and key not in keys:
                keys.append(key)
    return keys


def annotation(event_id: str, key: str) -> dict[str, Any]:
    """The content of an m.reaction: `key` on the event `event_id`."""
    return {"m.relates_to": {"rel_type": "m.annotation", "event_id": event_id, "key": key}}


def replacement(event_id: str, content: dict[str, Any]) -> dict[str, Any]:
    """An edit (m.replace) of the event `event_id` to read as `content`. Clients without
    edits show the "* " fallback. The edit mentions no one: the people were notified by
    the message itself, and an edit that mentions them would notify them again."""
    new = {k: v for k, v in content.items() if k != "m.relates_to"}
    return {
        "msgtype": new["msgtype"],
        "body": f"* {new['body']}",
        "m.new_content": new,
        "m.mentions": {},
        "m.relates_to": {"rel_type": "m.replace", "event_id": event_id},
    }
