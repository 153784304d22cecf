"""GET /metrics and JSON logs, end to end: real bots on uvicorn, the stub model behind the
real openai SDK, a reminder sent to a real receiver, a real OneBot connection, a real MCP
server and OpenAPI server; each scrape parsed by prometheus_client's own parser."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import re
import threading
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import prometheus_client
import pytest
from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

from groupmate.bot.cli import main
from groupmate.bot.config import load_config, parse_config
from groupmate.bot.logs import new_correlation_id, setup_logging
from groupmate.testing.stub_llm import StubLLM, calls, error, raw, text
from groupmate.testing.threaded_server import ThreadedServer
from tests.conftest import ROOT, eventually
from tests.http_harness import TOKEN, Api, Servers, llm_section, make_due
from tests.mcp_servers import fixture_server_stdio
from tests.onebot_client import OneBotClient, at
from tests.onebot_client import text as qq_text
from tests.openapi_time_server import app as time_app
from tests.receiver import Receiver

WORDS = "zebra-quartz-77"  # in every message: never in a label
LLM_KEY = "sk-test"  # llm_section's api key


async def scrape(api: Api) -> list[Metric]:
    response = await api.client.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return list(text_string_to_metric_families(response.text))


def sample(families: list[Metric], name: str, **labels: str) -> float | None:
    """The sample `name` with exactly `labels`, or None when there is none (a labelled
    counter no one moved yet has no sample)."""
    for family in families:
        for found in family.samples:
            if found.name == name and found.labels == labels:
                return float(found.value)
    return None


def value(families: list[Metric], name: str, **labels: str) -> float:
    """The sample `name` with exactly `labels`, which must be there: a misspelt name or
    label fails rather than reading as 0."""
    found = sample(families, name, **labels)
    if found is None:
        raise AssertionError(f"no sample {name} {labels}")
    return found


def label_values(families: list[Metric]) -> set[str]:
    return {v for family in families for sample in family.samples for v in sample.labels.values()}


def label_names(families: list[Metric]) -> set[str]:
    return {k for family in families for sample in family.samples for k in sample.labels}


@pytest.fixture
def root_logging() -> Iterator[None]:
    """setup_logging replaces the root's handlers and sets some loggers' levels: put
    them back for the tests after."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    levels = {name: logging.getLogger(name).level for name in ("httpx", "openai", "mcp")}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    for name, old in levels.items():
        logging.getLogger(name).setLevel(old)


