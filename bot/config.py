"""config.yaml: validated by Pydantic at startup; secrets come from ${ENV_VARS}."""

from __future__ import annotations

import ipaddress
import json
import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BeforeValidator,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
)

from groupmate.bot.adapters.console_settings import ConsoleSettings
from groupmate.bot.adapters.dingtalk_settings import DingTalkSettings
from groupmate.bot.adapters.discord_settings import DiscordSettings
from groupmate.bot.adapters.http_settings import WebhookSettings
from groupmate.bot.adapters.lark_settings import LarkSettings
from groupmate.bot.adapters.matrix_settings import MatrixSettings
from groupmate.bot.adapters.mcp_server_settings import McpServeSettings
from groupmate.bot.adapters.onebot_settings import OneBotSettings
from groupmate.bot.adapters.slack_settings import SlackSettings
from groupmate.bot.adapters.telegram_settings import TelegramSettings
from groupmate.bot.logs import LogFormat
from groupmate.function_calls.filters import Filter
from groupmate.function_calls.handlers.audience_rules import ReminderRules
from groupmate.function_calls.handlers.reminder_refusals import unknown_zone
from groupmate.function_calls.plugins import BuiltinsConfig, PluginSpec
from groupmate.function_calls.policy import PolicyConfig
from groupmate.function_calls.prompt_formats import PromptFormat
from groupmate.function_calls.remote import McpSettings, OpenApiSettings
from groupmate.function_calls.search.config import SearchSettings
from groupmate.function_calls.sections import OptionalText, Secret, Section
from groupmate.function_calls.settings_keys import unknown_setting
from groupmate.function_calls.vocabulary import ToolMode, ToolSchema
from groupmate.storage import DEFAULT_URL, DeliveryPolicy, InvalidTimezoneError, check_timezone
from groupmate.storage.exceptions import GroupmateError
from groupmate.storage.recurrence import Kind
from groupmate.storage.vocabulary import Permission

# `${...}` as the shell reads it: NAME, then an operator and its word. Anything else in
# `${...}` is refused (a typo must not become a secret's value).
_ENV_REFERENCE = re.compile(r"\$\{([^}]*)\}")
_ENV_FORM = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])(.*))?", re.DOTALL)
_ENV_FORMS = "${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:?message}, ${NAME:+word}"
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, None: 1}


class ConfigError(GroupmateError):
    """The configuration is unusable; the message names the key."""


def _duration(value: Any) -> Any:
    if isinstance(value, str):
        match = _DURATION.match(value)
        if match is None:
            raise ValueError("use a duration such as 30s, 15m, 6h or 1d")
        return timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2)])
    if isinstance(value, int | float):
        return timedelta(seconds=value)
    return value


Duration = Annotated[timedelta, BeforeValidator(_duration)]


class GroupsConfig(Filter):
    """The groups the bot answers in (`bot.groups`): all, unless the config says."""

    allow: list[str] | None = Field(default_factory=lambda: ["*"])


class HistoryConfig(Section):
    max_messages: int = Field(40, ge=0, le=500)
    max_chars: int = Field(6000, ge=0, le=200_000)


class RetentionConfig(Section):
    max_messages_per_chat: int = Field(5000, ge=100)
    max_days: int = Field(30, ge=1)
    # Days the audit log keeps who made the bot do what.
    audit_days: int = Field(90, ge=1)


class RateLimitConfig(Section):
    user_per_minute: float = Field(10, gt=0)
    chat_per_minute: float = Field(30, gt=0)
    burst: int = Field(5, ge=1)
    # Commands that need no model (/remind, /list, /snooze ...) cost next to nothing:
    # their own, generous per-user budget.
    command_per_minute: float = Field(60, gt=0)
    command_burst: int = Field(20, ge=1)


