"""Matrix's buttons are reactions: the bot seeds ✅ 💤 👍 on a delivered reminder (those
its buttons stand for), a member's reaction acts as the press (the router maps it), and
what became of it shows on the message itself, edited in place (m.replace).

Every event sent here has a transaction id derived from what caused it (the message
seeded, the reaction acted on), so a retry or a replayed sync batch never posts twice.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from groupmate.bot.adapters.matrix_client import MatrixClient, MatrixError, Unreachable
from groupmate.bot.adapters.matrix_format import (
    annotation,
    render,
    replacement,
    seeded_keys,
    transaction_id,
)
from groupmate.bot.messages import IncomingReaction
from groupmate.bot.presses import REACTION_PRESSES, PressOutcome
from groupmate.storage import Button, Database, Member, SendError
from groupmate.storage.adapter_state import load_state, save_state

log = logging.getLogger("groupmate.bot.adapters.matrix")

# (room id, content, transaction id, event type) -> the event id; raises SendError.
Send = Callable[[str, dict[str, Any], str, str], Awaitable[str]]
_SEED_RETRIES = (0.5, 2.0)  # seconds before a seed is tried again after a lost connection


@dataclass(frozen=True, slots=True)
class Presses:
    """Seeds the reactions that stand for buttons, and shows what a reaction did.
    `key`: where the reactions that can be taken back are kept (adapter state)."""

    send: Send
    client: MatrixClient
    msgtype: str
    database: Database
    key: str

    async def seed(self, room_id: str, event_id: str, buttons: Sequence[Sequence[Button]]) -> None:
        """Put the bot's own ✅ 💤 👍 on `event_id`, for those of `buttons` they stand
        for, so people click them instead of looking for the emoji. The message is out
        already: a reaction refused (the room's power levels) is logged, not raised, or
        the reminder would count as failed and be retried. A homeserver out of reach is
        tried again, then raised: the whole send is retried, the message and the seeds
        with the same transaction ids, so none is posted twice."""
        for key in seeded_keys(buttons):
            txn = transaction_id(f"seed:{event_id}:{key}")
            for wait in (*_SEED_RETRIES, None):
                try:
                    await self.send(room_id, annotation(event_id, key), txn, "m.reaction")
                    break
                except Unreachable:  # a dropped connection: the same txn again is safe
                    if wait is None:
                        raise
                    await asyncio.sleep(wait)
                except SendError as exc:
                    log.warning(
                        "matrix: the %s reaction on %s was not added: %s", key, event_id, exc
                    )
                    break

    async def taken_back(self, reaction: IncomingReaction) -> IncomingReaction:
        """A redaction names only the reaction's event; for a 👍 the bot acted on, its
        message, emoji and author are filled in, so that taking it back takes that
        person off (also when a moderator redacted it)."""
        if reaction.added or reaction.message_id or reaction.reaction_id is None:
            return reaction
        kept = await load_state(self.database, f"{self.key}:{reaction.reaction_id}")
        if kept is None:
            return reaction  # not one that acted: counted back in digests, nothing more
        found = json.loads(kept)
        return replace(
            reaction, message_id=found["message"], emoji=found["emoji"], sender_id=found["sender"]
        )

    async def acted(self, reaction: IncomingReaction, outcome: PressOutcome | None) -> None:
        """Keep a 👍 ("me too") the bot acted on: the redaction that takes it back names
        nothing else. Done and snooze are not undone by taking the emoji back."""
        meant = REACTION_PRESSES.get(reaction.emoji)
        if outcome is None or not outcome.ok or not reaction.added or reaction.reaction_id is None:
            return
        if meant is None or meant[0] != "me_too":
            return
        kept = {"message": reaction.message_id, "emoji": reaction.emoji}
        kept["sender"] = reaction.sender_id
        await save_state(self.database, f"{self.key}:{reaction.reaction_id}", json.dumps(kept))

    async def show(
        self, room_id: str, reaction: IncomingReaction, outcome: PressOutcome | None
    ) -> None:
        """What a reaction that stands for a press did: the message it was put on is
        edited to read as `outcome.update` (its status lines: "✅ Done by Alice"). A
        refusal is said in the room, to the person, in reply to that message: Matrix has
        no message for one person alone, and a refusal must not go unsaid. A replay
        (the same reaction event in a replayed sync) shows nothing again."""
        if outcome is None or outcome.repeated or not reaction.message_id:
            return
        try:
            await self._show(room_id, reaction, outcome)
        except SendError as exc:
            # Acted on already: repeating the reaction would be a replay, which shows
            # nothing. The state is right; only the message does not say so yet.
            log.warning("matrix: what %s did was not shown: %s", reaction.reaction_id, exc)

    async def _show(self, room_id: str, reaction: IncomingReaction, outcome: PressOutcome) -> None:
        target = reaction.message_id
        sign = "+" if reaction.added else "-"  # taking back is an act of its own
        cause = f"{reaction.reaction_id or reaction.sender_id + target + reaction.emoji}{sign}"
        update = outcome.update
        if update is not None:
            content = render(
                update.text,
                msgtype=self.msgtype,
                people=update.people,
                mentions=update.mentions,
                everyone=update.everyone,
            )
            txn = transaction_id(f"edit:{cause}")
            await self.send(room_id, replacement(target, content), txn, "m.room.message")
            await self._unseed(room_id, target, update.buttons)
        if not outcome.ok and outcome.answer:
            name = reaction.sender_name or reaction.sender_id
            said = render(
                f"@{name}: {outcome.answer}",
                msgtype="m.notice",  # the bot talking: other bots don't answer it
                people=(Member(reaction.sender_id, name),),
                in_reply_to=target,
            )
            txn = transaction_id(f"answer:{cause}")
            await self.send(room_id, said, txn, "m.room.message")

    async def _unseed(
        self, room_id: str, event_id: str, buttons: Sequence[Sequence[Button]]
    ) -> None:
        """Take the bot's own reactions off `event_id` that its buttons no longer offer
        (an "until done" reminder that is done keeps no ✅ to click)."""
        keep = seeded_keys(buttons)
        try:
            ours = await self.client.own_reactions(room_id, event_id)
            for key, reaction in ours.items():
                if key in REACTION_PRESSES and key not in keep:
                    await self.client.redact(
                        room_id, reaction, transaction_id(f"unseed:{reaction}")
                    )
        except MatrixError as exc:
            log.warning("matrix: the reactions on %s were not updated: %s", event_id, exc)
