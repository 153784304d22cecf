"""Services by role: read tools and plugins' services get read-only views; a tool that
asks for a writer must say it writes (checked when it is built); a plugin's background
work changes state only by calling tools through the invoker, as itself, audited."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, get_args, get_type_hints

import pytest
from fastapi.routing import APIRoute

from groupmate.bot.adapters import http as http_api
from groupmate.bot.adapters import http_admin as admin_api
from groupmate.bot.adapters import http_reminders as reminders_api
from groupmate.bot.adapters import http_search as search_api
from groupmate.bot.adapters import http_tools as tools_api
from groupmate.bot.adapters import http_web as web_api
from groupmate.bot.adapters.base import BotHost
from groupmate.function_calls import MessageContext
from groupmate.function_calls.deps import Deps
from groupmate.function_calls.errors import ToolDefinitionError
from groupmate.function_calls.handlers import builtin_tools
from groupmate.function_calls.plugin_store import PluginStore
from groupmate.function_calls.provided import BOOKKEEPING_TYPES, WRITE_TYPES
from groupmate.function_calls.registry import NoArguments, build_tool
from groupmate.function_calls.seen_marks import SeenMarks
from groupmate.storage import Database, ReminderReader, ReminderService
from groupmate.storage.audit import AuditLog, AuditQuery, AuditReader
from groupmate.storage.chatlog import ChatLog, ChatLogReader
from groupmate.storage.search import MessageSearch, SearchQuery, SearchReader
from groupmate.storage.usage import UsageLog, UsageReader
from tests.conftest import make_ctx
from tests.plugin_fixtures.nightly import Nightly

ROOT = Path(__file__).resolve().parent.parent


async def counts(ctx: MessageContext, service: ReminderService) -> str:
    """How many reminders the chat has."""
    return str((await service.list_for_chat(ctx.chat_id))[1])


async def reads(ctx: MessageContext, service: ReminderReader) -> str:
    """How many reminders the chat has."""
    return str((await service.list_for_chat(ctx.chat_id))[1])


async def audits(ctx: MessageContext, audit: AuditLog) -> str:
    """What was done here."""
    return str(await audit.page(AuditQuery(chat_id=ctx.chat_id)))


async def recalls(ctx: MessageContext, chatlog: ChatLog) -> str:
    """What was said here."""
    return str(await chatlog.recent(ctx.chat_id, 10))


async def spends(ctx: MessageContext, usage: UsageLog) -> str:
    """Tokens used here today."""
    return str(await usage.spent(ctx.chat_id, ctx.now().date()))


async def finds(ctx: MessageContext, search: MessageSearch) -> str:
    """Messages about the launch."""
    return str(await search.search(ctx.chat_id, SearchQuery(("launch",), None), limit=5))


@pytest.mark.parametrize("effect", ["read", "external"])
@pytest.mark.parametrize(
    ("handler", "param", "kind"),
    [
        (counts, "service", ReminderService),
        (audits, "audit", AuditLog),
        (recalls, "chatlog", ChatLog),
        (spends, "usage", UsageLog),
    ],
)
def test_a_tool_that_asks_for_a_writer_must_declare_it_writes(
    effect: Any, handler: Any, param: str, kind: type[Any]
) -> None:
    with pytest.raises(ToolDefinitionError) as refused:
        build_tool(handler, effect=effect)
    said = str(refused.value)
    assert f"tool {handler.__name__!r}" in said and f"parameter {param!r}" in said
    assert kind.__name__ in said and 'effect="write"' in said and "ReminderReader" in said
    assert build_tool(handler, effect="write").effect == "write"


@pytest.mark.parametrize("effect", ["read", "external"])
def test_a_tool_that_asks_for_the_search_that_forgets_must_declare_it_writes(
    effect: Any,
) -> None:
    """`MessageSearch` is the memory family's service (so the tool is the family's)."""
    memory = {MessageSearch, SearchReader}.__contains__
    with pytest.raises(ToolDefinitionError) as refused:
        build_tool(finds, effect=effect, provides=memory, plugin="memory")
    said = str(refused.value)
    assert "parameter 'search' (MessageSearch)" in said and 'effect="write"' in said
    assert build_tool(finds, effect="write", provides=memory, plugin="memory").effect == "write"


def test_a_read_tool_gets_the_read_only_view() -> None:
    tool = build_tool(reads, effect="read")
    assert [dep.kind for dep in tool.deps] == [ReminderReader]
    assert not hasattr(ReminderReader, "create") and not hasattr(ReminderReader, "database")
    for tool in builtin_tools():
        if tool.effect != "write":
            assert not {dep.kind for dep in tool.deps} & WRITE_TYPES, tool.name


def public(kind: type[Any]) -> set[str]:
    return {name for name in dir(kind) if not name.startswith("_")}


def test_no_read_tool_reaches_a_general_writer() -> None:
    """A built-in read tool holds views and, at most, declared bookkeeping: not a writer,
    nor its plugin's store (which writes any of its values). Catch-up reads the budget
    through `UsageReader` and sets its marks through `SeenMarks`; /find and chat_search
    find through `SearchReader`, and only /forget, a write, can forget."""
    general = WRITE_TYPES | {PluginStore}
    holders: dict[str, set[type[Any]]] = {}
    for tool in builtin_tools():
        kinds = {dep.kind for dep in tool.deps}
        if tool.effect != "write":
            assert not kinds & general, (tool.name, kinds & general)
            for kind in kinds & BOOKKEEPING_TYPES:
                holders.setdefault(tool.name, set()).add(kind)
    assert holders == {"chat_catchup": {SeenMarks}}
    asks = {tool.name: {dep.kind for dep in tool.deps} for tool in builtin_tools()}
    assert {UsageReader, SeenMarks} <= asks["chat_catchup"]
    assert SearchReader in asks["chat_find"] and SearchReader in asks["chat_search"]
    assert MessageSearch in asks["chat_forget"]
    # Each view and each bookkeeper can do what it is for, and nothing else.
    assert public(SeenMarks) == {"last", "mark"}
    assert public(SearchReader) == {"search", "position_of"}
    assert public(UsageReader) == {"spent"}
    assert not BOOKKEEPING_TYPES & WRITE_TYPES


@pytest.mark.parametrize(
    ("module", "name", "reason"),
    [
        (
            "tests.plugin_fixtures.read_writer",
            "readwriter",
            "tool 'count_reminders': parameter 'service' (ReminderService) can change the "
            'bot\'s state, but the tool is declared effect="read"',
        ),
        (
            "tests.plugin_fixtures.writer_service",
            "writer",
            "parameter 'service' (ReminderService) can change the bot's state, which a "
            "plugin's service may not hold",
        ),
    ],
)
async def test_a_plugin_asking_for_a_writer_where_it_may_not_fails(
    groupmate_bot: Any, module: str, name: str, reason: str
) -> None:
    bot = await groupmate_bot(plugins=[module])
    [status] = [s for s in bot.plugins if s.name == name]
    assert status.state == "failed"
    assert reason in (status.error or "")


async def test_a_plugins_background_work_calls_tools_as_itself_and_is_audited(
    groupmate_bot: Any,
) -> None:
    bot = await groupmate_bot(plugins=["tests.plugin_fixtures.nightly"])
    service = Nightly.running
    assert service is not None
    made = await service.remind("group-1", "water the plants")
    assert made.failure is None and "water the plants" in str(made.reply)
    assert await service.count("group-1") == 1
    assert bot.app.audit is not None
    [row] = await bot.app.audit.page(AuditQuery(chat_id="group-1", tool="reminder_set"))
    assert (row.source, row.auth, row.sender_id, row.sender_name) == (
        "plugin",
        "config",
        "plugin:nightly",
        "nightly",
    )
    assert row.outcome == "ok" and row.target_label == "#1"


async def looks_up(ctx: MessageContext) -> str:
    """What this context hands out."""
    kinds = (ReminderService, ReminderReader, AuditLog, Database)
    return ",".join(kind.__name__ for kind in kinds if ctx.deps.get(kind) is not None)


@pytest.mark.parametrize("effect", ["read", "external"])
async def test_a_tool_that_does_not_write_cannot_look_a_writer_up_either(effect: Any) -> None:
    """What a non-write tool was refused as a parameter, `ctx.deps` does not hand it."""
    deps = Deps(
        {
            ReminderService: object(),
            ReminderReader: object(),
            AuditLog: object(),
            Database: object(),
        }
    )
    ctx = make_ctx(deps=deps)
    seen = await build_tool(looks_up, effect=effect).invoke(ctx, NoArguments())
    assert seen.data == "ReminderReader"
    wrote = await build_tool(looks_up, effect="write").invoke(ctx, NoArguments())
    assert wrote.data == "ReminderService,ReminderReader,AuditLog,Database"


async def looks_up_the_bookkeeping(ctx: MessageContext) -> str:
    """What this context hands out of the usage and the marks."""
    kinds = (UsageLog, UsageReader, SeenMarks)
    return ",".join(kind.__name__ for kind in kinds if ctx.deps.get(kind) is not None)


async def test_a_read_tool_looks_up_the_usage_reader_and_the_marks_never_the_usage_log() -> None:
    deps = Deps({UsageLog: object(), UsageReader: object(), SeenMarks: object()})
    ctx = make_ctx(deps=deps)
    seen = await build_tool(looks_up_the_bookkeeping, effect="read").invoke(ctx, NoArguments())
    assert seen.data == "UsageReader,SeenMarks"


async def test_a_read_tool_still_lists_the_write_tools_its_sender_may_use(
    groupmate_bot: Any,
) -> None:
    """Withheld, not gone: help (a read) lists the reminder tools, which need a writer."""
    bot = await groupmate_bot()
    bot.model.calls("help", {})
    [listed] = await bot.say("what can you do?")
    assert "cancel #7" in listed and "switch our time zone to London" in listed


def test_the_rest_read_routes_ask_for_the_read_only_view() -> None:
    """The REST routes that read get `ReminderReader` (`Reminders`), never the service."""
    routes = [*reminders_api.router.routes, *admin_api.router.routes]
    viewing: set[str] = set()
    for route in routes:
        assert isinstance(route, APIRoute)
        hints = get_type_hints(route.endpoint, include_extras=True).values()
        kinds = {get_args(hint)[0] if get_args(hint) else hint for hint in hints}
        assert ReminderService not in kinds, route.path
        if set(route.methods or ()) <= {"GET", "HEAD"} and ReminderReader in kinds:
            viewing.add(route.path)
    assert viewing >= {
        "/v1/chats/{chat_id}/reminders",
        "/v1/chats/{chat_id}/reminders/{reminder_id}",
        "/v1/chats/{chat_id}/history",
        "/v1/chats/{chat_id}/settings",
        "/v1/chats",
        "/v1/reminders",
        "/v1/deliveries",
        "/v1/waiting",
        "/v1/status",
    }


def test_the_other_rest_routes_ask_for_views_never_writers() -> None:
    """The tools, audit, search and web routes are module-level routers whose routes ask
    for what they use (`Depends`); the ones that read get read-only views."""
    writers = {ReminderService, AuditLog, ChatLog, MessageSearch}
    routes = [
        *http_api.router.routes,
        *tools_api.router.routes,
        *search_api.router.routes,
        *web_api.router.routes,
    ]
    reading: dict[str, set[type]] = {}
    for route in routes:
        assert isinstance(route, APIRoute)
        hints = get_type_hints(route.endpoint, include_extras=True).values()
        kinds = {get_args(hint)[0] if get_args(hint) else hint for hint in hints}
        assert not kinds & writers, route.path
        if set(route.methods or ()) <= {"GET", "HEAD"}:
            reading[route.path] = kinds
    assert AuditReader in reading["/v1/audit"]
    assert SearchReader in reading["/v1/chats/{chat_id}/search"]
    assert ChatLogReader in reading["/v1/chats/{chat_id}/messages"]


def test_no_adapter_reaches_the_database_through_the_reminder_service() -> None:
    """Adapters and routes get the bot's `Database` (`BotHost.database`, `Store`), never
    `reminders.database`: the service is not the database handle."""
    assert not hasattr(BotHost, "reminders")
    found = []
    for path in sorted((ROOT / "bot" / "adapters").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Attribute) or node.attr != "database":
                continue
            owner = node.value
            name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
            if name in {"reminders", "service", "_service"}:
                found.append(f"{path.name}:{node.lineno}")
    assert found == []


def test_no_route_is_declared_inside_a_function() -> None:
    """Routes are module-level (`@router.get(...)` at the top of a module), asking for what
    they use with `Depends`: no factory closes over the bot to reach its parts."""
    verbs = {"get", "put", "post", "patch", "delete", "head", "api_route", "websocket"}
    found = []
    for path in sorted((ROOT / "bot" / "adapters").glob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for outer in ast.walk(tree):
            if not isinstance(outer, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for inner in ast.walk(outer):
                if inner is outer or not isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                for decorator in inner.decorator_list:
                    call = decorator.func if isinstance(decorator, ast.Call) else decorator
                    if isinstance(call, ast.Attribute) and call.attr in verbs:
                        found.append(f"{path.name}:{inner.lineno} {inner.name}")
    assert found == []