class BotSettings(Section):
    name: str = Field("groupmate", min_length=1, max_length=64)
    timezone: str = "UTC"
    admins: list[str] = Field(default_factory=list)
    groups: GroupsConfig = Field(default_factory=GroupsConfig)
    prefixes: list[str] = Field(default_factory=lambda: ["!"])
    history: HistoryConfig = Field(default_factory=HistoryConfig)
    retention: RetentionConfig = Field(default_factory=RetentionConfig)
    rate_limits: RateLimitConfig = Field(default_factory=RateLimitConfig)
    # One sender's messages to the bot within this many ms of each other are answered
    # once, joined (bot.bursts); 0: each on its own.
    burst_ms: int = Field(0, ge=0, le=10_000)

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            return check_timezone(value)
        except InvalidTimezoneError as exc:
            raise ValueError(unknown_zone(exc.name)) from None


class BudgetConfig(Section):
    """Tokens (prompt + completion) the model may use per UTC day; None: no limit."""

    tokens_per_chat_per_day: int | None = Field(None, ge=1)
    tokens_per_day: int | None = Field(None, ge=1)


class LLMSettings(Section):
    base_url: OptionalText = None
    api_key: Secret = None
    model: str = "gpt-4o-mini"
    tool_mode: ToolMode = "auto"
    prompt_format: PromptFormat = "hermes"
    tool_schema: ToolSchema = "auto"
    max_rounds: int = Field(5, ge=1, le=20)
    max_invalid_retries: int = Field(1, ge=0, le=5)
    call_timeout: float = Field(30, gt=0)
    # A cold prompt on a small local server takes minutes on two cores (115-140 s
    # measured): a shorter limit would fail the warm-up and the first message.
    request_timeout: float = Field(300, gt=0)
    # The defaults are the settings the eval found best for a small local model (README,
    # "Running on a local model"): a minimal config is base_url, model and tool_mode.
    # Room for the answer (sent as max_tokens) within the window: 512 leaves a 4k window
    # room for the ~3,000-token prompt, and no reply in the eval needed more.
    max_output_tokens: int = Field(512, ge=16, le=65_536)
    # Every request, a summary's too: small local models call tools more reliably at 0,
    # and greedy decoding keeps a summary to what the transcript says (the eval's summary
    # cases ran at 0). null: the server's default (0.8 in llama-cpp-python).
    temperature: float | None = Field(0.0, ge=0, le=2)
    # The model's context window: history and tool results are trimmed to fit it. None:
    # asked of the server at startup (function_calls.server_info), else 4096.
    context_tokens: int | None = Field(None, ge=1024, le=2_000_000)
    # Send the system prompt and tools once at startup (max_tokens 1), so that the
    # server's prefix cache holds them before the first message (/healthz "llm").
    warm_up: bool = True
    budget: BudgetConfig = Field(default_factory=BudgetConfig)

    @property
    def enabled(self) -> bool:
        return self.api_key is not None or self.base_url is not None


class StorageSettings(Section):
    url: str = DEFAULT_URL


class AdaptersSettings(Section):
    console: ConsoleSettings = Field(default_factory=ConsoleSettings)
    webhook: WebhookSettings = Field(default_factory=WebhookSettings)
    telegram: TelegramSettings | None = None
    matrix: MatrixSettings | None = None
    onebot: OneBotSettings | None = None
    slack: SlackSettings | None = None
    discord: DiscordSettings | None = None
    lark: LarkSettings | None = None
    dingtalk: DingTalkSettings | None = None


