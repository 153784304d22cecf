"""discord.py's client, with the gateway's events handed to the adapter."""

from __future__ import annotations

from typing import Protocol

import discord


class Listener(Protocol):
    """What the client tells the adapter."""

    def on_connected(self) -> None: ...

    def on_disconnected(self, reason: str) -> None: ...

    def on_message(self, message: discord.Message) -> None: ...

    def on_reaction(self, payload: discord.RawReactionActionEvent) -> None: ...

    def on_interaction(self, interaction: discord.Interaction) -> None: ...


class Gateway(discord.Client):
    """discord.py's client, its events handed to the adapter."""

    def __init__(self, adapter: Listener, *, message_content: bool, wait: float) -> None:
        intents = discord.Intents.none()
        intents.guilds = True  # the guild's roles and channels: admins, threads
        intents.guild_messages = True
        intents.dm_messages = True
        # Reactions to messages, in servers and DMs (not privileged): digests count them.
        intents.reactions = True
        intents.message_content = message_content
        super().__init__(
            intents=intents,
            # A 429 asking for longer than this fails at once (discord.py's floor: 30 s);
            # the reminder engine retries the send later.
            max_ratelimit_timeout=wait,
            chunk_guilds_at_startup=False,  # Server Members is privileged: not needed
        )
        self._adapter = adapter
        self._reported: object = None  # the socket whose end was last reported

    async def on_connect(self) -> None:  # READY: a new session
        self._adapter.on_connected()

    async def on_resumed(self) -> None:  # RESUMED: the session goes on, missed events replayed
        self._adapter.on_connected()

    async def on_disconnect(self) -> None:
        # discord.py names the socket it had last, also when a new one could not be made
        # (its retries): that socket's close code is old news then.
        ws = self.ws
        if ws is None or ws is self._reported:
            self._adapter.on_disconnected("could not connect")
            return
        self._reported = ws
        code = ws.socket.close_code
        reason = "connection lost" if code is None else f"closed with {code}"
        self._adapter.on_disconnected(f"gateway: {reason}")

    async def on_message(self, message: discord.Message) -> None:
        self._adapter.on_message(message)

    # The raw events: the cached-message ones miss reactions to messages the library no
    # longer (or never) had in its cache, e.g. from before a restart.
    async def on_raw_reaction_add(self, payload: discord.RawReactionActionEvent) -> None:
        self._adapter.on_reaction(payload)

    async def on_raw_reaction_remove(self, payload: discord.RawReactionActionEvent) -> None:
        self._adapter.on_reaction(payload)

    # Every INTERACTION_CREATE: the buttons' views are not stored (discord_buttons.py),
    # so each press comes here, also for messages sent before a restart.
    async def on_interaction(self, interaction: discord.Interaction) -> None:
        self._adapter.on_interaction(interaction)
