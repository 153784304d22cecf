"""config.yaml's own sections (bot, llm, storage, reminders, logging, metrics, and the
frames of adapters and mcp); bot.config composes them with the tools' sections.

Each setting's docstring is what docs/reference/configuration.md says of it
(bot.config_reference): written for the operator, with units and what unset means."""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, field_validator

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
from groupmate.function_calls.prompt_formats import PromptFormat
from groupmate.function_calls.remote import McpSettings
from groupmate.function_calls.sections import OptionalText, Secret, Section
from groupmate.function_calls.vocabulary import ToolMode, ToolSchema
from groupmate.storage import DEFAULT_URL, DeliveryPolicy, InvalidTimezoneError, check_timezone
from groupmate.storage.policy import DEFAULT_GRACE
from groupmate.storage.recurrence import MAX_COUNT, MAX_PER_DAY, MIN_EVERY, Kind, RepeatRate
from groupmate.storage.vocabulary import Permission
from groupmate.storage.workdays import work_calendar

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$")
_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, None: 1}


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
    """Group chat ids or globs the bot works in (`tg:-100*`); `["*"]`: every group.
    Private chats are not affected."""


class HistoryConfig(Section):
    max_messages: int = Field(40, ge=0, le=500)
    """Recent messages of the chat the model sees with each request; 0: none."""
    max_chars: int = Field(6000, ge=0, le=200_000)
    """At most this many characters of those messages; older ones are left out first."""


class RetentionConfig(Section):
    max_messages_per_chat: int = Field(5000, ge=100)
    """Messages the chat log keeps per chat; older ones are deleted (hourly)."""
    max_days: int = Field(30, ge=1)
    """Days the chat log keeps a message; older ones are deleted (hourly)."""
    audit_days: int = Field(90, ge=1)
    """Days the audit log keeps who made the bot do what."""


class RateLimitConfig(Section):
    user_per_minute: float = Field(10, gt=0)
    """Requests to the model one user may make per minute, in each chat."""
    chat_per_minute: float = Field(30, gt=0)
    """Requests to the model one chat may make per minute, all users together."""
    burst: int = Field(5, ge=1)
    """Requests allowed at once before the per-minute rates apply."""
    # Commands that need no model (/remind, /list, /snooze ...) cost next to nothing:
    # their own, generous per-user budget.
    command_per_minute: float = Field(60, gt=0)
    """Commands that need no model (/remind, /reminders, /snooze, /tz ...) one user may
    send per minute in each chat. The terminal console is never limited."""
    command_burst: int = Field(20, ge=1)
    """Such commands allowed at once before `command_per_minute` applies."""


class BotSettings(Section):
    name: str = Field("groupmate", min_length=1, max_length=64)
    """The bot's name: it answers to @name in groups, and calls itself so."""
    timezone: str = "UTC"
    """IANA time zone (`Europe/Berlin`) for chats that never set one with /tz."""
    admins: list[str] = Field(default_factory=list)
    """Platform user ids (`tg:12345`, `sl:U0123`) that administer every chat. A
    group's own admins, as its platform says, administer that group anyway."""
    groups: GroupsConfig = Field(default_factory=GroupsConfig)
    """Which group chats the bot works in: `allow` and `deny` lists of chat ids or
    globs (deny wins). A plain list is the allow list."""
    prefixes: list[str] = Field(default_factory=lambda: ["!"])
    """A group message that starts with one of these is for the bot, as a mention is."""
    history: HistoryConfig = Field(default_factory=HistoryConfig)
    """How much of the chat the model sees as context."""
    retention: RetentionConfig = Field(default_factory=RetentionConfig)
    """How long the chat log and the audit log keep their rows."""
    rate_limits: RateLimitConfig = Field(default_factory=RateLimitConfig)
    """How often users and chats may ask the bot; a limited user is told when to retry."""
    burst_ms: int = Field(0, ge=0, le=10_000)
    """Milliseconds: one sender's messages to the bot this close together get one
    answer, to all of them joined (e.g. 1500). 0: each message is answered on its own."""

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
    """Tokens (prompt and completion) one chat may use per UTC day; a chat admin can
    change it with /budget. Unset: no limit."""
    tokens_per_day: int | None = Field(None, ge=1)
    """Tokens the whole bot may use per UTC day. Unset: no limit."""