class ReminderSettings(Section):
    grace: dict[Kind, Duration] = Field(default_factory=dict)
    late_after: Duration = timedelta(minutes=1)
    send_attempts: int = Field(5, ge=1, le=20)
    retry_base: Duration = timedelta(seconds=2)
    retry_max: Duration = timedelta(minutes=1)
    watchdog_interval: Duration = timedelta(seconds=30)
    # How long a claimed delivery (a send, a scheduled action's run) is this process's:
    # renewed while it runs; once it runs out (the process died), another takes it over.
    lease: Duration = timedelta(minutes=2)
    # Who may set a reminder that mentions other members, or everyone. A chat's admins
    # can change it for their chat (its settings); these are the defaults.
    remind_others: Permission = "members"
    remind_everyone: Permission = "admins"
    # A request the grammar reads whole ("remind us every monday at 9 to send the
    # report") is set without asking the model: no tokens, no wait. YAML's on/off work.
    fast_path: bool = True

    def rules(self) -> ReminderRules:
        return ReminderRules(self.remind_others, self.remind_everyone)

    def policy(self) -> DeliveryPolicy:
        defaults = DeliveryPolicy()
        return DeliveryPolicy(
            grace={**defaults.grace, **self.grace},
            late_after=self.late_after,
            send_attempts=self.send_attempts,
            retry_base=self.retry_base,
            retry_max=self.retry_max,
            watchdog_interval=self.watchdog_interval,
            lease=self.lease,
        )


class LoggingSettings(Section):
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "WARNING"
    # "json": one object per line (time, level, logger, message, correlation_id), for a
    # log collector; "text" for a person reading the terminal.
    format: LogFormat = "text"


class MetricsSettings(Section):
    """`GET /metrics` in Prometheus's text format (bot.metrics). On the HTTP API's port
    it needs the API token, as /v1 does; with `port` set it is served there instead, on
    an address of its own without a token: keep that one on a loopback or private host."""

    enabled: bool = True
    # A label per chat (its id) on the message counters: one series per chat, for a
    # handful of chats; off, the counters are per platform only.
    per_chat: bool = False
    host: str = "127.0.0.1"
    port: int | None = Field(None, ge=0, le=65535)


class McpConfig(McpSettings):
    serve: McpServeSettings = Field(default_factory=McpServeSettings)
    # How often a server's tools are re-listed, which is also how a dead one is noticed.
    health_interval: Annotated[float, Field(gt=0)] = 15.0


