"""The eval's table (one column per mode and format) and its JSON record."""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groupmate.bot.eval.judge import Outcome
from groupmate.bot.eval.runner import CaseResult, EvalSettings
from groupmate.function_calls.handlers import builtin_tools
from groupmate.function_calls.internal_text import internal_marker


@dataclass(frozen=True, slots=True)
class Summary:
    label: str
    cases: int
    outcomes: dict[str, int]
    repairs: int
    latency_p50_s: float
    latency_p95_s: float
    prompt_tokens: float  # per case
    completion_tokens: float
    cached_share: float | None  # of prompt tokens, where the server reports it
    # Replies that showed a user internal text: tool names, argument paths, JSON, reprs.
    internal_text: int = 0

    @property
    def right_share(self) -> float:
        return self.outcomes.get(Outcome.RIGHT.value, 0) / max(self.cases, 1)

    @property
    def wrong_share(self) -> float:
        return self.outcomes.get(Outcome.WRONG.value, 0) / max(self.cases, 1)


def summarize(label: str, results: Sequence[CaseResult]) -> Summary:
    latencies = sorted(r.latency_s for r in results) or [0.0]
    count = Counter(r.verdict.outcome.value for r in results)
    prompt = sum(r.usage.prompt_tokens for r in results)
    cached = sum(r.usage.cached_tokens for r in results)
    return Summary(
        label=label,
        cases=len(results),
        outcomes={outcome.value: count.get(outcome.value, 0) for outcome in Outcome},
        repairs=sum(r.repairs for r in results),
        latency_p50_s=statistics.median(latencies),
        latency_p95_s=latencies[min(len(latencies) - 1, round(0.95 * (len(latencies) - 1)))],
        prompt_tokens=prompt / max(len(results), 1),
        completion_tokens=sum(r.usage.completion_tokens for r in results) / max(len(results), 1),
        cached_share=cached / prompt if cached and prompt else None,
        internal_text=sum(1 for r in results if shows_internal_text(r.reply)),
    )


def shows_internal_text(reply: str) -> bool:
    """The same check the LLM loop makes before a model's text becomes an answer, over
    the whole reply the user got (tools' own words too)."""
    return internal_marker(reply, builtin_tools().names()) is not None


def table(summaries: Sequence[Summary]) -> str:
    rows: list[tuple[str, list[str]]] = [
        ("cases", [str(s.cases) for s in summaries]),
        *(
            (outcome.value, [f"{s.outcomes[outcome.value]}" for s in summaries])
            for outcome in Outcome
        ),
        ("right share", [f"{s.right_share:.0%}" for s in summaries]),
        ("silently wrong share", [f"{s.wrong_share:.1%}" for s in summaries]),
        ("internal text shown", [str(s.internal_text) for s in summaries]),
        ("repair rounds", [str(s.repairs) for s in summaries]),
        ("latency p50 (s)", [f"{s.latency_p50_s:.1f}" for s in summaries]),
        ("latency p95 (s)", [f"{s.latency_p95_s:.1f}" for s in summaries]),
        ("prompt tokens / case", [f"{s.prompt_tokens:.0f}" for s in summaries]),
        ("completion tokens / case", [f"{s.completion_tokens:.0f}" for s in summaries]),
        (
            "cached prompt share",
            ["n/a" if s.cached_share is None else f"{s.cached_share:.0%}" for s in summaries],
        ),
    ]
    width = max(len(s.label) for s in summaries) + 2
    lines = ["metric".ljust(26) + "".join(s.label.rjust(width) for s in summaries)]
    lines += [name.ljust(26) + "".join(v.rjust(width) for v in values) for name, values in rows]
    return "\n".join(lines)


def failures(results: Sequence[CaseResult]) -> str:
    """One line per case that was not right: what happened and what the bot said."""
    lines = []
    for result in results:
        if result.verdict.outcome is Outcome.RIGHT:
            continue
        said = " ".join(result.reply.split())[:160]
        lines.append(
            f"  {result.case.id}: {result.verdict.outcome.value}: {result.verdict.reason}"
            f" | tools {result.tools or '-'} | said {said!r}"
        )
    return "\n".join(lines)


def write_json(
    folder: Path, settings: EvalSettings, summary: Summary, results: Sequence[CaseResult]
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    name = f"eval-{settings.model}-{summary.label}".replace("/", "_").replace(" ", "_")
    path = folder / f"{name}.json"
    record: dict[str, Any] = {
        "model": settings.model,
        "base_url": settings.base_url,
        "mode": settings.mode,
        # A minimal run sets none of these: the bot's defaults apply.
        **(
            {"format": "default", "tool_schema": "default", "temperature": "default"}
            if settings.profile == "minimal"
            else {
                "format": settings.prompt_format,
                "tool_schema": settings.tool_schema,
                "temperature": settings.temperature,
            }
        ),
        "via": settings.via,
        # minimal: only base_url, model and tool_mode were set, the rest the defaults.
        "profile": settings.profile,
        "fast_path": settings.fast_path if settings.profile == "tuned" else "default",
        "summary": {
            "cases": summary.cases,
            **summary.outcomes,
            "right_share": summary.right_share,
            "silently_wrong_share": summary.wrong_share,
            "internal_text_shown": summary.internal_text,
            "repair_rounds": summary.repairs,
            "latency_p50_s": summary.latency_p50_s,
            "latency_p95_s": summary.latency_p95_s,
            "prompt_tokens_per_case": summary.prompt_tokens,
            "completion_tokens_per_case": summary.completion_tokens,
            "cached_prompt_share": summary.cached_share,
        },
        "cases": [
            {
                "id": r.case.id,
                "outcome": r.verdict.outcome.value,
                "reason": r.verdict.reason,
                "reply": r.reply,
                "tools": r.tools,
                "repairs": r.repairs,
                "latency_s": round(r.latency_s, 3),
                "prompt_tokens": r.usage.prompt_tokens,
                "completion_tokens": r.usage.completion_tokens,
                "cached_tokens": r.usage.cached_tokens,
                "calls": r.trace,
            }
            for r in results
        ],
    }
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8")
    return path