class LLMSettings(Section):
    base_url: OptionalText = None
    """The OpenAI-compatible endpoint, e.g. `http://localhost:11434/v1` for Ollama.
    Unset: the OpenAI API. With neither this nor `api_key`, the bot runs without a
    model (commands and the grammar still work)."""
    api_key: Secret = None
    """The endpoint's API key. A local server usually needs none."""
    model: str = "gpt-4o-mini"
    """The model's name as the endpoint knows it."""
    tool_mode: ToolMode = "auto"
    """How tools reach the model: `native` (the API's tool calling), `prompt` (tools
    described in the prompt, calls read from the text), `auto` (native, falling back to
    prompt when the server refuses tools)."""
    prompt_format: PromptFormat = "hermes"
    """The call syntax in prompt mode: `hermes` (`<tool_call>…</tool_call>`), `json`
    (`{"tool_calls": [...]}`), `deepseek` (`<tool_code>…</tool_code>`)."""
    tool_schema: ToolSchema = "auto"
    """`compact` shows a small model only the simple arguments and worked examples;
    `full` every argument; `auto`: compact in prompt mode and under an 8k window."""
    max_rounds: int = Field(5, ge=1, le=20)
    """Model requests per message: each round may call tools and see their results."""
    max_invalid_retries: int = Field(1, ge=0, le=5)
    """Times per message the model may repair a tool call that had invalid arguments."""
    call_timeout: float = Field(30, gt=0)
    """Seconds one tool call may take before the model is told it timed out."""
    # A cold prompt on a small local server takes minutes on two cores (115-140 s
    # measured): a shorter limit would fail the warm-up and the first message.
    request_timeout: float = Field(300, gt=0)
    """Seconds one request to the model may take (a cold prompt on a small local
    server takes minutes)."""
    # The defaults are the settings the eval found best for a small local model
    # (docs/design/evaluation.md): a minimal config is base_url, model and tool_mode.
    # Room for the answer (sent as max_tokens) within the window: 512 leaves a 4k window
    # room for the ~3,000-token prompt, and no reply in the eval needed more.
    max_output_tokens: int = Field(512, ge=16, le=65_536)
    """Tokens the model may write per request (sent as `max_tokens`)."""
    # Small local models call tools more reliably at 0, and greedy decoding keeps a
    # summary to what the transcript says (the eval's summary cases ran at 0).
    temperature: float | None = Field(0.0, ge=0, le=2)
    """Sampling temperature of every request, summaries too. `null`: the server's
    default (0.8 in llama-cpp-python)."""
    context_tokens: int | None = Field(None, ge=1024, le=2_000_000)
    """The model's context window in tokens; history and tool results are trimmed to
    fit. Unset: asked of the server at startup (llama.cpp, Ollama and vLLM say it),
    else 4096. Set it for a hosted model."""
    warm_up: bool = True
    """At startup, send the system prompt and tools once (one token of answer), so the
    server's cache holds them before the first message; /healthz shows the outcome."""
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    """Daily token budgets; unset: no limit."""

    @property
    def enabled(self) -> bool:
        return self.api_key is not None or self.base_url is not None


class StorageSettings(Section):
    url: str = DEFAULT_URL
    """The database: `sqlite:///data/groupmate.db` (a file, relative to the working
    folder, which is created; four slashes for an absolute path) or
    `postgresql://user:${DB_PASSWORD}@host:5432/groupmate` (needs the `postgres` extra).
    The container image's config reads it from `${GROUPMATE_DATABASE_URL}`, with a
    file in /data when that is unset."""


class AdaptersSettings(Section):
    console: ConsoleSettings = Field(default_factory=ConsoleSettings)
    """The terminal chat of `groupmate chat`."""
    webhook: WebhookSettings = Field(default_factory=WebhookSettings)
    """The HTTP API, the web playground and the dashboard of `groupmate serve`."""
    telegram: TelegramSettings | None = None
    """Telegram. Present: enabled."""
    matrix: MatrixSettings | None = None
    """Matrix. Present: enabled."""
    onebot: OneBotSettings | None = None
    """QQ through OneBot v11 (NapCat, Lagrange). Present: enabled."""
    slack: SlackSettings | None = None
    """Slack. Present: enabled."""
    discord: DiscordSettings | None = None
    """Discord. Present: enabled."""
    lark: LarkSettings | None = None
    """Lark/Feishu. Present: enabled."""
    dingtalk: DingTalkSettings | None = None
    """DingTalk. Present: enabled."""


class CalendarDays(Section):
    workdays: list[date] = Field(default_factory=list)
    """Days that are work days, over the package's data (make-up work days)."""
    holidays: list[date] = Field(default_factory=list)
    """Days off, over the package's data."""


