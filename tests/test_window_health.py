"""What the operator and the user are told about the model's window, over the HTTP API:
`/healthz` names a window too small for the bot's own instructions, the user reads one
plain sentence, and a window that fits says nothing."""

from __future__ import annotations

from groupmate.function_calls.internal_text import MISCONFIGURED
from groupmate.testing.stub_llm import StubLLM, text
from tests.http_harness import Servers, llm_section


async def test_a_window_too_small_is_reported_to_the_operator_not_blamed_on_the_user(
    servers: Servers, stub: StubLLM
) -> None:
    stub.fallback = text("never asked")
    small = {
        **llm_section(stub),
        "context_tokens": 1024,
        "max_output_tokens": 900,
        "warm_up": False,
    }
    api = await servers.start(llm=small)
    assert "llm_problem" not in (await api.client.get("/healthz")).json()  # not known yet
    (reply,) = await api.say("@groupmate hi there")
    assert reply["text"] == MISCONFIGURED.english
    health = (await api.client.get("/healthz")).json()
    assert health["llm"] == "misconfigured"
    assert (
        "1024 tokens" in health["llm_problem"] and "llm.max_output_tokens" in health["llm_problem"]
    )
    assert "hi there" not in health["llm_problem"]  # the operator's words, never the chat's
    assert stub.requests == []


async def test_a_window_that_fits_says_nothing(servers: Servers, stub: StubLLM) -> None:
    stub.fallback = text("Hello!")
    api = await servers.start(llm=llm_section(stub))
    (reply,) = await api.say("@groupmate hi there")
    assert reply["text"] == "Hello!"
    health = (await api.client.get("/healthz")).json()
    assert health["llm"] in ("ready", "warming") and "llm_problem" not in health
