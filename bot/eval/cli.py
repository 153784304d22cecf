"""`groupmate eval`: the command line of the eval."""

from __future__ import annotations

import argparse
import asyncio
import sys

from groupmate.bot.config import Config
from groupmate.bot.eval.cases import load_cases
from groupmate.bot.eval.report import failures, summarize, table, write_json
from groupmate.bot.eval.runner import CaseResult, EvalSettings, run_eval


def run(options: argparse.Namespace, config: Config) -> int:
    base_url = options.base_url or config.llm.base_url
    if not base_url:
        print("groupmate eval: give --base-url (or llm.base_url)", file=sys.stderr)
        return 2
    key = config.llm.api_key.get_secret_value() if config.llm.api_key else None
    settings = EvalSettings(
        base_url=base_url,
        model=options.model or config.llm.model,
        mode=options.mode,
        prompt_format=options.prompt_format,
        tool_schema=options.tool_schema,
        temperature=options.temperature,
        context_tokens=config.llm.context_tokens,
        max_output_tokens=config.llm.max_output_tokens,
        api_key=key,
        via=options.via,
        profile="minimal" if options.minimal else "tuned",
        fast_path=options.fast_path,
    )
    cases = load_cases(options.cases)
    if options.only:
        wanted = set(options.only)
        cases = [c for c in cases if c.id in wanted or wanted & set(c.tags)]
    label = settings.label()
    print(f"{len(cases)} cases, {settings.model} at {base_url}, {label}", flush=True)

    def progress(result: CaseResult) -> None:
        print(
            f"  {result.case.id:<34} {result.verdict.outcome.value:<15}"
            f" {result.latency_s:6.1f} s  {result.verdict.reason[:90]}",
            flush=True,
        )

    results = asyncio.run(run_eval(cases, settings, progress))
    summary = summarize(label, results)
    print()
    print(table([summary]))
    print()
    print(failures(results))
    path = write_json(options.results, settings, summary, results)
    print(f"\nwritten to {path}")
    return 0
