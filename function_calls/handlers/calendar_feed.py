"""`/calendar`: a private link that opens this chat's reminders in a calendar app
(Google Calendar, Apple Calendar, Thunderbird), and `/calendar revoke` to turn it off.
`/calendar chat` is an admin's link for the whole chat (`/calendar chat revoke`).

The link is shown once: only its hash is stored (storage.calendar_feeds), so asking again
makes a new link and the old one stops. No platform adapter here can message a member
privately, so in a group the link is posted in the chat, and the reply says so. Making
and revoking links change state: each call is audited by the invoker, like any tool.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from groupmate.function_calls.context import MessageContext
from groupmate.function_calls.handlers.reminders import refused, reminder_service
from groupmate.function_calls.internal_text import PlainSentence
from groupmate.function_calls.registry import tool_function
from groupmate.function_calls.result import FunctionResult
from groupmate.storage import StorageError
from groupmate.storage.calendar_feeds import (
    FEED_PREFIX,
    FEED_SUFFIX,
    FeedOwner,
    feeds_installed,
)

NAME = "calendar_feed"
Whose = Literal["mine", "chat"]
_REVOKE = frozenset({"revoke", "off", "stop", "delete", "撤销", "取消", "关闭", "删除"})
_CHAT = frozenset({"chat", "group", "all", "everyone", "全群", "群", "本群", "所有人"})
_APPS = PlainSentence(
    "Add it in Google Calendar (Other calendars → From URL), Apple Calendar (File → New "
    "Calendar Subscription) or Thunderbird (New Calendar → On the Network).",
    "可以在 Google 日历（其他日历 → 通过网址添加）、Apple 日历（文件 → 新建日历订阅）"
    "或 Thunderbird（新建日历 → 在网络上）里订阅。",
)
USAGE = PlainSentence(
    "Usage: /calendar (your link to this chat's reminders), /calendar revoke (turn it "
    "off); chat admins: /calendar chat and /calendar chat revoke (the whole chat's link).",
    "用法：/calendar（你订阅这个聊天提醒的链接），/calendar revoke（停用它）；"  # noqa: RUF001
    "群管理员：/calendar chat 和 /calendar chat revoke（全群的链接）。",
)


@dataclass(frozen=True, slots=True)
class CalendarLinks:
    """Where the server is reached from outside (`adapters.webhook.public_url`): the
    start of every calendar link. None: not set, and no link can be made."""

    base_url: str | None = None

    def url(self, token: str) -> str:
        assert self.base_url is not None
        return f"{self.base_url.rstrip('/')}{FEED_PREFIX}{token}{FEED_SUFFIX}"


def _read(words: str) -> tuple[Whose, bool] | None:
    """(whose link, revoke?) for the words after /calendar; None for anything else."""
    said = words.lower().split()
    if not set(said) <= _REVOKE | _CHAT or len(said) > 2:
        return None
    chat = [word for word in said if word in _CHAT]
    revoke = [word for word in said if word in _REVOKE]
    if len(chat) > 1 or len(revoke) > 1:
        return None
    return ("chat" if chat else "mine"), bool(revoke)


class CalendarArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Audited as given: the audit log says whether a link was made or revoked, and whose.
    action: str = Field(
        "",
        max_length=40,
        description="empty: make your link; revoke; chat (admins: the whole chat's link); "
        "chat revoke",
    )


@tool_function(
    name=NAME,
    command="calendar",
    for_model=False,  # a private link is asked for, never offered
    description="Make or revoke your private calendar link (iCalendar feed) to this chat's "
    "reminders; chat admins: the whole chat's link.",
)
async def calendar_feed(ctx: MessageContext, args: CalendarArgs) -> FunctionResult:
    said = ctx.text or args.action
    read = _read(args.action)
    if read is None:
        return FunctionResult.refused(USAGE.for_message(said), "refused")
    whose, revoke = read
    if whose == "chat" and not ctx.is_admin:
        return FunctionResult.refused(
            PlainSentence(
                "Only a chat admin can make or revoke the whole chat's calendar link; "
                "/calendar gives you your own.",
                "只有群管理员可以创建或停用全群的日历链接；/calendar 可以获取你自己的链接。",  # noqa: RUF001
            ).for_message(said),
            "forbidden",
        )
    owner = FeedOwner(ctx.chat_id, None if whose == "chat" else ctx.sender_id)
    feeds = reminder_service(ctx).feeds
    try:
        if revoke:
            return _revoked(await feeds.revoke(owner), whose, said)
        links = ctx.deps.get(CalendarLinks) or CalendarLinks()
        if not feeds_installed():
            return FunctionResult.refused(_NOT_INSTALLED.for_message(said), "unavailable")
        if links.base_url is None:
            return FunctionResult.refused(_NO_ADDRESS.for_message(said), "unavailable")
        made = await feeds.make(owner)
    except StorageError as exc:
        return refused(exc, said)
    return FunctionResult.direct(
        _made(links.url(made.token), whose, made.replaced, ctx.chat_type == "group", said)
    )


_NOT_INSTALLED = PlainSentence(
    "I can't make calendar links here: this server lacks calendar support. An admin "
    'installs it with pip install "groupmate[calendar]" (the container image has it) and '
    "restarts groupmate.",
    "这里无法创建日历链接：这个服务器没有安装日历功能。请管理员运行 "
    'pip install "groupmate[calendar]"（容器镜像已包含）后重启 groupmate。',
)
_NO_ADDRESS = PlainSentence(
    "I can't make calendar links yet: this server's public address isn't set. An admin "
    "sets adapters.webhook.public_url in the config (e.g. https://bot.example.com, the "
    "address calendar apps reach this server at) and restarts groupmate.",
    "暂时无法创建日历链接：这个服务器的公开地址还没有设置。请管理员在配置里设置 "
    "adapters.webhook.public_url（例如 https://bot.example.com，日历应用访问这个服务器的地址），"
    "然后重启 groupmate。",
)


def _made(url: str, whose: Whose, replaced: bool, group: bool, said: str) -> str:
    if whose == "chat":
        head = PlainSentence(
            f"📅 This chat's calendar link, for everyone here:\n{url}",
            f"📅 这个聊天的日历链接，供所有成员使用：\n{url}",
        )
        off = PlainSentence(
            "/calendar chat revoke turns it off.", "/calendar chat revoke 可以停用它。"
        )
    else:
        head = PlainSentence(
            f"📅 Your calendar link to this chat's reminders:\n{url}",
            f"📅 你订阅这个聊天提醒的日历链接：\n{url}",
        )
        off = PlainSentence("/calendar revoke turns it off.", "/calendar revoke 可以停用它。")
    parts = [head, _APPS]
    if group:
        parts.append(
            PlainSentence(
                "I can't message you privately on this platform, so the link is posted "
                "here: anyone who has it can read this chat's reminders (as everyone here "
                "can with /reminders).",
                "我在这个平台上无法私信你，所以链接发在这里：拿到链接的人都能看到这个聊天的提醒"
                "（和群里所有人用 /reminders 看到的一样）。",
            )
        )
    else:
        parts.append(
            PlainSentence(
                "Keep it private: anyone who has it can read this chat's reminders.",
                "请不要外传：拿到链接的人都能看到这个聊天的提醒。",
            )
        )
    if replaced:
        parts.append(
            PlainSentence(
                "It replaces the earlier link, which no longer works.",
                "它替换了之前的链接，旧链接已失效。",
            )
        )
    parts.append(off)
    return "\n".join(part.for_message(said) for part in parts)


def _revoked(gone: bool, whose: Whose, said: str) -> FunctionResult:
    if not gone:
        nothing = (
            PlainSentence(
                "This chat has no calendar link to revoke.", "这个聊天没有可以停用的日历链接。"
            )
            if whose == "chat"
            else PlainSentence(
                "You have no calendar link in this chat to revoke.",
                "你在这个聊天里没有可以停用的日历链接。",
            )
        )
        return FunctionResult.direct(nothing.for_message(said), changed=False)
    done = PlainSentence(
        "📅 Revoked: the calendar link stops working now. /calendar"
        f"{' chat' if whose == 'chat' else ''} makes a new one.",
        "📅 已停用：这个日历链接现在起失效。/calendar"
        f"{' chat' if whose == 'chat' else ''} 可以创建新的链接。",
    )
    return FunctionResult.direct(done.for_message(said))
