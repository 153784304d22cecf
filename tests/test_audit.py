"""The audit log: rows ride the group commit, read back newest first and filtered, are
pruned by age, keep secrets and long text out, and answer "who set reminder #4?" (`/history #4`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.bot.messages import IncomingMessage
from groupmate.function_calls.audit import MASK, redacted
from groupmate.storage import Database, upgrade
from groupmate.storage.audit import AuditEntry, AuditLog, AuditQuery

T0 = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)


def entry(n: int, *, chat: str = "g1", tool: str = "reminder_set", days: int = 0) -> AuditEntry:
    return AuditEntry(
        at=T0 + timedelta(days=days, minutes=n),
        chat_id=chat,
        sender_id="u-alice",
        sender_name="Alice",
        auth="platform",
        source="command",
        tool=tool,
        effect="write",
        outcome="ok",
        arguments={"content": f"task {n}"},
        target=f"id-{n}",
        target_label=f"#{n}",
    )


async def test_rows_are_written_read_filtered_and_pruned(database_url: str) -> None:
    database = Database(database_url)
    upgrade(database)
    try:
        audit = AuditLog(database, max_age=timedelta(days=90))
        for n in range(4):
            await audit.record(entry(n))
        await audit.record(entry(9, chat="g2", tool="reminder_delete", days=-100))
        # Read-your-writes: the rows were only queued, and the read sees them.
        rows = await audit.page(AuditQuery(chat_id="g1"))
        assert [row.target_label for row in rows] == ["#3", "#2", "#1", "#0"]
        assert rows[0].arguments == {"content": "task 3"} and rows[0].id > rows[1].id
        (only,) = await audit.page(AuditQuery(chat_id="g1", target_label="#2"))
        assert only.target == "id-2"
        older = await audit.page(AuditQuery(chat_id="g1", before=rows[1].id, limit=10))
        assert [row.target_label for row in older] == ["#1", "#0"]
        recent = await audit.page(AuditQuery(since=T0 + timedelta(minutes=2)))
        assert [row.target_label for row in recent] == ["#3", "#2"]
        assert [r.chat_id for r in await audit.page(AuditQuery(tool="reminder_delete"))] == ["g2"]
        assert await audit.prune_expired(T0) == 1
        assert await audit.page(AuditQuery(chat_id="g2")) == []
    finally:
        await database.aclose()


def test_arguments_are_summarised_without_secrets() -> None:
    summary = redacted(
        {
            "query": "weather",
            "api_key": "sk-123",
            "headers": {"Authorization": "Bearer x", "Accept": "json"},
            "password": None,
            "text": "y" * 500,
            "items": list(range(50)),
            "nested": {"a": {"b": {"c": {"d": 1}}}},
        }
    )
    assert summary["query"] == "weather" and summary["api_key"] == MASK
    assert summary["headers"] == {"Authorization": MASK, "Accept": "json"}
    assert summary["password"] == MASK
    assert len(summary["text"]) == 120 and summary["text"].endswith("…")
    assert len(summary["items"]) == 20
    assert summary["nested"] == {"a": {"b": {"c": "…"}}}


async def test_who_set_a_reminder_and_who_changed_it(tmp_path: Path) -> None:
    config = parse_config(
        {
            "storage": {"url": f"sqlite:///{tmp_path / 'bot.db'}"},
            "bot": {"admins": ["u-admin"], "timezone": "Europe/Berlin"},
        },
        environ={},
    )

    def said(text: str, sender: str, name: str) -> IncomingMessage:
        return IncomingMessage(
            chat_id="g1", chat_type="group", sender_id=sender, sender_name=name, text=text
        )

    async with Bot(config) as bot:
        await bot.handle(said("/remind every monday at 9 standup", "u-alice", "Alice"))
        await bot.handle(said("/edit #1 at 10", "u-admin", "Admin"))
        await bot.handle(said("/pause #1", "u-bob", "Bob"))  # refused: not Bob's
        (reply,) = await bot.handle(said("/history #1", "u-carol", "Carol"))
        lines = reply.text.splitlines()
        assert lines[0] == "Reminder #1 (Europe/Berlin):"
        assert lines[1].endswith("· set by Alice") and lines[2].endswith("· changed by Admin")
        assert len(lines) == 3  # Bob's refused pause changed nothing; it never fired
        ctx = await bot.context(said("who set #7?", "u-carol", "Carol"))
        missing = await bot.invoker.run(ctx, "reminder_history", {"reminder_id": "7"})
        assert (missing.failure, missing.reply) == (
            "not_found",
            "I have no record of reminder #7 in this chat.",
        )
        # Asking is a read: it is not audited itself.
        assert bot.audit is not None
        tools = {row.tool for row in await bot.audit.page(AuditQuery(chat_id="g1"))}
        assert tools == {"reminder_set", "reminder_update", "reminder_pause"}


def test_secrets_in_urls_are_masked_and_names_match_whole_words() -> None:
    summary = redacted(
        {
            "url": "https://user:pw@example.com/a?api_key=SECRET&q=cats&access_token=t",
            "tokens_per_day": 200_000,
            "author": "Alice",
            "X-Auth-Token": "abc",
        }
    )
    assert summary["url"] == "https://***@example.com/a?api_key=***&q=cats&access_token=***"
    assert summary["tokens_per_day"] == 200_000 and summary["author"] == "Alice"
    assert summary["X-Auth-Token"] == MASK


async def test_showing_is_not_audited_and_a_refused_change_is(tmp_path: Path) -> None:
    config = parse_config(
        {"storage": {"url": f"sqlite:///{tmp_path / 'bot.db'}"}, "bot": {"admins": ["u-admin"]}},
        environ={},
    )

    def said(text: str, sender: str = "u-alice") -> IncomingMessage:
        return IncomingMessage(
            chat_id="g1", chat_type="group", sender_id=sender, sender_name=sender, text=text
        )

    async with Bot(config) as bot:
        for shown in ("/tools", "/budget", "/settings", "/reminders", "/history"):
            await bot.handle(said(shown))
        (refused,) = await bot.handle(said("/budget 1000"))
        assert refused.text == "Only a group admin can change this chat's budget."
        await bot.handle(said("/budget 1000", "u-admin"))
        assert bot.audit is not None
        rows = await bot.audit.page(AuditQuery(chat_id="g1"))
        assert [(r.tool, r.sender_id, r.outcome, r.detail) for r in rows] == [
            ("token_budget", "u-admin", "ok", None),
            ("token_budget", "u-alice", "refused", "forbidden"),
        ]
        assert rows[0].arguments == {"tokens_per_day": 1000}


def test_remote_tools_say_what_they_do() -> None:
    from mcp_types import ToolAnnotations

    from groupmate.function_calls.remote.mcp_client import _effect

    assert _effect(None) == "write"
    assert _effect(ToolAnnotations(read_only_hint=True)) == "external"  # MCP's open world
    assert _effect(ToolAnnotations(read_only_hint=True, open_world_hint=False)) == "read"
    assert _effect(ToolAnnotations(destructive_hint=True)) == "write"
