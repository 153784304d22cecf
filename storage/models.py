"""The tables. The reminders table is the source of truth; the scheduler only times it."""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import Any, Final

from sqlalchemy import (
    JSON,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    SmallInteger,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    text,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from groupmate.storage.clock import utc_now
from groupmate.storage.vocabulary import DeliveryOutcome, ReminderStatus

# Stable constraint names so migrations can refer to them on every backend.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# Reminders.status and deliveries.outcome: the values of storage.vocabulary's Literals.
REMINDER_ACTIVE: Final[ReminderStatus] = "active"
REMINDER_PAUSED: Final[ReminderStatus] = "paused"
REMINDER_DONE: Final[ReminderStatus] = "done"
REMINDER_CANCELLED: Final[ReminderStatus] = "cancelled"

OUTCOME_PENDING: Final[DeliveryOutcome] = "pending"
OUTCOME_SENT: Final[DeliveryOutcome] = "sent"
OUTCOME_SENT_LATE: Final[DeliveryOutcome] = "sent_late"
OUTCOME_SKIPPED_MISSED: Final[DeliveryOutcome] = "skipped_missed"
OUTCOME_SKIPPED_QUIET: Final[DeliveryOutcome] = "skipped_quiet"
OUTCOME_FAILED: Final[DeliveryOutcome] = "failed"
# Deleted after its occurrence was claimed, before delivery.
OUTCOME_CANCELLED: Final[DeliveryOutcome] = "cancelled"
DELIVERED: Final[tuple[DeliveryOutcome, ...]] = (OUTCOME_SENT, OUTCOME_SENT_LATE)


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes in, aware UTC datetimes out, whatever the backend stores."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        value = value.astimezone(UTC)
        # SQLite has no time zone type; store naive UTC so comparisons stay lexical.
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class Chat(Base):
    __tablename__ = "chats"

    chat_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    chat_type: Mapped[str] = mapped_column(String(16))
    timezone: Mapped[str | None] = mapped_column(String(64))
    settings: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    # Short reminder ids count up per chat and are never reused.
    last_short_id: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now, onupdate=utc_now)


class Reminder(Base):
    __tablename__ = "reminders"
    __table_args__ = (
        # A reminder's number is its own for life: a snooze of it shows the same number,
        # so the number is unique among reminders, not among their snoozes (0016).
        Index(
            "ux_reminders_number",
            "chat_id",
            "short_id",
            unique=True,
            sqlite_where=text("snooze_of IS NULL"),
            postgresql_where=text("snooze_of IS NULL"),
        ),
        Index("ix_reminders_due", "status", "next_fire_at"),
        Index("ix_reminders_chat", "chat_id", "status", "next_fire_at"),
        Index("ix_reminders_confirmed_as", "chat_id", "confirmed_as"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    short_id: Mapped[int] = mapped_column(Integer)
    chat_id: Mapped[str] = mapped_column(ForeignKey("chats.chat_id"))
    chat_type: Mapped[str] = mapped_column(String(16))
    created_by: Mapped[str] = mapped_column(String(255))
    created_by_name: Mapped[str] = mapped_column(String(255), default="")
    content: Mapped[str] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(16))
    # The rule in local terms: wall time, plus the date (once), weekday or day of month.
    local_time: Mapped[time] = mapped_column()
    # Which of a wall time that comes twice (the autumn change) it is: `time.fold`.
    local_fold: Mapped[bool] = mapped_column(server_default=text("false"))
    local_date: Mapped[date | None] = mapped_column()
    weekday: Mapped[int | None] = mapped_column(SmallInteger)
    day: Mapped[int | None] = mapped_column(SmallInteger)
    timezone: Mapped[str] = mapped_column(String(64))
    # Every `interval` days, weeks or months, counted from local_date.
    interval: Mapped[int] = mapped_column(SmallInteger, default=1)
    # A repeat within a day (kind "interval", 0017): the step in seconds, the end of its
    # daily window (None: day and night) and its weekdays as "0,1,2,3,4" (None: all).
    every_seconds: Mapped[int | None] = mapped_column(Integer)
    window_end: Mapped[time | None] = mapped_column()
    on_days: Mapped[str | None] = mapped_column(String(16))
    # Its limits (0017): the last local date, or instant, and the number in all.
    until_date: Mapped[date | None] = mapped_column()
    until_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    repeat_count: Mapped[int | None] = mapped_column(Integer)
    # weekdays: the work-day calendar followed ("CN"), as the chat's setting names it.
    calendar: Mapped[str | None] = mapped_column(String(8))
    # Who the message mentions: [{"user_id", "name"}] as the platform resolved them, the
    # creator (unless someone else was named), or the whole chat.
    mentions: Mapped[list[dict[str, str]] | None] = mapped_column(JSON)
    mention_creator: Mapped[bool] = mapped_column(default=True)
    everyone: Mapped[bool] = mapped_column(default=False)
    # A snooze is a one-time reminder of its own; this names the reminder it repeats,
    # whose number (short_id) it has.
    snooze_of: Mapped[str | None] = mapped_column(String(32), index=True)
    # A scheduled action instead of a text: {"command": "summary", "args": ""}, run as
    # the creator in the chat at each occurrence (`content` shows it: "/summary").
    action: Mapped[dict[str, str] | None] = mapped_column(JSON)
    # "Until done" (0019): who must say done (an AckRule) before it stops; NULL: no one
    # must, it keeps its rule. Its cap is the rule's `repeat_count`.
    ack: Mapped[str | None] = mapped_column(String(8))
    # Whether members may add themselves ("remind me too"): the asker can switch it off.
    # No Python default: rows inserted as an older revision held them must not name it.
    me_too: Mapped[bool] = mapped_column(server_default=text("true"))
    # The platform's id of the message that confirmed it, so that a 👍 on it adds one.
    confirmed_as: Mapped[str | None] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(16), default=REMINDER_ACTIVE)
    next_fire_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    version: Mapped[int] = mapped_column(Integer, default=1)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now, onupdate=utc_now)


