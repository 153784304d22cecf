"""The chat message a reminder occurrence is delivered as: its wording and mentions."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from storage.deliveries import Claim
from storage.outgoing import Member, OutgoingMessage
from storage.recurrence import format_local


def reminder_message(claim: Claim, now: datetime) -> OutgoingMessage:
    """The chat message for one occurrence; in a group it mentions who it is for."""
    audience = claim.audience
    mentions: tuple[str, ...] = ()
    people: list[Member] = []
    if claim.chat_type == "group" and audience.everyone:
        text = f"⏰ Reminder for everyone: {claim.content}"
    elif claim.chat_type == "group":
        people = [Member(claim.created_by, claim.created_by_name)] if audience.creator else []
        people += [m for m in audience.mentions if m.user_id != claim.created_by]
        people = [Member(m.user_id, m.name or m.user_id) for m in people]
        names = ", ".join(f"@{m.name}" for m in people)
        # Nobody to mention: a reminder for the group from a member who may not mention
        # everyone, posted in the chat all the same.
        text = (
            f"⏰ Reminder for {names}: {claim.content}"
            if people
            else f"⏰ Reminder: {claim.content}"
        )
        mentions = tuple(m.user_id for m in people)
    else:
        text = f"⏰ Reminder: {claim.content}"
    if claim.late:
        zone = ZoneInfo(claim.timezone)
        scheduled, delivered = claim.occurrence.astimezone(zone), now.astimezone(zone)
        due = (
            scheduled.strftime("%H:%M")
            if scheduled.date() == delivered.date()
            else format_local(claim.occurrence, zone)
        )
        text += f"\n(scheduled {due}, delivered {delivered:%H:%M} after downtime)"
    return OutgoingMessage(
        chat_id=claim.chat_id,
        text=text,
        mentions=mentions,
        kind="reminder",
        reminder_id=claim.reminder_id,
        occurrence=claim.occurrence,
        people=tuple(people),
    )
