"""`groupmate eval`: the command line of the eval."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import get_args

from bot.config import Config
from bot.eval.cases import load_cases
from bot.eval.report import failures, summarize, table, write_json
from bot.eval.runner import CaseResult, EvalSettings, Via, run_eval
from function_calls.llm import ToolSchema
from function_calls.prompt_formats import PROMPT_FORMATS

DEFAULT_CASES = Path("evals")
DEFAULT_RESULTS = Path("bench/results")


def add_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = commands.add_parser(
        "eval", parents=[common], help="run the eval corpus against an OpenAI-compatible endpoint"
    )
    parser.add_argument("--base-url", help="the endpoint (default: llm.base_url)")
    parser.add_argument("--model", help="the model (default: llm.model)")
    parser.add_argument("--mode", choices=["native", "prompt"], default="native")
    parser.add_argument(
        "--format", choices=list(PROMPT_FORMATS), default="hermes", dest="prompt_format"
    )
    parser.add_argument(
        "--schema",
        choices=get_args(ToolSchema),
        default="auto",
        dest="tool_schema",
        help="llm.tool_schema: auto is compact in prompt mode and under an 8k window",
    )
    parser.add_argument(
        "--temperature", type=float, default=0.0, help="sampling temperature (default 0)"
    )
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES, help="a file or folder")
    parser.add_argument("--only", nargs="*", default=[], help="case ids or tags to run")
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS, help="JSON goes here")
    parser.add_argument(
        "--via",
        choices=get_args(Via),
        default="handle",
        help="send each case's message to Bot.handle or POST it to /v1/messages of the HTTP API",
    )
    parser.add_argument(
        "--minimal",
        action="store_true",
        help="configure the bot as a new user would: only llm.base_url, model and tool_mode "
        "(--mode), the rest the defaults; every sender an ordinary member",
    )
    parser.add_argument(
        "--fast-path",
        action="store_true",
        help="keep reminders.fast_path on (a request the grammar reads whole is set without "
        "the model); off by default, so that the model is what is measured",
    )


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
