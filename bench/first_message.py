"""The first message after a restart, on a real small model (issue 25).

Run: `make bench-model` (or `.venv/bin/python -m bench.first_message`). It needs the model
and llama-cpp-python that `make eval` builds and fetches (tests/llama_server.py), so it is
not part of `make bench`.

Each scenario starts a fresh llama-cpp-python server (Qwen2.5-Coder-1.5B, the GGUF's own
template, `--n_ctx 4096`: its prompt cache is cold, as after a restart) and `groupmate
serve` with a new user's config (llm.base_url, model, tool_mode: prompt), then posts one
plain message to POST /v1/messages:

- warm-up off: `llm.warm_up: false`, the message sent at once: the server reads the
  whole ~3,000-token prompt for it; then a second message, for the running bot's time;
- warm-up on, after ready: /healthz polled until its "llm" is "ready" (how long warming
  took is noted), then the message;
- warm-up on, at once: the message sent as soon as the bot answers, so it waits behind
  the warm-up at the one-slot server.

Prints a table and writes bench/results/first_message.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.llama_server import MODELS, QWEN_CODER_1_5B, ModelFiles, llama_server
from tests.processes import serve

RESULTS = Path(__file__).parent / "results" / "first_message.json"
MESSAGE = "@groupmate what can you do?"
N_CTX = 4096  # as the README starts the server
# Far beyond what a cold prompt takes on two cores: the bot's own timeout decides.
CLIENT_TIMEOUT = 900.0
_chats = itertools.count(1)


@contextmanager
def _bot(model: ModelFiles, *, warm_up: bool) -> Iterator[str]:
    """A fresh, cold llama server and `groupmate serve` on it; yields the bot's base URL."""
    with (
        tempfile.TemporaryDirectory(prefix="groupmate-first-") as folder,
        llama_server(model, chat_format=None, n_ctx=N_CTX) as server,
    ):
        config: dict[str, Any] = {
            "storage": {"url": f"sqlite:///{folder}/bot.db"},
            "bot": {"timezone": "Europe/Berlin"},
            # A new user's llm section, and the switch this benchmark is about.
            "llm": {
                "base_url": server.base_url,
                "model": server.model,
                "tool_mode": "prompt",
                "warm_up": warm_up,
            },
            "logging": {"level": "WARNING"},
        }
        with serve(config) as base_url:
            yield base_url


def _post(client: httpx.Client, base_url: str) -> dict[str, Any]:
    """One member's message in a new group chat: seconds to the reply, and the reply."""
    body = {
        "chat_id": f"bench:first-{next(_chats)}",
        "chat_type": "group",
        "sender_id": "u-alice",
        "sender_name": "Alice",
        "text": MESSAGE,
        "mentions_bot": True,
    }
    started = time.monotonic()
    response = client.post(f"{base_url}/v1/messages", json=body)
    seconds = time.monotonic() - started
    response.raise_for_status()
    said = " ".join(reply["text"] for reply in response.json()["replies"])
    return {"seconds": round(seconds, 2), "reply": " ".join(said.split())[:200]}


def _until_ready(client: httpx.Client, base_url: str, within: float) -> dict[str, Any]:
    """Polls /healthz until its "llm" leaves "warming": how long that took, and the end."""
    started = time.monotonic()
    status = "warming"
    while status == "warming" and time.monotonic() - started < within:
        status = str(client.get(f"{base_url}/healthz").json().get("llm", "no llm field"))
        if status == "warming":
            time.sleep(0.1)
    return {"seconds": round(time.monotonic() - started, 2), "status": status}


def measure(model: ModelFiles) -> dict[str, Any]:
    report: dict[str, Any] = {"model": model.name, "n_ctx": N_CTX, "message": MESSAGE}
    with httpx.Client(timeout=CLIENT_TIMEOUT) as client:
        print("warm-up off: the first message, then a second…", flush=True)
        with _bot(model, warm_up=False) as url:
            first = _post(client, url)
            report["warm_up_off"] = {"first": first, "second": _post(client, url)}
        print("warm-up on: waiting for ready, then the message…", flush=True)
        with _bot(model, warm_up=True) as url:
            warming = _until_ready(client, url, CLIENT_TIMEOUT)
            report["warm_up_after_ready"] = {"warming": warming, "first": _post(client, url)}
        print("warm-up on: the message at once…", flush=True)
        with _bot(model, warm_up=True) as url:
            report["warm_up_at_once"] = {"first": _post(client, url)}
    return report


def table(report: dict[str, Any]) -> str:
    off, ready, at_once = (
        report["warm_up_off"],
        report["warm_up_after_ready"],
        report["warm_up_at_once"],
    )
    rows = [
        ("warm-up off: first message", off["first"]["seconds"]),
        ("warm-up off: second message", off["second"]["seconds"]),
        (f"warm-up on: warming ({ready['warming']['status']})", ready["warming"]["seconds"]),
        ("warm-up on: first message after ready", ready["first"]["seconds"]),
        ("warm-up on: first message at once", at_once["first"]["seconds"]),
    ]
    width = max(len(label) for label, _ in rows)
    lines = [f"{report['model']}, --n_ctx {report['n_ctx']}, {report['message']!r}"]
    lines += [f"{label.ljust(width)}  {seconds:8.1f} s" for label, seconds in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", choices=sorted(MODELS), default=QWEN_CODER_1_5B.name)
    options = parser.parse_args()
    report = measure(MODELS[options.model])
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    print()
    print(table(report))
    for scenario in ("warm_up_off", "warm_up_after_ready", "warm_up_at_once"):
        print(f"  {scenario} replied: {report[scenario]['first']['reply'][:120]!r}")
    print(f"JSON written to {RESULTS}")


if __name__ == "__main__":
    main()
