"""config.yaml: validated by Pydantic at startup; secrets come from ${ENV_VARS}."""

from __future__ import annotations

import ipaddress
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, SecretStr, ValidationError, field_validator

from groupmate.bot.config_sections import (
    AdaptersSettings,
    BotSettings,
    LLMSettings,
    LoggingSettings,
    McpConfig,
    MetricsSettings,
    RateLimitConfig,
    ReminderSettings,
    StorageSettings,
)
from groupmate.function_calls.plugins import BuiltinsConfig, PluginSpec
from groupmate.function_calls.policy import PolicyConfig
from groupmate.function_calls.remote import OpenApiSettings
from groupmate.function_calls.search.config import SearchSettings
from groupmate.function_calls.sections import Section
from groupmate.function_calls.settings_keys import unknown_setting
from groupmate.storage.exceptions import GroupmateError

# The sections other modules take from here, where they always were.
__all__ = [
    "ENVIRONMENT_SETTINGS",
    "ENV_FORMS",
    "BotSettings",
    "Config",
    "ConfigError",
    "EnvironmentSetting",
    "LLMSettings",
    "MetricsSettings",
    "RateLimitConfig",
    "is_loopback",
    "load_config",
    "parse_config",
]

# `${...}` as the shell reads it: NAME, then an operator and its word. Anything else in
# `${...}` is refused (a typo must not become a secret's value).
_ENV_REFERENCE = re.compile(r"\$\{([^}]*)\}")
_ENV_FORM = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])(.*))?", re.DOTALL)
ENV_FORMS = "${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:?message}, ${NAME:+word}"


@dataclass(frozen=True, slots=True)
class EnvironmentSetting:
    """An environment variable groupmate reads for a setting of its own accord, besides
    the `${NAME}` references a config file makes."""

    key: str
    variable: str
    when: str


# The configuration reference lists these; tests/test_config_reference.py checks that
# each one does what it says (load_config and bot.cli_run read them).
ENVIRONMENT_SETTINGS = (
    EnvironmentSetting(
        "llm.api_key", "OPENAI_API_KEY", "used when the file sets neither llm.api_key nor base_url"
    ),
    EnvironmentSetting("llm.base_url", "OPENAI_BASE_URL", "used when the file leaves it unset"),
    EnvironmentSetting(
        "storage.url",
        "GROUPMATE_STORAGE_URL",
        "overrides the file; a command's --url overrides both",
    ),
    EnvironmentSetting("logging.level", "GROUPMATE_LOG_LEVEL", "overrides the file"),
)


class ConfigError(GroupmateError):
    """The configuration is unusable; the message names the key."""


class Config(Section):
    """The whole of config.yaml."""

    bot: BotSettings = Field(default_factory=BotSettings)
    """The bot's name, time zone, admins, the groups it works in, and its limits."""
    mcp: McpConfig = Field(default_factory=McpConfig)
    """Tools from MCP servers, and groupmate's own tools as an MCP server."""
    openapi: OpenApiSettings = Field(default_factory=OpenApiSettings)
    """Tools from OpenAPI tool servers (as Open WebUI has them)."""
    llm: LLMSettings = Field(default_factory=LLMSettings)
    """The model: an OpenAI-compatible endpoint, and how tools are offered to it."""
    storage: StorageSettings = Field(default_factory=StorageSettings)
    """The database: reminders, the chat log, settings, the audit log."""
    search: SearchSettings = Field(default_factory=SearchSettings)
    """Web search providers, and the limits of reading the links users send."""
    adapters: AdaptersSettings = Field(default_factory=AdaptersSettings)
    """The chat platforms and the HTTP API. A platform's section present is that
    platform enabled."""
    reminders: ReminderSettings = Field(default_factory=ReminderSettings)
    """How reminders are delivered, retried and caught up after downtime, and who may
    mention whom."""
    tools: PolicyConfig = Field(default_factory=PolicyConfig)
    """Who may use which tool, where, and how often."""
    # Loaded in this order after the built-in families; each one's settings are checked
    # when it loads.
    plugins: list[PluginSpec] = Field(default_factory=list)
    """Plugins to load, in this order, after the built-in tools: each a module name or
    entry point, or a mapping with its settings and options. Installed is not enabled:
    `groupmate plugins` lists both."""
    builtins: BuiltinsConfig = Field(default_factory=BuiltinsConfig)
    """The built-in tool families, each on by default; help and /tools always are."""
    logging: LoggingSettings = Field(default_factory=LoggingSettings)
    """What the log shows, and in which format."""
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    """Prometheus metrics at `GET /metrics`."""

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
        raise ConfigError(f"{key}: ${{{reference}}} is no environment reference; use {ENV_FORMS}")
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
    # Natural language works as soon as OPENAI_API_KEY is set, as the docs promise.
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
