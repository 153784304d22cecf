"""The `groupmate` command in real processes: console in a pseudo-terminal, check, db, serve."""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pyte
import pytest
import yaml

from groupmate.bot.cli_serve import serve_refusal
from groupmate.bot.config import Config, parse_config
from groupmate.testing import stub_llm as s

ROOT = Path(__file__).resolve().parent.parent


def _env(**extra: str) -> dict[str, str]:
    base = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT), "USER": "tester"}
    return {**base, **extra}


def _config(tmp_path: Path, **sections: object) -> Path:
    data: dict[str, object] = {
        "bot": {"timezone": "Europe/Berlin"},
        "storage": {"url": f"sqlite:///{tmp_path / 'bot.db'}"},
    }
    data.update(sections)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "groupmate.bot.cli", *args],
        env=_env(**env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


# What a terminal draws rather than shows: escape sequences (cursor moves, colours, modes).
_ESCAPES = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|[()][0-9A-B]|[=>78])")


class Terminal:
    """`groupmate chat` on a pseudo-terminal, typed into like a person would. `output` is
    what was written, escape sequences left out; `screen()` is what the terminal shows
    (drawn by pyte, a VT100 emulator, which also answers the cursor-position questions
    that a line editor asks of a real terminal)."""

    def __init__(self, config: Path, **env: str) -> None:
        self.master, slave = pty.openpty()
        self._screen = pyte.Screen(100, 30)
        self._stream = pyte.ByteStream(self._screen)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "groupmate.bot.cli", "--config", str(config), "chat"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=_env(**env),
            close_fds=True,
        )
        os.close(slave)
        self.output = ""

    def expect(self, text: str, within: float = 30) -> str:
        deadline = time.monotonic() + within
        while text not in self.output:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"{text!r} not seen; terminal shows:\n{self.output}")
            ready, _, _ = select.select([self.master], [], [], remaining)
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:
                    chunk = b""
                if not chunk:
                    raise AssertionError(f"terminal closed before {text!r}:\n{self.output}")
                self._drawn(chunk)
        return self.output

    def _drawn(self, chunk: bytes) -> None:
        self._stream.feed(chunk)
        if b"\x1b[6n" in chunk:  # where is the cursor? (1-based row;column)
            cursor = self._screen.cursor
            os.write(self.master, f"\x1b[{cursor.y + 1};{cursor.x + 1}R".encode())
        text = _ESCAPES.sub("", chunk.decode(errors="replace"))
        self.output += text.replace("\r\n", "\n")

    def settle(self, quiet: float = 0.5) -> None:
        """Read until the terminal has been quiet for `quiet` seconds."""
        while select.select([self.master], [], [], quiet)[0]:
            self._drawn(os.read(self.master, 4096))

    def screen(self) -> list[str]:
        """The terminal's lines as shown, trailing blanks left out."""
        lines = [line.rstrip() for line in self._screen.display]
        while lines and not lines[-1]:
            lines.pop()
        return lines

    def keys(self, text: str) -> None:
        """Typed without Enter."""
        os.write(self.master, text.encode())

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\r").encode())  # Enter, as a terminal sends it

    def close(self) -> int:
        self.type("/quit")
        code = self.process.wait(30)
        os.close(self.master)
        return code

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def test_console_group_chat_in_a_terminal(stub, tmp_path: Path) -> None:
    stub.script(
        s.text("Hello tester!"),
        s.calls(("reminder_set", {"type": "daily", "time": "9:30", "content": "water plants"})),
        s.text("Hi Bob, in private."),
    )
    # The model's own turns in a terminal: the grammar's fast path would skip the model.
    config = _config(
        tmp_path,
        llm={"base_url": stub.base_url, "api_key": "sk-test"},
        reminders={"fast_path": False},
    )
    with Terminal(config) as terminal:
        terminal.expect("[group] tester>")
        terminal.type("@groupmate hello")
        terminal.expect("bot> Hello tester!")
        terminal.type("just chatting, not for the bot")
        terminal.type("@groupmate remind us daily at 9:30 to water the plants")
        terminal.expect("every day at 09:30: water plants")
        terminal.type("/as bob")
        terminal.expect("(you are now bob)")
        terminal.type("/private")
        terminal.type("hi there")
        terminal.expect("bot> Hi Bob, in private.")
        assert terminal.close() == 0
    history = [m["content"] for m in stub.requests[1]["messages"][1:]]
    assert any("hello" in content for content in history)
    assert s.latest_message(stub.requests[2]) == "hi there"


