"""A DingTalk robot message (the `/v1.0/im/bot/messages/get` payload, the same over the
Stream connection and HTTP callbacks) read as the bot's `IncomingMessage`.

What DingTalk puts in it: `conversationType` "1" (a single chat with the robot) or "2"
(a group; DingTalk delivers only the group messages that @ the robot), `conversationId`
(a group's openConversationId), the sender's `senderStaffId` (members of the org) and
`senderId` (everyone), `senderNick`, `isAdmin`, `atUsers` (`dingtalkId`, and `staffId`
for members of the org; no names), `isInAtList` (the robot was @-ed), `msgId`, and the
message's `sessionWebhook` with its `sessionWebhookExpiredTime` (ms), and a group's
`conversationTitle`. The text leaves the robot's own @ out and keeps others' as "@Nick".
A quote ("reply") adds `text.isReplyMsg` and `text.repliedMsg` (`msgId`, `senderId`,
`content`), undocumented but sent.

DingTalk gives no id for a message a robot sends that a quote of it carries (a session
webhook answers `errcode 0`, the open API a processQueryKey no quote names), while a
quote carries the quoted text: a robot message's id is a hash of its chat and its text
as people see it, "@Name"s included ("Reminder for @Alice" and "… for @Bob" differ).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from dingtalk_stream import ChatbotMessage

from groupmate.bot.adapters.base import mention_pieces, mention_targets
from groupmate.bot.adapters.dingtalk_people import PREFIX
from groupmate.bot.messages import IncomingMessage
from groupmate.storage import Member

_AT_NAME = re.compile(r"@([^\s@]+)")
_TRAILING = ",.;:!?)]}'\"，。；：！？、）】"  # noqa: RUF001  # after a name: not part of it


@dataclass(frozen=True, slots=True)
class Hook:
    """A conversation's session webhook: replies through it notify and need no token."""

    url: str
    expires_ms: int


def parse(data: Any) -> ChatbotMessage | None:
    """The library's reading of the payload; None when it lacks what any answer needs."""
    if not isinstance(data, dict):
        return None
    try:
        message = ChatbotMessage.from_dict(data)
    except (AttributeError, KeyError, TypeError, ValueError):
        return None  # a text message without its text, an expiry that is no number
    needed = (message.message_id, message.conversation_id, message.sender_id)
    if not all(isinstance(value, str) and value for value in needed):
        return None
    if message.conversation_type not in ("1", "2"):
        return None
    return message


def sender_of(message: ChatbotMessage) -> Member:
    uid = message.sender_staff_id or message.sender_id
    return Member(f"{PREFIX}{uid}", str(message.sender_nick or uid))


def hook_of(message: ChatbotMessage) -> Hook | None:
    url, expires = message.session_webhook, message.session_webhook_expired_time
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        return None
    return Hook(url, int(expires or 0))


def fingerprint(conversation_id: str, text: str) -> str:
    """The id of a robot message (or of a quote of it): its chat and its text as shown,
    spacing and case aside."""
    words = " ".join(text.split()).casefold()
    digest = hashlib.sha256(f"{conversation_id}\n{words}".encode()).hexdigest()
    return f"dt-{digest[:24]}"


def as_shown(text: str, seen: Mapping[str, Member]) -> str:
    """`text` with each "@<user id>" of someone seen as "@Name": a session webhook's
    message @-s people by id, a quote of it may carry either."""
    names = {f"@{uid.removeprefix(PREFIX)}": f"@{m.name}" for uid, m in seen.items() if m.name}
    return "".join(
        names.get(piece, piece) if at else piece for piece, at in mention_pieces(text, names)
    )


def title_of(message: ChatbotMessage) -> str | None:
    title = message.conversation_title
    return str(title) if isinstance(title, str) and title.strip() else None


