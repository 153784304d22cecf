"""`make eval`: the eval corpus against a real local model (llama.cpp through
llama-cpp-python, built and fetched from PyPI by tests/llama_server.py): first the plain
corpus as a new user's bot meets it ("minimal"), then in native mode and in prompt mode
with each format; one table, JSON in bench/results/.

    python -m tests.eval_local [--model qwen2.5-0.5b-instruct] [--only ID_OR_TAG ...]
        [--runs LABEL ...]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
from dataclasses import dataclass
from pathlib import Path

from groupmate.bot.eval import load_cases, run_eval
from groupmate.bot.eval.report import failures, summarize, table, write_json
from groupmate.bot.eval.runner import CaseResult, EvalSettings, Profile, Via
from tests.llama_server import MODELS, QWEN_CODER_1_5B, llama_server

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
N_CTX = 4096
MAX_OUTPUT = 512  # room for the ~3,000-token prompt in a 4k context
# Native mode alternates two prompts (see llama_server); measured with this cap: one
# cold case at 110 s, then 13-26 s a case, the server at about 10 GB resident.
NATIVE_RAM_CACHE = 200_000_000


@dataclass(frozen=True, slots=True)
class Run:
    label: str
    mode: str  # native | prompt
    prompt_format: str = "hermes"
    schema: str = "auto"
    chat_format: str | None = None  # the server's; None = the GGUF's own template
    corpus: Path = ROOT / "evals"
    via: Via = "handle"
    default: bool = True  # in a plain `make eval`; else only by --runs
    profile: Profile = "tuned"
    fast_path: bool = False  # reminders.fast_path of a tuned run (minimal: the default)


PLAIN = ROOT / "evals" / "plain"
# "minimal" is what a new user gets (issue 25): the server started as the README shows
# (`--n_ctx 4096`, the GGUF's own template), a config of llm.base_url, model and
# tool_mode only, ordinary members, the real clock; the same corpus with the tuned
# settings next to it measures what the defaults still leave out. Native mode shows the
# full view by default. The compact view there is opt-in: it takes as long as the native
# run (40 minutes on 2 cores) and did no better on the subset that was measured. The
# hidden corpus was never used for tuning; it and the plain one go through the HTTP API,
# as a platform bridge sends. The quick runs go first.
RUNS = [
    Run("minimal", "prompt", corpus=PLAIN, via="http", profile="minimal"),
    # With the grammar's fast path on, as in "minimal": the two differ in llm settings only.
    Run("plain prompt/hermes", "prompt", corpus=PLAIN, via="http", fast_path=True),
    # The README's best figure, with the defaults and ordinary members (the case's clock).
    Run(
        "hidden minimal", "prompt", corpus=ROOT / "evals" / "hidden", via="http", profile="minimal"
    ),
    Run("prompt/hermes", "prompt"),
    Run("prompt/json", "prompt", "json"),
    Run("hidden prompt/hermes", "prompt", corpus=ROOT / "evals" / "hidden", via="http"),
    Run("hidden prompt/json", "prompt", "json", corpus=ROOT / "evals" / "hidden", via="http"),
    Run("native", "native", chat_format="chatml-function-calling"),
    Run(
        "native compact",
        "native",
        schema="compact",
        chat_format="chatml-function-calling",
        default=False,
    ),
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
    parser.add_argument("--runs", nargs="*", default=[run.label for run in RUNS if run.default])
    options = parser.parse_args()
    model = MODELS[options.model]
    summaries = []
    for run in RUNS:
        if run.label not in options.runs:
            continue
        cases = load_cases(run.corpus)
        if options.only:
            wanted = set(options.only)
            cases = [c for c in cases if c.id in wanted or wanted & set(c.tags)]
        print(f"\n== {model.name}, {run.label}: {len(cases)} cases", flush=True)
        cache = NATIVE_RAM_CACHE if run.mode == "native" else None
        with llama_server(
            model, chat_format=run.chat_format, n_ctx=N_CTX, ram_cache_bytes=cache
        ) as server:
            # In the minimal profile only base_url, model and mode reach the bot's config.
            settings = EvalSettings(
                server.base_url,
                server.model,
                run.mode,
                run.prompt_format,
                tool_schema=run.schema,
                context_tokens=N_CTX,
                max_output_tokens=MAX_OUTPUT,
                via=run.via,
                profile=run.profile,
                fast_path=run.fast_path,
            )
            results = asyncio.run(run_eval(cases, settings, _progress))
            reused, total = server.prefix_cache()
        summary = summarize(run.label, results)
        if total:  # the server's own count: llama-cpp-python reports none in `usage`
            summary = dataclasses.replace(summary, cached_share=reused / total)
        summaries.append(summary)
        print(failures(results))
        print(f"written to {write_json(RESULTS, settings, summary, results)}")
    print()
    print(table(summaries))


if __name__ == "__main__":
    main()