def test_console_offline_commands_without_llm(tmp_path: Path) -> None:
    with Terminal(_config(tmp_path)) as terminal:
        terminal.expect("No language model is configured")
        terminal.type("/remind in 10 minutes tea")
        terminal.expect("bot> ⏰ Reminder #1 set for ")
        terminal.type("/reminders")
        terminal.expect("#1 · next ")
        terminal.type("@groupmate what's up")
        terminal.expect("no language model is configured")
        # The report: after five quick commands the console went silent. The
        # operator is never limited, and is an admin of the simulated group (/tz works).
        for n in range(12):
            terminal.type(f"/remind in {20 + n} minutes tea {n}")
            terminal.expect(f"Reminder #{n + 2} set for ")
        for _ in range(12):
            terminal.type("@groupmate hello?")
        terminal.type("/tz Asia/Tokyo")
        terminal.expect("Asia/Tokyo")
        assert "too many requests" not in terminal.output
        # Members are the people you have typed as: Bob is one once you were him.
        terminal.type("/remind @bob in 5 minutes slides")
        terminal.expect("can't find @bob")
        terminal.type("/as bob")
        terminal.type("/as tester")
        terminal.expect("(you are now tester)")
        terminal.type("/remind @bob in 5 minutes slides")
        terminal.expect("for @bob (mentioning you too) set for ")
        assert terminal.close() == 0


def test_a_new_console_session_is_answered_where_the_last_one_left_off(tmp_path: Path) -> None:
    """Its message ids start again each session: the bot must not take them for the
    last session's messages come again, and answer nothing."""
    config = _config(tmp_path)
    with Terminal(config) as terminal:
        terminal.type("/remind in 10 minutes tea")
        terminal.expect("bot> ⏰ Reminder #1 set for ")
        terminal.type("/remind in 20 minutes cake")
        terminal.expect("bot> ⏰ Reminder #2 set for ")
        assert terminal.close() == 0
    with Terminal(config) as terminal:
        terminal.type("/reminders")
        terminal.expect("#2 · next ")
        terminal.type("/cancel 1")
        terminal.expect("Deleted reminder #1")
        assert terminal.close() == 0


def test_console_reports_llm_outage_without_a_traceback(stub, tmp_path: Path) -> None:
    stub.fallback = s.error(401, "invalid api key")
    config = _config(tmp_path, llm={"base_url": stub.base_url, "api_key": "${TEST_KEY}"})
    with Terminal(config, TEST_KEY="sk-very-secret") as terminal:
        terminal.type("@groupmate hello")
        output = terminal.expect("rejected the bot's credentials")
        assert terminal.close() == 0
    assert "Traceback" not in output
    assert "sk-very-secret" not in output


def test_check_prints_what_is_enabled_without_secrets(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        llm={"api_key": "${KEY}", "model": "qwen2.5"},
        adapters={"webhook": {"token": "${TOKEN}", "outbound_url": "http://127.0.0.1:9/hook"}},
        mcp={
            "servers": {
                "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"K": "${KEY}"}},
                "docs": {"url": "http://h/mcp", "headers": {"Authorization": "${TOKEN}"}},
            },
            "serve": {"chat_id": "g-1"},
        },
        openapi={"servers": [{"url": "http://127.0.0.1:8081"}]},
    )
    done = _run("check", "--config", str(config), KEY="sk-hidden", TOKEN="tok-hidden")
    assert done.returncode == 0, done.stderr
    assert "mcp servers: docs (http), time (stdio)" in done.stdout  # as written (sorted)
    assert "mcp serve: acting in g-1" in done.stdout
    assert "openapi servers: http://127.0.0.1:8081" in done.stdout
    assert "llm: qwen2.5 at the OpenAI API, tools auto" in done.stdout
    assert "search: off" in done.stdout
    assert "token required, outbound webhook set" in done.stdout
    assert "hidden" not in done.stdout + done.stderr


def test_config_errors_name_the_key(tmp_path: Path) -> None:
    config = _config(tmp_path, llm={"tool_mode": "sometimes"}, bot={"timezone": "Mars/Base"})
    done = _run("--config", str(config), "check")
    assert done.returncode == 2
    assert "llm.tool_mode: Input should be 'native', 'prompt' or 'auto'" in done.stderr
    assert "bot.timezone: 'Mars/Base' is not a known time zone" in done.stderr
    assert "Traceback" not in done.stderr


