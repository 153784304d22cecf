"""The smoke test on a real small model (llama.cpp, from PyPI): `make eval` runs it; it is
too slow for `make test` on two cores (minutes to build, tens of seconds per answer)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from groupmate.bot.eval import Outcome, load_cases
from groupmate.bot.eval.runner import EvalSettings, run_case
from tests.eval_local import MAX_OUTPUT, N_CTX
from tests.llama_server import LlamaServer, llama_server

pytestmark = pytest.mark.realmodel
CASES = {c.id: c for c in load_cases(Path(__file__).resolve().parent.parent / "evals")}


@pytest.fixture(scope="module")
def server() -> Iterator[LlamaServer]:
    # The mode that did best in the eval: the GGUF's own template, tools in the prompt.
    with llama_server(chat_format=None, n_ctx=N_CTX) as running:
        yield running


@pytest.mark.parametrize("case_id", ["set-tomorrow-9", "talk-hi"])
async def test_a_real_model_sets_exactly_that_reminder_and_chats_without_tools(
    server: LlamaServer, case_id: str
) -> None:
    settings = EvalSettings(
        server.base_url,
        server.model,
        "prompt",
        "hermes",
        context_tokens=N_CTX,
        max_output_tokens=MAX_OUTPUT,
    )
    result = await run_case(CASES[case_id], settings)
    assert result.verdict.outcome is Outcome.RIGHT, (result.verdict, result.reply)
