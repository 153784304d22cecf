"""Matrix's buttons are reactions: the bot seeds ✅ 💤 👍 on a delivered reminder (those
its buttons stand for), a member's reaction acts as the press (the router maps it), and
what became of it shows on the message itself, edited in place (m.replace).

Every event sent here has a transaction id derived from what caused it (the message
seeded, the reaction acted on), so a retry or a replayed sync batch never posts twice.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from groupmate.bot.adapters.matrix_format import (
    annotation,
    render,
    replacement,
    seeded_keys,
    transaction_id,
)
from groupmate.bot.messages import IncomingReaction
from groupmate.bot.presses import PressOutcome
from groupmate.storage import Button, Member, SendError

log = logging.getLogger("groupmate.bot.adapters.matrix")

# (room id, content, transaction id, event type) -> the event id; raises SendError.
Send = Callable[[str, dict[str, Any], str, str], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class Presses:
    """Seeds the reactions that stand for buttons, and shows what a reaction did."""

    send: Send
    msgtype: str

    async def seed(self, room_id: str, event_id: str, buttons: Sequence[Sequence[Button]]) -> None:
        """Put the bot's own ✅ 💤 👍 on `event_id`, for those of `buttons` they stand
        for, so people click them instead of looking for the emoji. The message is out
        already: a reaction refused (the room's power levels) is logged, not raised, or
        the reminder would count as failed and be retried."""
        for key in seeded_keys(buttons):
            txn = transaction_id(f"seed:{event_id}:{key}")
            try:
                await self.send(room_id, annotation(event_id, key), txn, "m.reaction")
            except SendError as exc:
                log.warning("matrix: the %s reaction on %s was not added: %s", key, event_id, exc)

    async def show(
        self, room_id: str, reaction: IncomingReaction, name: str, outcome: PressOutcome | None
    ) -> None:
        """What a reaction that stands for a press did: the message it was put on is
        edited to read as `outcome.update` (its status lines: "✅ Done by Alice"). A
        refusal is said in the room, to the person, in reply to that message: Matrix has
        no message for one person alone, and a refusal must not go unsaid. A replay
        (the same reaction event in a replayed sync) shows nothing again."""
        if outcome is None or outcome.repeated or not reaction.message_id:
            return
        try:
            await self._show(room_id, reaction, name, outcome)
        except SendError as exc:
            # Acted on already: repeating the reaction would be a replay, which shows
            # nothing. The state is right; only the message does not say so yet.
            log.warning("matrix: what %s did was not shown: %s", reaction.reaction_id, exc)

    async def _show(
        self, room_id: str, reaction: IncomingReaction, name: str, outcome: PressOutcome
    ) -> None:
        target = reaction.message_id
        cause = reaction.reaction_id or f"{reaction.sender_id}:{target}:{reaction.emoji}"
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
        if not outcome.ok and outcome.answer:
            person = Member(reaction.sender_id, name)
            said = render(
                f"@{name}: {outcome.answer}",
                msgtype="m.notice",  # the bot talking: other bots don't answer it
                people=(person,),
                in_reply_to=target,
            )
            txn = transaction_id(f"answer:{cause}")
            await self.send(room_id, said, txn, "m.room.message")
