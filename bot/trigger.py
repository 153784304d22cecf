"""Whether a message is for the bot: a private chat, a mention, a prefix, a reply to it,
a command for this bot, a "yes" to its offer, or a group's follow-up (`bot.followup`);
and the text meant for it. The router (`bot.router`) handles what this lets through."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from datetime import datetime

from groupmate.bot.answering import Answerer
from groupmate.bot.commands import Commands
from groupmate.bot.config import BotSettings
from groupmate.bot.followup import Followups
from groupmate.bot.messages import IncomingMessage
from groupmate.function_calls.handlers.followup import followup_window

log = logging.getLogger("groupmate.bot.router")


class Trigger:
    """Picks the messages meant for the bot out of a chat's; one instance serves every
    chat (it keeps the groups' open follow-up windows)."""

    def __init__(
        self, settings: BotSettings, answerer: Answerer, clock: Callable[[], datetime]
    ) -> None:
        self._settings = settings
        self._answerer = answerer
        self._followups = Followups(settings.name, clock)
        name = re.escape(settings.name)
        self._mention = re.compile(rf"(?<![\w@])@{name}\b[:,]?\s*", re.IGNORECASE)

    def may_address(self, text: str) -> bool:
        """Whether `text` could be for the bot without the platform saying so (a mention
        entity, a reply to it): a command, a configured prefix, or "@<bot name>"."""
        text = text.strip()
        return (
            text.startswith("/")
            or any(prefix and text.startswith(prefix) for prefix in self._settings.prefixes)
            or self._mention.search(text) is not None
        )

    def without_mention(self, text: str) -> str:
        """`text` without its first "@<bot name>"."""
        return self._mention.sub("", text, 1).strip()

    def text_for_bot(self, message: IncomingMessage) -> str | None:
        """The text meant for the bot, without mention or prefix; None if not for it. Any
        message of the sender uses their follow-up window up: only the next counts."""
        followup = message.chat_type == "group" and self._followups.take(message)
        text = self._triggered_text(message)
        if text is None and followup:
            text = message.text.strip()
        return text

    def _triggered_text(self, message: IncomingMessage) -> str | None:
        text = message.text.strip()
        if message.chat_type == "private":
            return text
        if self._answerer.awaits_yes(message, text):
            return text  # "yes" to the bot's offer, no mention needed
        stripped, mentioned = self._mention.subn("", text, count=1)
        if mentioned and (message.mentions_bot or not message.mention_entities):
            return stripped.strip()
        for prefix in self._settings.prefixes:
            if prefix and text.startswith(prefix):
                return text[len(prefix) :].strip()
        if message.mentions_bot or message.reply_to_bot:
            return text
        command = Commands.split(text)
        if command is not None and self._answerer.commands.knows(command[0]):
            # "/help@otherbot" is for another bot in the group.
            target = Commands.target(text)
            if target is None or target.lower() == self._settings.name.lower():
                return text
        return None

    async def answered(self, message: IncomingMessage) -> None:
        """The bot answered the sender: their next message may follow up, if the chat
        wants that (its settings, as the answer just read them: from the cache)."""
        try:
            window = followup_window(await self._answerer.chat_settings(message.chat_id))
        except Exception as exc:  # the answer is out: a window not opened is all it costs
            log.warning("chat %s: follow-up setting not read (%s)", message.chat_id, exc)
            return
        if window is None:
            self._followups.close_chat(message.chat_id)
        else:
            self._followups.open(message.chat_id, message.sender_id, window)