async def test_a_scrape_counts_messages_model_requests_tools_and_deliveries(
    servers: Servers, stub: StubLLM, receiver: Receiver
) -> None:
    api = await servers.start(
        llm={**llm_section(stub), "warm_up": False},
        adapters={"webhook": {"outbound_url": receiver.url}},
        reminders={"fast_path": False},  # the model's tool calls
    )
    first = await scrape(api)
    assert sample(first, "groupmate_messages_received_total", platform="http") is None
    assert value(first, "groupmate_write_queue_depth") == 0

    stub.script(text("Hello Alice"))
    assert (await api.say(f"@groupmate hello, {WORDS}"))[0]["text"] == "Hello Alice"
    assert await api.say(f"not for the bot: {WORDS}") == []
    later = datetime.now(ZoneInfo("Europe/Berlin")) + timedelta(minutes=30)
    once = {"type": "once", "time": f"{later:%Y-%m-%d %H:%M}", "content": WORDS}
    stub.script(
        calls(("no_such_tool", {"about": WORDS})),  # a name the model made up
        calls(("reminder_set", once)),
    )
    (set_reply,) = await api.say(f"@groupmate remind us in 30 minutes: {WORDS}")
    assert "Reminder #1 set" in set_reply["text"]
    stub.script(error(400, "the model refused"))
    assert await api.say(f"@groupmate and {WORDS}?")  # the failure's apology
    receiver.fail_next = 1  # the first attempt fails: retried, then sent
    await make_due(api.bot)
    await asyncio.to_thread(receiver.wait_for, 1, 15)

    async def sent() -> bool:
        return sample(await scrape(api), "groupmate_reminder_deliveries_total", outcome="sent") == 1

    await eventually(sent, within=10)
    found = await scrape(api)
    assert value(found, "groupmate_messages_received_total", platform="http") == 4
    assert value(found, "groupmate_messages_answered_total", platform="http") == 3
    assert value(found, "groupmate_llm_request_seconds_count", outcome="ok") == 3
    assert value(found, "groupmate_llm_request_seconds_count", outcome="error") == 1
    assert value(found, "groupmate_llm_request_seconds_sum", outcome="ok") > 0
    # The tokens are those the bot's own turn records add up to.
    activity = (await api.client.get("/v1/activity")).json()["days"]
    prompt = value(found, "groupmate_llm_tokens_total", kind="prompt", outcome="ok")
    completion = value(found, "groupmate_llm_tokens_total", kind="completion", outcome="ok")
    assert prompt == sum(day["prompt_tokens"] for day in activity) > 0
    assert completion == sum(day["completion_tokens"] for day in activity) > 0
    # A failed request reports no usage: no token sample of its outcome at all.
    assert sample(found, "groupmate_llm_tokens_total", kind="prompt", outcome="error") is None
    assert value(found, "groupmate_tool_calls_total", tool="(unknown)", outcome="unknown") == 1
    assert value(found, "groupmate_tool_calls_total", tool="reminder_set", outcome="ok") == 1
    assert value(found, "groupmate_reminder_deliveries_total", outcome="retried") == 1
    assert value(found, "groupmate_reminder_lateness_seconds_count") == 1
    assert 1 <= value(found, "groupmate_reminder_lateness_seconds_sum") < 60  # due 1 s ago
    assert value(found, "groupmate_write_queue_depth") >= 0

    labels = label_values(found)
    for kept_out in (WORDS, TOKEN, LLM_KEY, "no_such_tool", "g1"):
        assert not any(kept_out in label for label in labels), kept_out
    assert "chat_id" not in label_names(found)
    # Each bot has its own registry: nothing lands in the process's default one.
    assert not any(m.name.startswith("groupmate") for m in prometheus_client.REGISTRY.collect())

    async with httpx.AsyncClient(base_url=api.base_url) as anonymous:
        assert (await anonymous.get("/metrics")).status_code == 401
        wrong = {"Authorization": "Bearer not-the-token"}
        assert (await anonymous.get("/metrics", headers=wrong)).status_code == 401


async def test_chat_ids_are_labels_only_with_per_chat(servers: Servers, tmp_path: Path) -> None:
    per_chat = await servers.start(metrics={"per_chat": True})
    other_db = {"url": f"sqlite:///{tmp_path / 'other.db'}"}
    plain = await servers.start(storage=other_db)
    for chat in ("g1", "g2", "web:room"):
        assert await per_chat.say("/reminders", chat_id=chat)
    assert await plain.say("/reminders", chat_id="g1")

    found = await scrape(per_chat)
    assert value(found, "groupmate_messages_received_total", platform="http", chat_id="g1") == 1
    assert value(found, "groupmate_messages_answered_total", platform="http", chat_id="g2") == 1
    web = {"platform": "web", "chat_id": "web:room"}
    assert value(found, "groupmate_messages_answered_total", **web) == 1
    # Two bots in one process count apart.
    elsewhere = await scrape(plain)
    assert value(elsewhere, "groupmate_messages_received_total", platform="http") == 1
    assert "chat_id" not in label_names(elsewhere) and "g1" not in label_values(elsewhere)
    assert "web" not in label_values(elsewhere)


async def test_a_chat_that_is_not_enabled_is_not_counted(servers: Servers) -> None:
    api = await servers.start(metrics={"per_chat": True}, bot={"groups": {"allow": ["g1"]}})
    assert await api.say("/reminders", chat_id="g1")
    assert await api.say("/reminders", chat_id=f"g-{WORDS}") == []  # not an enabled group

    found = await scrape(api)
    assert value(found, "groupmate_messages_received_total", platform="http", chat_id="g1") == 1
    assert not any(WORDS in label for label in label_values(found))
    received = [
        s.labels
        for family in found
        for s in family.samples
        if s.name == "groupmate_messages_received_total"
    ]
    assert received == [{"platform": "http", "chat_id": "g1"}]


def _completion_body(content: str, prompt_tokens: int, completion_tokens: int) -> str:
    message = {"role": "assistant", "content": content}
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    body = {"id": "chatcmpl-neg", "object": "chat.completion", "created": 0, "model": "stub"}
    return json.dumps({**body, "choices": [choice], "usage": usage})


