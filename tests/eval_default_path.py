"""`make eval`, the default path: a real small model behind the minimal config a new
user writes, with every built-in tool and six real MCP servers.

llama-cpp-python (which says nothing of its window) serves Qwen2.5-Coder-1.5B at
`--n_ctx 4096`; the bot's config has `llm.base_url`, `model` and `tool_mode` and nothing
else, so it assumes 4,096 tokens. An ordinary member of a group asks, on the real
clock, what only the model can answer: small talk (English and Chinese), the reminders
list, a summary of what was said, and the time in another city (the MCP time server),
in prompt mode (the GGUF's own template) and native mode (`chatml-function-calling`).
A case is answered when the reply is the model's or its tool's, not a refusal; an
overflow is any reply that blames the message's length or the setup.

    python -m tests.eval_default_path [--modes prompt native] [--model NAME]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.bot.messages import IncomingMessage
from groupmate.function_calls.internal_text import (
    COULD_NOT_DO,
    MESSAGE_TOO_LONG,
    MISCONFIGURED,
    NO_ANSWER,
    UNFINISHED,
)
from tests.llama_server import MODELS, QWEN_CODER_1_5B, llama_server
from tests.mcp_servers import default_path_servers

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "eval_default_path.json"
N_CTX = 4096
REFUSALS = [
    sentence
    for plain in (MESSAGE_TOO_LONG, MISCONFIGURED, COULD_NOT_DO, UNFINISHED, NO_ANSWER)
    for sentence in (plain.english, plain.chinese)
]
OVERFLOWS = [MESSAGE_TOO_LONG.english, MESSAGE_TOO_LONG.chinese, MISCONFIGURED.english]
OVERFLOWS += [MISCONFIGURED.chinese, "too long for the language model"]
# What the group said before the summary is asked for.
CHAT = [
    ("Alice", "can we move the launch to Thursday? the payment review slipped"),
    ("Bob", "Thursday works for me, I'll tell the customers"),
    ("Carol", "ok, and the team dinner stays on Wednesday at 7"),
    ("Bob", "I'll book 海底捞 for 8 people"),
]


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    text: str
    # The reply and the tools called -> whether it answers the request.
    judge: Callable[[str, list[str]], bool]


def _tokyo(reply: str, called: list[str]) -> bool:
    """Tokyo's time, right to within five minutes: from the time server, or from the
    chat a minute after the server said it."""
    now = time.time() + 9 * 3600
    for hour, minute in re.findall(r"(?<!\d)(\d{1,2}):(\d\d)", reply):
        said = int(hour) * 60 + int(minute)
        for moment in (now - 300, now, now + 60):
            told = time.gmtime(moment)
            if (
                said == told.tm_hour * 60 + told.tm_min
                or abs(said - (told.tm_hour * 60 + told.tm_min)) <= 5
            ):
                return True
    return False


CASES = [
    Case("talk-en", "hi! how is your day going?", lambda reply, called: not called),
    Case("talk-zh", "你好呀，今天过得怎么样？", lambda reply, called: not called),
    Case(
        "list",
        "what reminders do we have here?",
        lambda reply, called: "reminder_list" in called and "no active reminders" in reply,
    ),
    # From the summary tool or from the chat in the prompt: the user gets the gist.
    Case(
        "summary", "summarize what we discussed", lambda reply, called: "thursday" in reply.lower()
    ),
    Case("mcp-time", "what time is it in Tokyo right now?", _tokyo),
    Case("mcp-time-zh", "东京现在几点了？", _tokyo),
]


async def run_mode(
    base_url: str, model: str, mode: str, work: Path, cases: list[Case]
) -> list[dict[str, Any]]:
    config = {
        "storage": {"url": f"sqlite:///{work / 'bot.db'}"},
        "llm": {"base_url": base_url, "model": model, "tool_mode": mode},
        "mcp": {"servers": default_path_servers(work)},
    }
    rows = []
    async with Bot(parse_config(config, environ={})) as bot:
        assert bot.turns is not None
        for number, (name, text) in enumerate(CHAT):
            sender = name.lower()
            await bot.handle(
                IncomingMessage("g1", "group", f"u-{sender}", name, text, message_id=f"c{number}")
            )
        for number, case in enumerate(cases):
            message = IncomingMessage(
                "g1", "group", "u-ann", "Ann", f"@groupmate {case.text}", message_id=f"q{number}"
            )
            began = time.perf_counter()
            replies = await bot.handle(message)
            seconds = time.perf_counter() - began
            reply = "\n".join(r.text for r in replies)
            await asyncio.sleep(0.5)  # the turn's log is written in the next batch
            turn = next(t for t in await bot.turns.recent(chat_id="g1", limit=20)
                        if t.question.endswith(case.text))  # fmt: skip
            called = [c["name"] for c in turn.calls]
            refused = any(sentence in reply for sentence in REFUSALS)
            rows.append(
                {
                    "mode": mode,
                    "case": case.id,
                    "answered": bool(reply) and not refused and case.judge(reply, called),
                    "overflow": any(sentence in reply for sentence in OVERFLOWS),
                    "offered": [o["tool"] for o in turn.offered],
                    "called": called,
                    "arguments": [c.get("arguments") for c in turn.calls],
                    "prompt_tokens": turn.prompt_tokens,
                    "seconds": round(seconds, 1),
                    "reply": reply[:300],
                }
            )
            print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modes", nargs="*", default=["prompt", "native"])
    parser.add_argument("--model", choices=sorted(MODELS), default=QWEN_CODER_1_5B.name)
    parser.add_argument("--cases", nargs="*", help="only these cases (ids), in order")
    options = parser.parse_args()
    rows: list[dict[str, Any]] = []
    for mode in options.modes:
        chat_format = "chatml-function-calling" if mode == "native" else None
        cache = 200_000_000 if mode == "native" else None
        with (
            llama_server(
                MODELS[options.model], chat_format=chat_format, n_ctx=N_CTX, ram_cache_bytes=cache
            ) as server,
            tempfile.TemporaryDirectory() as work,
        ):
            chosen = [c for c in CASES if not options.cases or c.id in options.cases]
            rows += asyncio.run(run_mode(server.base_url, server.model, mode, Path(work), chosen))
    print("\n| mode | case | answered | overflow | offered | called | prompt tokens | s |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(
            f"| {row['mode']} | {row['case']} | {row['answered']} | {row['overflow']} "
            f"| {', '.join(row['offered']) or 'none'} | {', '.join(row['called']) or 'none'} "
            f"| {row['prompt_tokens']} | {row['seconds']} |"
        )
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(rows, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