class Acknowledgement(Base):
    """Someone said done to an occurrence of a reminder (its root: a snooze's done is its
    reminder's), once per person and occurrence."""

    __tablename__ = "acknowledgements"
    __table_args__ = (UniqueConstraint("reminder_id", "occurrence", "user_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    reminder_id: Mapped[str] = mapped_column(ForeignKey("reminders.id", ondelete="CASCADE"))
    occurrence: Mapped[datetime] = mapped_column(UTCDateTime())
    user_id: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(String(255), default="")
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    via: Mapped[str] = mapped_column(String(16))  # an AckVia


class PressRecord(Base):
    """A button press (or reaction) already acted on, by the platform's id of it, with
    the answer given: a replay of it gets the same answer and changes nothing. Pruned
    after a day (platforms retry within minutes)."""

    __tablename__ = "presses"

    press_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    chat_id: Mapped[str] = mapped_column(String(255))
    at: Mapped[datetime] = mapped_column(UTCDateTime(), index=True)
    # None while it is being acted on (a replay meanwhile acts not, and says nothing).
    ok: Mapped[bool | None] = mapped_column()
    answer: Mapped[str | None] = mapped_column(Text)


class Delivery(Base):
    __tablename__ = "deliveries"
    __table_args__ = (
        UniqueConstraint("reminder_id", "occurrence"),
        Index("ix_deliveries_pending", "outcome", "lease_until"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    reminder_id: Mapped[str] = mapped_column(ForeignKey("reminders.id", ondelete="CASCADE"))
    occurrence: Mapped[datetime] = mapped_column(UTCDateTime())
    outcome: Mapped[str] = mapped_column(String(16), default=OUTCOME_PENDING)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    late: Mapped[bool] = mapped_column(default=False)
    last_error: Mapped[str | None] = mapped_column(Text)
    # The platform's id of the sent message, so that a reply to it can snooze it.
    message_id: Mapped[str | None] = mapped_column(String(255), index=True)
    # A pending delivery whose lease ran out belongs to a dispatcher that died mid-send.
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    claimed_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class ChatMessage(Base):
    """Every message of an enabled chat, kept for context and summaries."""

    __tablename__ = "messages"
    __table_args__ = (
        UniqueConstraint("chat_id", "message_id"),
        Index("ix_messages_chat_time", "chat_id", "created_at"),
        Index("ix_messages_chat_id_order", "chat_id", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    chat_id: Mapped[str] = mapped_column(String(255))
    # The platform's id; None for the bot's own replies. Unique per chat: a redelivered
    # message is recognised and handled once.
    message_id: Mapped[str | None] = mapped_column(String(255))
    sender_id: Mapped[str] = mapped_column(String(255))
    sender_name: Mapped[str] = mapped_column(String(255), default="")
    text: Mapped[str] = mapped_column(Text)
    from_bot: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    # When the bot was done with the message (answered, or decided not to). A platform
    # redelivers a message whose answer a crash lost; only a row without this mark is
    # handled again.
    answered_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # When the platform accepted the answer. Answered but not delivered: a redelivery
    # resends the logged answer rather than deciding (and acting on) a new one.
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # The platform id of the message this one answers: on the bot's own rows, the message
    # it answered; on people's, the one they replied to (where the platform says).
    reply_to: Mapped[str | None] = mapped_column(String(255))


class MessageReaction(Base):
    """A person's reaction (an emoji) to a logged message, while it stands: digests count
    them. Removed when taken back, and with the message (retention, /forget)."""

    __tablename__ = "reactions"
    __table_args__ = (UniqueConstraint("chat_id", "message_id", "sender_id", "emoji"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    chat_id: Mapped[str] = mapped_column(String(255))
    # The platform's id of the message reacted to (messages.message_id).
    message_id: Mapped[str] = mapped_column(String(255))
    sender_id: Mapped[str] = mapped_column(String(255))
    # As the platform names it: "👍", ":tada:" (Slack), "THUMBSUP" (Lark).
    emoji: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now)
    # The platform's id of the reaction itself, where it takes one back by that id alone
    # (Matrix redacts the reaction's event).
    reaction_id: Mapped[str | None] = mapped_column(String(255))


class AdapterState(Base):
    """Small values a platform adapter must keep across restarts (a sync position, a
    login), keyed by the adapter's own names."""

    __tablename__ = "adapter_state"

    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utc_now, onupdate=utc_now)


class LLMUsage(Base):
    """Tokens the LLM used, per chat and UTC day: what budgets count."""

    __tablename__ = "llm_usage"

    chat_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    prompt_tokens: Mapped[int] = mapped_column(Integer, default=0)
    completion_tokens: Mapped[int] = mapped_column(Integer, default=0)
    requests: Mapped[int] = mapped_column(Integer, default=0)
    # Requests whose endpoint reported no usage: their tokens are estimates.
    estimated_requests: Mapped[int] = mapped_column(Integer, default=0)


class LLMTurn(Base):
    """One model turn, for the dashboard: what was asked, what the model called and how
    that went. Bounded: only the newest are kept (`TurnLog.keep`)."""

    __tablename__ = "llm_turns"
    __table_args__ = (Index("ix_llm_turns_chat", "chat_id", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    chat_id: Mapped[str] = mapped_column(String(255))
    sender_id: Mapped[str] = mapped_column(String(255))
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    tool_mode: Mapped[str] = mapped_column(String(16))
    latency_ms: Mapped[int] = mapped_column(Integer)
    llm_calls: Mapped[int] = mapped_column(Integer)
    repairs: Mapped[int] = mapped_column(Integer)
    prompt_tokens: Mapped[int] = mapped_column(Integer)
    completion_tokens: Mapped[int] = mapped_column(Integer)
    # The endpoint reported no usage for some request: the tokens are estimates.
    estimated: Mapped[bool] = mapped_column(default=False)
    # [{name, arguments, outcome, detail}], as the model called them.
    calls: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    # [{tool, score, why}]: the tools the message was offered, best first, and why each.
    offered: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list, server_default="[]")
    question: Mapped[str] = mapped_column(Text)
    reply: Mapped[str] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)


class AuditRow(Base):
    """One executed tool call that changed state or reached outside the bot: who made
    the bot do what, from where, and what became of it. Pruned by age."""

    __tablename__ = "audit_log"
    __table_args__ = (
        Index("ix_audit_log_chat", "chat_id", "id"),
        Index("ix_audit_log_at", "at"),
        Index("ix_audit_log_target", "chat_id", "target_label"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    chat_id: Mapped[str] = mapped_column(String(255))
    sender_id: Mapped[str] = mapped_column(String(255))
    sender_name: Mapped[str] = mapped_column(String(255), default="")
    auth: Mapped[str] = mapped_column(String(16))
    source: Mapped[str] = mapped_column(String(16))
    tool: Mapped[str] = mapped_column(String(64))
    effect: Mapped[str] = mapped_column(String(16))
    # The arguments, redacted: secrets masked, long text cut.
    arguments: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    outcome: Mapped[str] = mapped_column(String(16))
    # The object the call touched (a reminder's full id) and how users name it ("#4").
    target: Mapped[str | None] = mapped_column(String(255))
    target_label: Mapped[str | None] = mapped_column(String(64))
    detail: Mapped[str | None] = mapped_column(Text)


class PluginData(Base):
    """A plugin's stored values: one JSON value per (plugin, chat, key). `chat_id` is ""
    for the plugin's global values; a chat's rows go with the chat's data."""

    __tablename__ = "plugin_data"

    plugin: Mapped[str] = mapped_column(String(64), primary_key=True)
    chat_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    value: Mapped[Any] = mapped_column(JSON)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class CalendarFeed(Base):
    """A private calendar link to one chat's reminders (`/calendar`): only the sha256 of
    its token is kept, so a copy of the database opens no feed. `owner_id` is the member
    who asked for it; None: the whole-chat feed an admin made."""

    __tablename__ = "calendar_feeds"
    __table_args__ = (Index("ix_calendar_feeds_chat", "chat_id", "owner_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    chat_id: Mapped[str] = mapped_column(String(255))
    owner_id: Mapped[str | None] = mapped_column(String(255))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # Set when revoked (or replaced by a newer link): from then on the link answers 404.
    revoked_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
