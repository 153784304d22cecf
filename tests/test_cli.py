from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests import stub_llm as s

ROOT = Path(__file__).resolve().parent.parent


def _chat(stdin: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), "USER": "tester"}
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "chat"],
        input=stdin,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


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