def incoming(
    message: ChatbotMessage, *, bot_name: str, seen: Mapping[str, Member]
) -> IncomingMessage:
    """The bot's view of `message`; `seen` are the chat's members known so far (for the
    names DingTalk's atUsers don't carry)."""
    conversation = str(message.conversation_id)
    private = message.conversation_type == "1"
    sender = sender_of(message)
    robot = {message.chatbot_user_id, message.robot_code} - {None, ""}
    text = _text_of(message).strip()
    mentions = _mentions(message, text, robot, seen)
    mentions_bot = bool(message.is_in_at_list) and not private
    if mentions_bot and f"@{bot_name}".casefold() not in text.casefold():
        # DingTalk cuts the robot's @ out of the text; put the bot's own name where it
        # was, so the router (and the history) read it as the mention it was.
        text = f"@{bot_name} {text}"
    quoted = _quoted(message)
    return IncomingMessage(
        chat_id=f"{PREFIX}{conversation}",
        chat_type="private" if private else "group",
        sender_id=sender.user_id,
        sender_name=sender.name,
        text=text,
        mentions_bot=mentions_bot,
        mention_entities=True,  # isInAtList says whether the robot was @-ed
        reply_to_bot=quoted is not None and quoted[1] in robot,
        sender_is_admin=bool(message.is_admin) and not private,
        message_id=str(message.message_id),
        timestamp=_when(message.create_at),
        mentions=tuple(mentions),
        reply_to_message_id=(
            fingerprint(conversation, as_shown(quoted[0], seen)) if quoted else None
        ),
    )


def _when(created: Any) -> datetime | None:
    """`createAt` (ms); None when it is missing or no time."""
    try:
        return datetime.fromtimestamp(int(created) / 1000, UTC) if created else None
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def _text_of(message: ChatbotMessage) -> str:
    if message.message_type == "text" and message.text is not None:
        return str(message.text.content or "")
    if message.message_type == "richText":
        return "".join(str(part) for part in message.get_text_list() or ())
    return ""  # pictures, files: kept in the history as an empty message


def _mentions(
    message: ChatbotMessage, text: str, robot: set[str | None], seen: Mapping[str, Member]
) -> list[Member]:
    """The people the message @-s (DingTalk's atUsers, the robot left out), named as
    seen in the chat. DingTalk's atUsers carry no names and their order is not
    documented: only one unknown id with one unknown "@Name" in the text pair up; other
    unknown ids keep their id as their name."""
    ids: list[str] = []
    for user in message.at_users or ():
        if user.dingtalk_id in robot or user.staff_id in robot:
            continue
        uid = user.staff_id or user.dingtalk_id
        if uid and uid not in ids:
            ids.append(str(uid))
    known = {uid: seen[f"{PREFIX}{uid}"].name for uid in ids if f"{PREFIX}{uid}" in seen}
    shown = {n.rstrip(_TRAILING) for n in _AT_NAME.findall(text)} - {""}
    names = [n for n in shown if n not in known.values()]
    unnamed = [uid for uid in ids if uid not in known]
    paired = {unnamed[0]: names[0]} if len(names) == len(unnamed) == 1 else {}
    return [Member(f"{PREFIX}{uid}", known.get(uid) or paired.get(uid) or uid) for uid in ids]


def _quoted(message: ChatbotMessage) -> tuple[str, str] | None:
    """The quoted message's text and sender, when `message` is a quote ("reply")."""
    extensions = message.text.extensions if message.text is not None else {}
    replied = extensions.get("repliedMsg")
    if not isinstance(replied, dict):
        return None
    content = replied.get("content")
    if isinstance(content, dict):
        parts = content.get("richText")
        if isinstance(parts, list):
            text = "".join(
                str(p.get("text") or p.get("content") or "") for p in parts if isinstance(p, dict)
            )
        else:
            text = str(content.get("text") or "")
    else:
        text = str(content or "")
    return (text, str(replied.get("senderId") or "")) if text.strip() else None


def render_mentions(text: str, people: Sequence[Member]) -> tuple[str, list[str]]:
    """`text` for a session webhook, each "@name" of `people` as "@<their id>" (where
    DingTalk puts the @ it notifies), and those ids for the message's `at`."""
    ids = mention_targets(people, PREFIX)
    parts: list[str] = []
    at_ids: list[str] = []
    for piece, mention in mention_pieces(text, ids):
        if mention:
            parts.append(f"@{ids[piece]}")
            at_ids.append(ids[piece])
        else:
            parts.append(piece)
    return "".join(parts), list(dict.fromkeys(at_ids))
