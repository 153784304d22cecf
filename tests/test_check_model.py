"""`groupmate check` against a model server: a model name the server does not offer (the
default gpt-4o-mini at a local server, say) is said, with the names it does offer."""

from __future__ import annotations

from pathlib import Path

from groupmate.testing.stub_llm import StubLLM
from tests.test_cli import _config, _run


def test_the_default_model_at_a_local_server_is_warned_with_what_it_offers(
    stub: StubLLM, tmp_path: Path
) -> None:
    # As a person tries a local server first: OPENAI_BASE_URL, and no config of the model.
    done = _run("check", "--config", str(_config(tmp_path)), OPENAI_BASE_URL=stub.base_url)
    assert done.returncode == 0, done.stderr
    assert "llm: gpt-4o-mini at http://127.0.0.1:" in done.stdout
    assert (
        f"groupmate: warning: llm.model is not set, so requests to {stub.base_url} name "
        "gpt-4o-mini, OpenAI's model; it offers: stub. Set llm.model to one of them"
    ) in done.stderr
    assert "Traceback" not in done.stderr


def test_a_model_the_server_does_not_list_is_said_with_the_list(
    stub: StubLLM, tmp_path: Path
) -> None:
    llm = {"base_url": stub.base_url, "model": "qwen2.5-7b"}
    done = _run("check", "--config", str(_config(tmp_path, llm=llm)))
    assert done.returncode == 0, done.stderr
    assert (
        f"groupmate: warning: the server at {stub.base_url} does not list llm.model "
        "qwen2.5-7b; it offers: stub. Set llm.model to one of them"
    ) in done.stderr


def test_a_model_the_server_lists_passes_quietly(stub: StubLLM, tmp_path: Path) -> None:
    llm = {"base_url": stub.base_url, "model": "stub"}
    done = _run("check", "--config", str(_config(tmp_path, llm=llm)))
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
