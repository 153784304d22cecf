"""`groupmate chat`: a terminal group-chat simulator with the whole bot behind it.

You type as a participant; `/as bob` switches who you are, `/private` and `/group` switch
the chat. Reminders fire into the terminal while you type: on a terminal, prompt_toolkit
keeps the line being typed below them (printed above it, not into it).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import sys
import uuid
from collections.abc import Iterator
from typing import TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.patch_stdout import patch_stdout

from groupmate.bot.adapters import CHAT_PREFIXES
from groupmate.bot.app import Bot
from groupmate.bot.messages import IncomingMessage
from groupmate.storage import Member, OutgoingMessage
from groupmate.storage.vocabulary import ChatType

CHAT_PREFIX = CHAT_PREFIXES["console"]
GROUP_CHAT = f"{CHAT_PREFIX}group"
HELP = (
    "You are chatting in a simulated group. /as <name> switches the sender, /private and "
    "/group switch the chat, /quit leaves. In the group, address the bot with @{name}; "
    "everyone you have been with /as is a member you can remind."
)


class ConsoleChat:
    """The terminal side: reads lines, prints replies and reminders as they come."""

    def __init__(self, bot: Bot, *, user: str, stdin: TextIO, stdout: TextIO) -> None:
        self.bot = bot
        self.user = user
        self.chat_type: ChatType = "group"
        self._stdin = stdin
        self._stdout = stdout
        # Message ids unique across sessions: the bot drops a message whose id it has
        # seen (a platform's redelivery), and a new session's "1" is no repeat.
        self._session = uuid.uuid4().hex[:12]
        self._ids = itertools.count(1)
        self._people = {user.casefold(): user}  # everyone you have been, by /as
        # A person at a terminal types into prompt_toolkit's line; piped input is read
        # line by line (scripts, tests of the plain stream).
        self._terminal = stdin is sys.stdin and stdin.isatty() and stdout.isatty()
        self._line: PromptSession[str] | None = None

    def member(self, name: str) -> Member:
        return Member(f"console-{name}", name)

    async def find(self, chat_id: str, name: str) -> Member | None:
        """The console's member directory: the people you have typed as are in the chat."""
        found = self._people.get(name.casefold())
        return None if found is None else self.member(found)

    @property
    def chat_id(self) -> str:
        return GROUP_CHAT if self.chat_type == "group" else f"{CHAT_PREFIX}dm-{self.user}"

    def _say(self, text: str) -> None:
        # On a terminal, sys.stdout is prompt_toolkit's proxy while the chat runs: what is
        # printed goes above the line being typed, which is drawn again, text and all.
        out = sys.stdout if self._line is not None else self._stdout
        print(text, file=out, flush=True)

    def _prompt_text(self) -> str:
        return f"[{self.chat_type}] {self.user}> "

    async def deliver(self, message: OutgoingMessage) -> None:
        """Outgoing messages of console chats: printed above the line being typed (or,
        on piped input, between prompts)."""
        where = "group" if message.chat_id == GROUP_CHAT else "private"
        # The terminal's mentions are the "@name"s in the text; everyone's is shown so.
        everyone = "@everyone " if message.everyone else ""
        if self._line is not None:
            self._say(f"[{where}] bot> {everyone}{message.text}")
            return
        self._say(f"\n[{where}] bot> {everyone}{message.text}")
        print(self._prompt_text(), end="", file=self._stdout, flush=True)

    @contextlib.contextmanager
    def _typing(self) -> Iterator[None]:
        """The terminal's input line, kept below whatever the bot prints meanwhile."""
        if not self._terminal:
            yield
            return
        with patch_stdout(raw=True):
            self._line = PromptSession()
            try:
                yield
            finally:
                self._line = None

    async def _read(self) -> str | None:
        """The next line typed; None at the end (/quit aside: Ctrl-D, Ctrl-C, EOF)."""
        if self._line is None:
            print(self._prompt_text(), end="", file=self._stdout, flush=True)
            line = await asyncio.to_thread(self._stdin.readline)
            return line or None
        try:
            return await self._line.prompt_async(self._prompt_text())
        except (EOFError, KeyboardInterrupt):
            return None

    async def run(self) -> None:
        with self._typing():
            await self._chat()

    async def _chat(self) -> None:
        self._say("groupmate console. " + HELP.format(name=self.bot.config.bot.name))
        if self.bot.llm is None:
            self._say("No language model is configured: use the /commands (try /help).")
        while True:
            line = await self._read()
            if line is None or line.strip() == "/quit":
                self._say("")
                return
            text = line.strip()
            if not text or self._local_command(text):
                continue
            message = IncomingMessage(
                chat_id=self.chat_id,
                chat_type=self.chat_type,
                sender_id=self.member(self.user).user_id,
                sender_name=self.user,
                text=text,
                message_id=f"console-{self._session}-{next(self._ids)}",
                from_operator=True,
            )
            for reply in await self.bot.handle(message):
                self._say(f"bot> {reply.text}")

    def _local_command(self, text: str) -> bool:
        if text.startswith("/as "):
            self.user = text[4:].strip().split()[0] if text[4:].strip() else self.user
            self._people.setdefault(self.user.casefold(), self.user)
            self._say(f"(you are now {self.user})")
            return True
        if text in ("/private", "/group"):
            self.chat_type = "private" if text == "/private" else "group"
            self._say(f"(now in the {self.chat_type} chat)")
            return True
        return False


async def run_console(
    bot: Bot, *, user: str, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout
) -> None:
    chat = ConsoleChat(bot, user=user, stdin=stdin, stdout=stdout)
    bot.on_outgoing(chat.deliver, chat_prefix=CHAT_PREFIX)
    bot.on_members(chat, chat_prefix=CHAT_PREFIX)
    async with bot:
        await chat.run()