def test_check_fails_as_serve_would_for_an_adapter_without_its_token(tmp_path: Path) -> None:
    """`check` said "telegram adapter: on" with TELEGRAM_BOT_TOKEN unset, and serve then
    failed: both stop now, naming the setting and the variable."""
    config = _config(
        tmp_path,
        adapters={
            "telegram": {"token": "${TELEGRAM_BOT_TOKEN}"},
            "discord": {"token": "${DISCORD_TOKEN}"},
            "matrix": {"homeserver": "http://127.0.0.1:9", "user_id": "@bot:x"},
        },
    )
    for command in ("check", "serve"):
        done = _run("--config", str(config), command)
        assert done.returncode == 2, (command, done.stdout)
        assert (
            "adapters.telegram: token required (unset); the environment variable "
            "TELEGRAM_BOT_TOKEN is not set"
        ) in done.stderr
        assert (
            "adapters.discord: token required (unset); the environment variable "
            "DISCORD_TOKEN is not set"
        ) in done.stderr
        assert "adapters.matrix: access_token or password required (unset)" in done.stderr
        assert "adapter: on" not in done.stdout and "Traceback" not in done.stderr


def test_an_unknown_key_is_told_the_setting_it_was_likely_meant_to_be(tmp_path: Path) -> None:
    config = _config(
        tmp_path,
        bot={"timezon": "Europe/Berlin"},
        adapters={"telegram": {"tokne": "x"}},
        llm={"zzz": 1},
    )
    done = _run("--config", str(config), "check")
    assert done.returncode == 2
    assert "bot.timezon: no such setting; did you mean timezone?" in done.stderr
    assert "adapters.telegram.tokne: no such setting; did you mean token?" in done.stderr
    assert "llm.zzz: no such setting (here: base_url, api_key, model," in done.stderr
    assert "Extra inputs are not permitted" not in done.stderr


def test_environment_references_read_as_the_shell_reads_them(tmp_path: Path) -> None:
    """`${NAME:?message}` unset stops the bot, naming the key and the variable (a typo in
    a variable's name never becomes the token); a form the shell would not read is
    refused; `-`, `:-` and `:+` give what the shell gives."""
    webhook = {"token": "${GROUPMATE_API_TOKN:?set the API token}", "port": 0}
    done = _run("--config", str(_config(tmp_path, adapters={"webhook": webhook})), "check")
    assert done.returncode == 2, done.stdout
    assert (
        "adapters.webhook.token: the environment variable GROUPMATE_API_TOKN is not set "
        "(set the API token)"
    ) in done.stderr
    assert "Traceback" not in done.stderr
    odd = {"token": "${GROUPMATE_TOKEN:=fallback}", "port": 0}
    refused = _run("--config", str(_config(tmp_path, adapters={"webhook": odd})), "check")
    assert refused.returncode == 2
    assert "${GROUPMATE_TOKEN:=fallback} is no environment reference" in refused.stderr
    forms = {"model": "${EMPTY-kept empty}", "base_url": "${SET:+http://x}${UNSET:-/v1}"}
    config = parse_config({"llm": forms}, environ={"EMPTY": "", "SET": "1"})
    assert (config.llm.model, config.llm.base_url) == ("", "http://x/v1")


def test_db_upgrade_and_current(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    before = _run("db", "current", "--url", url)
    assert before.returncode == 0, before.stderr
    assert "schema revision none (behind 0021)" in before.stdout
    upgraded = _run("db", "upgrade", "--url", url)
    assert upgraded.returncode == 0, upgraded.stderr
    assert "schema revision 0021 (up to date)" in upgraded.stdout


def test_db_with_a_bad_url_explains_itself() -> None:
    done = _run("db", "upgrade", "--url", "mysql://user:hunter2@localhost/x")
    assert done.returncode == 2
    assert "use sqlite:/// or postgresql://" in done.stderr
    unreachable = _run("db", "upgrade", "--url", "postgresql://bot:hunter2@127.0.0.1:1/x")
    assert unreachable.returncode == 2
    assert "the database is unavailable" in unreachable.stderr
    assert "Traceback" not in done.stderr + unreachable.stderr
    assert "hunter2" not in done.stderr + unreachable.stderr


def _public_config(tmp_path: Path, **webhook: object) -> Path:
    return _config(tmp_path, adapters={"webhook": {"host": "0.0.0.0", "port": 0, **webhook}})


def test_serve_names_the_setting_when_its_port_is_taken(tmp_path: Path) -> None:
    """A port in use (another groupmate, llama.cpp's server on 8080…) is said in the
    words of the setting to change, before the bot starts, not as an OSError."""
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        done = _run("serve", "--config", str(_config(tmp_path)), "--port", str(port))
    finally:
        taken.close()
    assert done.returncode == 2, done.stdout
    assert done.stderr.splitlines() == [
        f"groupmate: 127.0.0.1:{port} is in use by another program (another groupmate, a "
        "model server…): set adapters.webhook.port (and host) in the config, or pass serve "
        "--port N (--host H)"
    ]
    bad = _run("serve", "--config", str(_config(tmp_path)), "--port", "70000")
    assert bad.returncode == 2 and "'70000' is no port (0 to 65535)" in bad.stderr


def test_serve_refuses_a_public_address_without_a_token(tmp_path: Path) -> None:
    done = _run("serve", "--config", str(_public_config(tmp_path)))
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "groupmate: refusing to serve the HTTP API on 0.0.0.0 without adapters.webhook.token "
        "(every /v1 route would be open); set a token, bind 127.0.0.1, or pass "
        "--insecure-no-auth"
    ]
    assert done.stdout == ""
    assert not (tmp_path / "bot.db").exists()  # refused before anything was opened