class Config(Section):
    bot: BotSettings = Field(default_factory=BotSettings)
    mcp: McpConfig = Field(default_factory=McpConfig)
    openapi: OpenApiSettings = Field(default_factory=OpenApiSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    storage: StorageSettings = Field(default_factory=StorageSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    adapters: AdaptersSettings = Field(default_factory=AdaptersSettings)
    reminders: ReminderSettings = Field(default_factory=ReminderSettings)
    tools: PolicyConfig = Field(default_factory=PolicyConfig)
    # Packages of tools, loaded in this order after the built-in families (see README,
    # "Write a plugin"); each one's settings are checked when it loads.
    plugins: list[PluginSpec] = Field(default_factory=list)
    builtins: BuiltinsConfig = Field(default_factory=BuiltinsConfig)
    logging: LoggingSettings = Field(default_factory=LoggingSettings)
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)

    @field_validator("plugins", mode="before")
    @classmethod
    def _no_plugins(cls, value: Any) -> Any:
        return [] if value is None else value  # `plugins:` with every entry commented out


def _interpolate(value: Any, environ: dict[str, str], unset: dict[str, str], key: str = "") -> Any:
    """Environment references in every string of the document, as POSIX shells read
    them; ConfigError, naming the key, for a `${NAME:?…}` unset or a form not known.
    `unset` collects each key whose plain `${NAME}` was unset, and the name."""
    if isinstance(value, dict):
        return {
            name: _interpolate(item, environ, unset, f"{key}.{name}" if key else str(name))
            for name, item in value.items()
        }
    if isinstance(value, list):
        return [_interpolate(item, environ, unset, f"{key}.{n}") for n, item in enumerate(value)]
    if not isinstance(value, str):
        return value

    def replace(match: re.Match[str]) -> str:
        found = _env_value(match.group(1), environ, key)
        plain = _ENV_FORM.fullmatch(match.group(1))
        if not found and plain is not None and plain.group(2) is None:
            unset[key] = plain.group(1)
        return found

    return _ENV_REFERENCE.sub(replace, value)


def _env_value(reference: str, environ: dict[str, str], key: str) -> str:
    form = _ENV_FORM.fullmatch(reference)
    if form is None:
        raise ConfigError(f"{key}: ${{{reference}}} is no environment reference; use {_ENV_FORMS}")
    name, operator, word = form.group(1), form.group(2), form.group(3) or ""
    value = environ.get(name)
    # With a colon, as in the shell, a variable set to "" counts as unset.
    unset = value is None or (value == "" and operator is not None and operator[0] == ":")
    if operator is None:
        return value or ""  # an unset secret means "not configured": the sections say so
    if operator.endswith("-"):
        return word if unset else (value or "")
    if operator.endswith("+"):
        return "" if unset else word
    if unset:  # "?": required
        said = word or "not set"
        raise ConfigError(f"{key}: the environment variable {name} is not set ({said})")
    return value or ""


def _read_mcp_servers_file(data: dict[str, Any], base: Path) -> dict[str, Any]:
    """`mcp.servers` given as the path of an `mcpServers` JSON file (Claude Desktop's,
    Cursor's): read it in, relative to the config file's folder."""
    mcp = data.get("mcp")
    if not isinstance(mcp, dict) or not isinstance(mcp.get("servers"), str):
        return data
    path = base / Path(mcp["servers"]).expanduser()
    try:
        servers = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"mcp.servers: cannot read {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise ConfigError(f"mcp.servers: {path} is not valid JSON: {exc}") from None
    return {**data, "mcp": {**mcp, "servers": servers}}


def parse_config(
    data: Any, environ: dict[str, str] | None = None, *, base: Path | None = None
) -> Config:
    """Validate a parsed YAML document; errors name the offending key.

    `base` is the folder relative paths in it are read from (the config file's).
    """
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("the configuration must be a mapping of sections (bot, llm, ...)")
    data = _read_mcp_servers_file(data, base or Path.cwd())
    unset: dict[str, str] = {}
    resolved = _interpolate(data, dict(os.environ) if environ is None else environ, unset)
    try:
        config = Config.model_validate(resolved)
    except ValidationError as exc:
        problems = []
        for error in exc.errors(include_url=False, include_input=False):
            key = ".".join(str(part) for part in error["loc"])
            message = error["msg"].removeprefix("Value error, ")
            if error["type"] == "extra_forbidden":
                message = unknown_setting(Config, error["loc"])
            # A setting given as ${NAME} with NAME unset: the variable is what to fix.
            names = sorted({n for k, n in unset.items() if k == key or k.startswith(key + ".")})
            if names:
                variables = "variable " if len(names) == 1 else "variables "
                verb = " is" if len(names) == 1 else " are"
                message += f"; the environment {variables}{' and '.join(names)}{verb} not set"
            problems.append(f"{key}: {message}")
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems)) from None
    return config


def load_config(path: str | Path | None, environ: dict[str, str] | None = None) -> Config:
    """Read and validate config.yaml; no file means the embedded defaults."""
    env = dict(os.environ) if environ is None else environ
    if path is None:
        data: Any = {}
    else:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path} is not valid YAML: {exc}") from None
    config = parse_config(data, env, base=None if path is None else Path(path).parent)
    # Natural language works as soon as OPENAI_API_KEY is set, as the README promises.
    if not config.llm.enabled and env.get("OPENAI_API_KEY"):
        config.llm.api_key = SecretStr(env["OPENAI_API_KEY"])
    if not config.llm.base_url and env.get("OPENAI_BASE_URL"):
        config.llm.base_url = env["OPENAI_BASE_URL"]
    return config


def is_loopback(host: str) -> bool:
    """Whether binding `host` keeps the port on this machine (127.0.0.0/8, ::1, localhost)."""
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False  # another host name may resolve to any interface
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback
