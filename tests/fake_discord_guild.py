"""Who and what the fake Discord holds: the bot, its guild with roles, a channel and a
thread, the users, and ids made the way Discord makes them."""

from __future__ import annotations

import itertools
import time
from datetime import UTC, datetime
from typing import Any

TOKEN = "MTAw.fake-discord-bot-token.secret"
APP = "1000000000000000001"
BOT = "1000000000000000002"
GUILD = "1100000000000000001"
CHANNEL = "1200000000000000001"
THREAD = "1200000000000000002"
MODS = "1300000000000000001"  # a role with Manage Server
OWNER = "1000000000000000099"
BOT_ROLE = "1300000000000000002"  # the role Discord made for the bot when it was added
MESSAGE_CONTENT = 1 << 15  # the privileged intent's bit
GUILD_MESSAGE_REACTIONS = 1 << 10  # reactions in servers' channels and threads
DIRECT_MESSAGE_REACTIONS = 1 << 13  # reactions in DMs
_EPOCH_MS = 1420070400000


def _user(uid: str, name: str, *, bot: bool = False) -> dict[str, Any]:
    return {"id": uid, "username": name.lower(), "discriminator": "0", "global_name": name,
            "avatar": None, "public_flags": 0, "flags": 0, "bot": bot}  # fmt: skip


USERS = {
    "alice": _user("1000000000000000011", "Alice"),
    "bob": _user("1000000000000000012", "Bob"),
    "ada": _user("1000000000000000013", "Ada"),  # has the Mods role: Manage Server
    "carol": _user("1000000000000000014", "Carol"),
    "sam1": _user("1000000000000000015", "Sam"),
    "sam2": _user("1000000000000000016", "Sam"),
}
BOT_USER = _user(BOT, "groupmate", bot=True)
ROLES = {"ada": [MODS]}


_SEQUENCE = itertools.count()


def snowflake() -> str:
    """A Discord id: milliseconds since Discord's epoch, then a sequence."""
    return str(((int(time.time() * 1000) - _EPOCH_MS) << 22) | (next(_SEQUENCE) & 0xFFF))


def now() -> str:
    return datetime.now(UTC).isoformat()


def guild_create() -> dict[str, Any]:
    """GUILD_CREATE: the guild with its roles (@everyone's id is the guild's), a text
    channel and an active thread in it, and the bot's own member."""
    everyone = {"id": GUILD, "name": "@everyone", "permissions": "68608", "position": 0}
    mods = {"id": MODS, "name": "Mods", "permissions": str(1 << 5), "position": 1}
    mine = {"id": BOT_ROLE, "name": "groupmate", "permissions": "68608", "position": 1,
            "tags": {"bot_id": BOT}}  # fmt: skip
    channel = {"id": CHANNEL, "type": 0, "guild_id": GUILD, "name": "general", "position": 0,
               "permission_overwrites": [], "parent_id": None, "topic": None, "nsfw": False,
               "last_message_id": None, "rate_limit_per_user": 0}  # fmt: skip
    thread = {"id": THREAD, "type": 11, "guild_id": GUILD, "parent_id": CHANNEL,
              "owner_id": USERS["alice"]["id"], "name": "plans", "last_message_id": None,
              "message_count": 0, "member_count": 1, "rate_limit_per_user": 0, "flags": 0,
              "total_message_sent": 0,
              "thread_metadata": {"archived": False, "auto_archive_duration": 1440,
                                  "archive_timestamp": now(), "locked": False}}  # fmt: skip
    me = {"user": BOT_USER, "roles": [BOT_ROLE], "joined_at": now(), "deaf": False, "mute": False,
          "flags": 0}  # fmt: skip
    return {"id": GUILD, "name": "Test guild", "icon": None, "owner_id": OWNER,
            "roles": [everyone | _role_defaults(), mods | _role_defaults(),
                      mine | _role_defaults() | {"managed": True}], "emojis": [],
            "features": [], "member_count": 8, "large": False, "unavailable": False,
            "joined_at": now(), "verification_level": 0, "default_message_notifications": 0,
            "explicit_content_filter": 0, "mfa_level": 0, "system_channel_id": None,
            "premium_tier": 0, "preferred_locale": "en-US", "nsfw_level": 0, "stickers": [],
            "voice_states": [], "presences": [], "stage_instances": [],
            "guild_scheduled_events": [], "soundboard_sounds": [], "members": [me],
            "channels": [channel], "threads": [thread]}  # fmt: skip


def _role_defaults() -> dict[str, Any]:
    return {"color": 0, "hoist": False, "managed": False, "mentionable": False, "flags": 0}
