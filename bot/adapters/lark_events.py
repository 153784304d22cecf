"""What Lark sends the bot, opened: the webhook's checks (signature, decryption,
verification token) and the text of a message event with its mentions.

lark-oapi's `EventDispatcherHandler.do` makes every failure a 500 with the error's text
in the body (and a logged traceback), and checks the signature with `!=`: Lark would
retry a refused request as if the server failed. So the checks are made here, to answer
401: the library's `AESCipher` decrypts first (a body that isn't sealed with the key is
refused; the decrypted type tells the url_verification challenge, which Lark does not
sign), then the signature over the raw body (sha256 of timestamp + nonce + encrypt key +
body, compared in constant time), then the verification token.

The signed timestamp is not checked for freshness: Lark publishes no window for it, and
a re-push of an event it got no answer for may come long after it was first sent. A
replayed post can only repeat an event Lark made, and the chat log acts on a message id
once (see lark.py for how long that holds).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lark_oapi.core.utils import AESCipher

from groupmate.bot.adapters.base import mention_pieces
from groupmate.bot.adapters.lark_settings import LarkSettings
from groupmate.storage.exceptions import GroupmateError

_NOT_A_TAG = re.compile(r"<(?=\s*/?\s*at\b)", re.IGNORECASE)  # "<at", "</at", "< AT"


class Refused(GroupmateError):
    """Not from Lark (bad signature or token): 401, nothing runs. Its text is safe to log."""


class Malformed(GroupmateError):
    """From Lark perhaps, but unreadable: 400. Its text is safe to log."""


def open_webhook(body: bytes, headers: Mapping[str, str], settings: LarkSettings) -> dict[str, Any]:
    """The event (or url_verification) Lark posted, once it proved to be Lark's."""
    key = settings.encrypt_key.get_secret_value() if settings.encrypt_key else ""
    try:
        outer = json.loads(body)
    except ValueError:
        raise Malformed("not JSON") from None
    if not isinstance(outer, dict):
        raise Malformed("not a JSON object")
    encrypted = outer.get("encrypt")
    if key and not isinstance(encrypted, str):
        raise Refused("not encrypted, but an encrypt key is set")
    if isinstance(encrypted, str):
        if not key:
            raise Malformed("encrypted, but adapters.lark.encrypt_key is unset")
        try:
            event = json.loads(AESCipher(key).decrypt_str(encrypted))
        except ValueError:  # bad base64, padding or JSON: not sealed with our key
            raise Refused("not decryptable with the encrypt key") from None
        if not isinstance(event, dict):
            raise Malformed("not a JSON object")
    else:
        event = outer
    # Lark signs events, not the url_verification challenge (lark-oapi skips it too).
    if key and event.get("type") != "url_verification":
        _check_signature(body, headers, key)
    header = event.get("header")
    token = header.get("token") if isinstance(header, dict) else event.get("token")
    expected = settings.verification_token
    if expected is not None:
        wanted = expected.get_secret_value().encode()
        if not isinstance(token, str) or not hmac.compare_digest(token.encode(), wanted):
            raise Refused("wrong verification token")
    return event


def _check_signature(body: bytes, headers: Mapping[str, str], key: str) -> None:
    stamp = headers.get("x-lark-request-timestamp")
    nonce = headers.get("x-lark-request-nonce")
    signature = headers.get("x-lark-signature")
    if not (stamp and nonce and signature):
        raise Refused("unsigned")
    digest = hashlib.sha256((stamp + nonce + key).encode() + body).hexdigest()
    # Bytes: compare_digest refuses a str with non-ASCII characters (a TypeError).
    if not hmac.compare_digest(digest.encode(), signature.encode("utf-8", "replace")):
        raise Refused("bad signature")


@dataclass(frozen=True, slots=True)
class Mention:
    key: str  # "@_user_1", as the text has it
    open_id: str
    name: str


def mentions_of(message: Mapping[str, Any]) -> list[Mention]:
    """The message's mention entities (Lark resolves them: each has the person's ids)."""
    found: list[Mention] = []
    for item in message.get("mentions") or []:
        if not isinstance(item, dict):
            continue
        open_id = (item.get("id") or {}).get("open_id")
        if isinstance(item.get("key"), str) and isinstance(open_id, str) and open_id:
            found.append(Mention(item["key"], open_id, str(item.get("name") or open_id)))
    return found


def text_of(message: Mapping[str, Any], names: Mapping[str, str]) -> str | None:
    """A text or rich-text (post) message's text, each mention key ("@_user_1") as
    "@Name" from `names` (key -> name); None for other kinds (images, stickers, cards)."""
    try:
        content = json.loads(str(message.get("content") or "{}"))
    except ValueError:
        return None
    if not isinstance(content, dict):
        return None
    kind = message.get("message_type")
    if kind == "text":
        text = str(content.get("text") or "")
    elif kind == "post":
        text = _post_text(content, names)
    else:
        return None
    for key in sorted(names, key=len, reverse=True):  # "@_user_10" before "@_user_1"
        text = text.replace(key, f"@{names[key]}")
    return text.strip()


def _post_text(content: Mapping[str, Any], names: Mapping[str, str]) -> str:
    lines: list[str] = []
    title = content.get("title")
    if isinstance(title, str) and title:
        lines.append(title)
    for paragraph in content.get("content") or []:
        parts: list[str] = []
        for element in paragraph if isinstance(paragraph, list) else []:
            if not isinstance(element, dict):
                continue
            if element.get("tag") in ("text", "a"):
                parts.append(str(element.get("text") or ""))
            elif element.get("tag") == "at":
                key = str(element.get("user_id") or "")
                parts.append(key if key in names else f"@{element.get('user_name') or key}")
        lines.append("".join(parts))
    return "\n".join(lines)


def render_text(text: str, people: Mapping[str, str], *, everyone: bool = False) -> str:
    """`text` as Lark's text message content, each "@name" in `people` (name -> open_id)
    an `<at user_id="ou_…">` tag, which notifies them. Lark reads such a tag anywhere in
    the text (`user_id="all"`: everyone): one that was in the text already (a person's
    words, a reminder's content, the model's answer) is broken by a zero-width space, so
    only the people the bot means to notify are notified; with `everyone`, the text
    starts with the bot's own `<at user_id="all">`."""
    pieces = mention_pieces(text, people)
    body = ('<at user_id="all"></at> ' if everyone else "") + "".join(
        f'<at user_id="{people[piece]}">{piece[1:]}</at>'
        if mention
        else _NOT_A_TAG.sub("<\u200b", piece)
        for piece, mention in pieces
    )
    return json.dumps({"text": body}, ensure_ascii=False)