class ReminderSettings(Section):
    grace: dict[Kind, Duration] = Field(default_factory=lambda: dict(DEFAULT_GRACE))
    """Per kind of reminder: one missed by more than this while the bot was down is
    recorded as skipped, not sent. A kind left out keeps its default."""
    late_after: Duration = timedelta(minutes=1)
    """A reminder delivered later than this says when it was due."""
    send_attempts: int = Field(5, ge=1, le=20)
    """Tries per message before a delivery is recorded as failed."""
    retry_base: Duration = timedelta(seconds=2)
    """The wait after the first failed try; it doubles after each, up to `retry_max`."""
    retry_max: Duration = timedelta(minutes=1)
    """The longest wait between tries."""
    watchdog_interval: Duration = timedelta(seconds=30)
    """How often overdue reminders are looked for, in case a timer stalled."""
    lease: Duration = timedelta(minutes=2)
    """How long a claimed send or scheduled run belongs to the process that claimed it
    (renewed while it runs); a dead process's claim is taken over after it."""
    remind_others: Permission = "members"
    """Who may set a reminder that mentions other members ("remind @bob ..."): `members`,
    `admins`, or `off` (nobody). Chat admins can change it for their chat."""
    remind_everyone: Permission = "admins"
    """Who may set a reminder for everyone ("remind the team ..."). From someone who
    may not, the reminder is still posted, without the mention."""
    min_interval: Duration = Field(MIN_EVERY, ge=timedelta(minutes=1))
    """The shortest step of a repeat within a day ("every 30 minutes"); a shorter one is
    refused, saying this minimum."""
    max_per_day: int = Field(MAX_PER_DAY, ge=1, le=1440)
    """The most times one reminder may fire in a day; a repeat over it is refused."""
    until_done_cap: int = Field(12, ge=1, le=MAX_COUNT)
    """How many times a reminder that repeats "until someone says done" fires at most
    when nobody does; its confirmation says so. A request can name its own ("at most 5
    times")."""
    fast_path: bool = True
    """A request the grammar reads whole ("remind us every monday at 9 to send the
    report") is set at once, without the model. Off: every message goes to the model."""

    workdays: str | None = None
    """The country whose work days "every weekday" follows in chats that set none
    (`/settings workdays`): `CN` for China's official calendar (holidays off, make-up
    work days on), or another country code, such as `DE`, to skip its public holidays
    (needs `pip install "groupmate[holidays]"`). Empty: Monday to Friday."""
    calendars: dict[str, CalendarDays] = Field(default_factory=dict)
    """Days to add or correct per country, over the packages' data, for instance
    `CN: {workdays: [2027-02-06], holidays: [2027-02-08]}`. China publishes next year's
    schedule each November: add it here until a new `chinesecalendar` release has it."""

    @field_validator("workdays")
    @classmethod
    def _known_workdays(cls, value: str | None) -> str | None:
        return work_calendar(value).country if value else None

    @field_validator("calendars")
    @classmethod
    def _known_calendars(cls, value: dict[str, CalendarDays]) -> dict[str, CalendarDays]:
        return {work_calendar(code).country: days for code, days in value.items()}

    def calendar_days(self) -> dict[str, tuple[list[date], list[date]]]:
        """The operator's (workdays, holidays) per country, for `configure_calendars`."""
        return {code: (days.workdays, days.holidays) for code, days in self.calendars.items()}

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

    def rate(self) -> RepeatRate:
        return RepeatRate(self.min_interval, self.max_per_day)


class LoggingSettings(Section):
    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "WARNING"
    """The least severe log lines written, to standard error. `INFO` adds what the bot
    noticed (servers up, messages resent, fetches that failed); `DEBUG` adds the
    tracebacks behind a failed plugin or platform send. To debug, set `DEBUG`, or run
    with `GROUPMATE_LOG_LEVEL=DEBUG` without editing the file."""
    format: LogFormat = "text"
    """`text` for a person reading the terminal; `json`: one object per line (time,
    level, logger, message, correlation_id) for a log collector."""


class MetricsSettings(Section):
    """`GET /metrics` in Prometheus's text format (bot.metrics). On the HTTP API's port
    it needs the API token, as /v1 does; with `port` set it is served there instead, on
    an address of its own without a token: keep that one on a loopback or private host."""

    enabled: bool = True
    """Serve `GET /metrics` in Prometheus's text format, on the HTTP API's port behind
    `adapters.webhook.token`, or on `port`."""
    per_chat: bool = False
    """Give the message counters a `chat_id` label: one series per chat, for a handful
    of chats. Off: the counters are per platform only."""
    host: str = "127.0.0.1"
    """The address of the metrics' own port (with `port` set). It has no token: keep it
    on a loopback or private address."""
    port: int | None = Field(None, ge=0, le=65535)
    """Serve the metrics on this port of their own, without a token. Unset: on the HTTP
    API's port."""


class McpConfig(McpSettings):
    serve: McpServeSettings = Field(default_factory=McpServeSettings)
    """groupmate's own tools as an MCP server (`groupmate mcp`, and `/mcp` on `groupmate
    serve`): whom its callers act as."""
    health_interval: Annotated[float, Field(gt=0)] = 15.0
    """Seconds between re-listing each server's tools, which is also how a dead server
    is noticed."""