def test_serve_insecure_no_auth_starts_on_a_public_address_and_warns(tmp_path: Path) -> None:
    config = _public_config(tmp_path)
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "groupmate.bot.cli",
            "serve",
            "--config",
            str(config),
            "--insecure-no-auth",
        ],
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 60)
        assert ready, "serve printed nothing"
        announced = process.stdout.readline().strip()
        assert announced.startswith("groupmate serving on http://0.0.0.0:")
        port = int(announced.rsplit(":", 1)[1])
        assert port > 0
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            assert client.get("/healthz").status_code == 200
            assert client.get("/v1/chats/g1/reminders").json() == []  # no token asked
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0
    assert "without adapters.webhook.token (--insecure-no-auth)" in stderr
    assert "level=WARNING" in stderr


@pytest.mark.parametrize(
    ("host", "public"),
    [
        ("127.0.0.1", False),
        ("127.8.9.10", False),
        ("::1", False),
        ("[::1]", False),
        ("::ffff:127.0.0.1", False),
        ("localhost", False),
        ("LocalHost", False),
        ("0.0.0.0", True),
        ("::", True),
        ("", True),
        ("192.168.1.20", True),
        ("bot.example.org", True),
    ],
)
def test_which_addresses_need_a_token(host: str, public: bool) -> None:
    def config(**webhook: object) -> Config:
        return parse_config({"adapters": {"webhook": {"host": host, **webhook}}}, environ={})

    refused = serve_refusal(config(), insecure_no_auth=False)
    assert (refused is not None) is public
    assert serve_refusal(config(token="t"), insecure_no_auth=False) is None
    assert serve_refusal(config(), insecure_no_auth=True) is None


def test_the_template_is_a_valid_config_as_make_run_uses_it() -> None:
    from groupmate.bot.config import load_config

    # `make run` copies it to config.yaml unchanged; sections with every line commented
    # out (`budget:`, `mcp:`) are null in YAML and mean the defaults.
    config = load_config(ROOT / "config.yaml.template", environ={})
    assert config.llm.budget.tokens_per_day is None
    assert config.adapters.webhook.host == "127.0.0.1"


def test_check_never_shows_a_password_in_the_llm_url() -> None:
    from groupmate.bot.config import parse_config
    from groupmate.bot.status import config_lines

    config = parse_config(
        {"llm": {"base_url": "http://bot:s3cret@127.0.0.1:8080/v1", "context_tokens": 4096}},
        environ={},
    )
    lines = "\n".join(config_lines(config, "sqlite:///x.db", None))
    assert "s3cret" not in lines and "http://***@127.0.0.1:8080/v1" in lines


def test_check_prints_the_window_and_what_the_prompt_takes(tmp_path: Path) -> None:
    # A server that says nothing of its window: 4096 assumed, and said so.
    stub = s.StubLLM()
    stub.context_tokens = None
    stub.start()
    try:
        fits = _config(
            tmp_path, llm={"base_url": stub.base_url, "model": "m", "tool_mode": "prompt"}
        )
        done = _run("check", "--config", str(fits))
        assert done.returncode == 0, done.stderr
        assert "context 4096 tokens (default; the server did not say)" in done.stdout
        prompt = next(line for line in done.stdout.splitlines() if line.startswith("prompt: "))
        without, every = (int(part.split()[0]) for part in prompt[8:].split(", ")[:2])
        assert without < 1000 < every  # every tool would not fit a 4k window; a few do
        assert "each message is offered the tools it needs within" in prompt
        # A window too small for the bot's own instructions: told what to change, exit 1.
        small = {"base_url": stub.base_url, "model": "m", "context_tokens": 1024}
        too_small = _config(tmp_path, llm={**small, "max_output_tokens": 900})
        done = _run("check", "--config", str(too_small))
        assert done.returncode == 1
        assert "too small for the bot's own instructions" in done.stderr
        assert "llm.max_output_tokens" in done.stderr
    finally:
        stub.stop()
