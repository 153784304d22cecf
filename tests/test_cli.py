from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests import stub_llm as s

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    base = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), "USER": "tester"}
    if "GROUPMATE_STORAGE_URL" not in env:
        env["GROUPMATE_STORAGE_URL"] = f"sqlite:///{tempfile.mkdtemp()}/groupmate.db"
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        input=stdin,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _chat(stdin: str, **env: str) -> subprocess.CompletedProcess[str]:
    return _run("chat", stdin=stdin, **env)


def test_console_chat_talks_to_the_llm_and_keeps_history(stub) -> None:
    stub.script(s.text("Hi tester!"), s.text("You said hello."))
    done = _chat("hello\nwhat did I say?\n/quit\n", OPENAI_BASE_URL=stub.base_url)
    assert done.returncode == 0, done.stderr
    assert "bot> Hi tester!" in done.stdout
    assert "bot> You said hello." in done.stdout
    second = stub.requests[1]["messages"]
    assert [m["content"] for m in second[1:]] == ["hello", "Hi tester!", "what did I say?"]
    assert any(t["function"]["name"] == "help" for t in stub.requests[0]["tools"])


def test_console_without_llm_explains_how_to_configure(stub) -> None:
    done = _chat("hello\n")
    assert done.returncode == 0, done.stderr
    assert "No language model is configured" in done.stdout
    assert stub.requests == []


def test_console_reports_llm_outage_without_a_traceback(stub) -> None:
    stub.fallback = s.error(401, "invalid api key")
    done = _chat("hello\n", OPENAI_BASE_URL=stub.base_url, OPENAI_API_KEY="sk-secret")
    assert done.returncode == 0
    assert "rejected the bot's credentials" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    assert "sk-secret" not in done.stdout + done.stderr


def test_console_sets_and_lists_reminders_in_its_database(stub, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'bot.db'}"
    arguments = {"type": "daily", "time": "9:30", "content": "water the plants"}
    stub.script(s.calls(("reminder_set", arguments)), s.calls(("reminder_list", {})))
    done = _chat(
        "remind me daily at 9:30 to water the plants\nlist\n",
        OPENAI_BASE_URL=stub.base_url,
        GROUPMATE_STORAGE_URL=url,
        GROUPMATE_TIMEZONE="Asia/Tokyo",
    )
    assert done.returncode == 0, done.stderr
    assert "bot> ⏰ Reminder #1 set for " in done.stdout
    assert "(Asia/Tokyo), every day at 09:30: water the plants" in done.stdout
    assert "#1 · next " in done.stdout
    assert (tmp_path / "bot.db").exists()


def test_db_upgrade_and_current(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    before = _run("db", "current", "--url", url)
    assert before.returncode == 0, before.stderr
    assert "schema revision none (behind 0002)" in before.stdout
    upgraded = _run("db", "upgrade", "--url", url)
    assert upgraded.returncode == 0, upgraded.stderr
    assert "schema revision 0002 (up to date)" in upgraded.stdout
    assert _run("db", "upgrade", "--url", url).returncode == 0


def test_db_with_a_bad_url_explains_itself(tmp_path: Path) -> None:
    done = _run("db", "upgrade", "--url", "mysql://user:hunter2@localhost/x")
    assert done.returncode == 2
    assert "use sqlite:/// or postgresql://" in done.stderr
    unreachable = _run("db", "upgrade", "--url", "postgresql://bot:hunter2@127.0.0.1:1/x")
    assert unreachable.returncode == 2
    assert "the database is unavailable" in unreachable.stderr
    assert "Traceback" not in done.stderr + unreachable.stderr
    assert "hunter2" not in done.stderr + unreachable.stderr