async def test_negative_usage_from_the_model_still_gets_an_answer(
    servers: Servers, stub: StubLLM
) -> None:
    api = await servers.start(llm={**llm_section(stub), "warm_up": False})
    stub.script(text("Hello Alice"))
    assert (await api.say("@groupmate hello"))[0]["text"] == "Hello Alice"
    before = await scrape(api)
    prompt = value(before, "groupmate_llm_tokens_total", kind="prompt", outcome="ok")
    completion = value(before, "groupmate_llm_tokens_total", kind="completion", outcome="ok")
    assert prompt > 0 and completion > 0

    stub.script(raw(_completion_body("Hello again", -500, 7)))
    assert (await api.say("@groupmate hello again"))[0]["text"] == "Hello again"
    after = await scrape(api)
    # The negative count is taken as 0: the counter never goes down.
    assert value(after, "groupmate_llm_tokens_total", kind="prompt", outcome="ok") == prompt
    assert value(after, "groupmate_llm_tokens_total", kind="completion", outcome="ok") == (
        completion + 7
    )
    assert value(after, "groupmate_llm_request_seconds_count", outcome="ok") == 2

    # An observer that raises costs the request nothing, nor the observers after it.
    def broken(*args: Any) -> None:
        raise ValueError(WORDS)

    seen: list[str] = []
    assert api.bot.llm is not None
    api.bot.llm.observe_requests(broken)
    api.bot.llm.observe_requests(lambda outcome, seconds, usage: seen.append(outcome))
    stub.script(text("Still here"))
    assert (await api.say("@groupmate still there?"))[0]["text"] == "Still here"
    assert seen == ["ok"]
    assert value(await scrape(api), "groupmate_llm_request_seconds_count", outcome="ok") == 3


async def test_metrics_on_their_own_address_need_no_token(servers: Servers) -> None:
    api = await servers.start(metrics={"port": 0})
    assert await api.say("/reminders")
    server = api.bot.metrics_server
    assert server is not None and server.port
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{server.port}") as anonymous:
        response = await anonymous.get("/metrics")
        assert response.status_code == 200
        found = list(text_string_to_metric_families(response.text))
        assert value(found, "groupmate_messages_received_total", platform="http") == 1
        assert (await anonymous.get("/v1/info")).status_code == 404  # /metrics alone
    assert (await api.client.get("/metrics")).status_code == 404  # not on the API's port


async def test_metrics_switched_off(servers: Servers) -> None:
    api = await servers.start(metrics={"enabled": False})
    assert await api.say("/reminders")
    assert api.bot.metrics is None
    assert (await api.client.get("/metrics")).status_code == 404


async def test_the_write_queue_depth_is_read_when_scraped(servers: Servers) -> None:
    api = await servers.start()
    assert api.bot.reminders is not None
    queue = api.bot.reminders.database.batches
    await queue.flush()
    running, held = threading.Event(), threading.Event()

    def hold(session: Any) -> None:
        running.set()
        held.wait(10)

    # A batch that holds the database thread until told: the writes after it queue up.
    first = asyncio.create_task(queue.write(hold))
    await eventually(running.is_set)
    assert queue.depth == 0
    behind = [asyncio.create_task(queue.write(lambda session: None)) for _ in range(3)]
    try:
        await eventually(lambda: queue.depth == 3)
        assert value(await scrape(api), "groupmate_write_queue_depth") == 3
    finally:
        held.set()
        await asyncio.gather(first, *behind)
    assert value(await scrape(api), "groupmate_write_queue_depth") == 0


async def test_connections_and_tool_servers_are_read_when_scraped(
    servers: Servers, stub: StubLLM
) -> None:
    openapi = ThreadedServer(time_app)
    port = openapi.start()
    try:
        api = await servers.start(
            adapters={"onebot": {"access_token": "qq-secret"}},
            mcp={"servers": {"fx": fixture_server_stdio()}},
            openapi={
                "servers": [{"url": f"http://127.0.0.1:{port}"}, {"url": "http://127.0.0.1:9"}]
            },
        )
        found = await scrape(api)
        onebot = {"adapter": "onebot"}
        assert value(found, "groupmate_adapter_state", **onebot, state="connecting") == 1
        assert value(found, "groupmate_adapter_state", **onebot, state="connected") == 0
        assert value(found, "groupmate_tool_server_state", kind="mcp", server="fx", state="up") == 1
        up = {"kind": "openapi", "server": f"127.0.0.1:{port}"}
        assert value(found, "groupmate_tool_server_state", **up, state="up") == 1
        down = {"kind": "openapi", "server": "127.0.0.1:9"}
        assert value(found, "groupmate_tool_server_state", **down, state="down") == 1

        url = api.base_url.replace("http://", "ws://") + "/onebot/v11/ws"
        qq = await OneBotClient(url, 10001, "qq-secret").connect()
        await qq.group_message(100, 111, [at(10001), qq_text(f" /reminders {WORDS}")])
        await qq.next_action()  # the answer, sent: counted once the send returns

        async def answered() -> bool:
            found = await scrape(api)
            return sample(found, "groupmate_messages_answered_total", platform="onebot") == 1

        await eventually(answered)
        found = await scrape(api)
        assert value(found, "groupmate_adapter_state", **onebot, state="connected") == 1
        assert value(found, "groupmate_adapter_state", **onebot, state="connecting") == 0
        assert value(found, "groupmate_messages_received_total", platform="onebot") == 1
        assert not any("qq-secret" in v or WORDS in v for v in label_values(found))
        await qq.close()
    finally:
        openapi.stop()


async def test_json_logs_carry_the_correlation_id(
    servers: Servers, stub: StubLLM, root_logging: None
) -> None:
    settings = parse_config({"logging": {"format": "json", "level": "INFO"}}, environ={}).logging
    stream = io.StringIO()
    setup_logging(settings.level, settings.format, stream=stream)
    api = await servers.start(llm={**llm_section(stub), "warm_up": False})
    stub.script(error(400, "the model refused"))
    assert await api.say(f"@groupmate {WORDS}")

    lines = [json.loads(line) for line in stream.getvalue().splitlines()]  # every line
    (failed,) = [line for line in lines if "LLM request failed" in line["message"]]
    assert failed["level"] == "WARNING" and failed["logger"] == "groupmate.llm"
    assert re.fullmatch(r"[0-9a-f]{12}", failed["correlation_id"])
    assert datetime.fromisoformat(failed["time"]).tzinfo is not None
    assert TOKEN not in stream.getvalue() and LLM_KEY not in stream.getvalue()

    # An exception is one string field of its line.
    cid = new_correlation_id()
    try:
        raise ValueError("broken")
    except ValueError:
        logging.getLogger("groupmate.test").exception("it failed")
    last = json.loads(stream.getvalue().splitlines()[-1])
    assert last["correlation_id"] == cid and last["message"] == "it failed"
    assert "Traceback" in last["exception"] and "ValueError: broken" in last["exception"]


def test_config_and_check_accept_the_new_sections(
    tmp_path: Path, root_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    template = load_config(ROOT / "config.yaml.template", environ={})
    assert template.logging.format == "text"
    assert template.metrics.enabled and not template.metrics.per_chat
    assert template.metrics.port is None and template.metrics.host == "127.0.0.1"
    path = tmp_path / "config.yaml"
    sections: dict[str, Any] = {
        "storage": {"url": f"sqlite:///{tmp_path / 'bot.db'}"},
        "logging": {"format": "json"},
        "metrics": {"per_chat": True, "host": "127.0.0.1", "port": 9464},
    }
    path.write_text(json.dumps(sections), encoding="utf-8")  # JSON is YAML too
    assert main(["check", "--config", str(path)]) == 0
    capsys.readouterr()
    path.write_text(json.dumps({"metrics": {"per_chat": "sometimes"}}), encoding="utf-8")
    assert main(["check", "--config", str(path)]) == 2
    assert "metrics.per_chat" in capsys.readouterr().err


def test_the_libraries_log_lines_stay_at_warning_at_debug() -> None:
    """Their DEBUG lines carry URLs, headers and payloads that can hold tokens."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    try:
        setup_logging("DEBUG", stream=io.StringIO())
        for name in ("httpx", "openai", "mcp", "telegram", "nio", "slack_sdk", "discord"):
            assert logging.getLogger(name).getEffectiveLevel() == logging.WARNING, name
        assert logging.getLogger("groupmate").getEffectiveLevel() == logging.DEBUG
    finally:
        root.handlers[:], root.level = handlers, level
