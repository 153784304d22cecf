"""Tool sets: a fixed set, the union of sets, and the wrappers, each of which only ever
narrows what it wraps; and the invoker that offers and refuses from one composed set."""

from __future__ import annotations

import dataclasses
import itertools
import logging
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from groupmate.bot.app import Bot
from groupmate.bot.config import parse_config
from groupmate.bot.messages import IncomingMessage
from groupmate.function_calls import (
    FunctionResult,
    MessageContext,
    Tool,
    ToolDefinitionError,
    ToolHiddenError,
    ToolInvoker,
    ToolPolicy,
    ToolRule,
    ToolSwitchedOffError,
    UnknownToolError,
    build_tool,
)
from groupmate.function_calls.handlers import builtin_tools
from groupmate.function_calls.remote.external import external_tool
from groupmate.function_calls.toolsets import (
    AbstractToolset,
    CombinedToolset,
    FunctionToolset,
    ToolFilter,
    exposed_name,
)
from groupmate.function_calls.vocabulary import Scope
from groupmate.testing import stub_llm as s
from tests.conftest import make_ctx

# Every kind of sender: each chat type, admin or not, asking as the model or a command.
CONTEXTS = [
    make_ctx(chat_type=chat_type, is_admin=admin, source=source)
    for chat_type, admin, source in itertools.product(
        ("group", "private"), (False, True), ("model", "command")
    )
]
GROUP = make_ctx(chat_type="group")
PRIVATE = make_ctx(chat_type="private")


def tool(name: str, **options: Any) -> Tool:
    async def handler() -> FunctionResult:
        return FunctionResult.direct(f"{name} ran")

    options.setdefault("examples", [f"{name}, please"])
    return build_tool(handler, name=name, description=f"The {name} tool.", **options)


def tools(*names: str, **options: Any) -> FunctionToolset:
    return FunctionToolset([tool(name, **options) for name in names])


def mixed() -> FunctionToolset:
    """One tool of each kind a sender may be refused."""
    return FunctionToolset(
        [
            tool("anyone"),
            tool("grouped", scope="group"),
            tool("secret", scope="private"),
            tool("purge", admin_only=True),
            tool("switch", for_model=False),
            tool("lookup", effect="read"),
        ]
    )


def offered(toolset: AbstractToolset, ctx: MessageContext | None) -> list[str]:
    return list(toolset.get_tools(ctx))


async def run(invoker: ToolInvoker, ctx: MessageContext, name: str) -> Any:
    return (await invoker.run(ctx, name, {})).reply


# --- a fixed set and the union of sets -----------------------------------------------


def test_a_fixed_set_offers_each_tool_where_its_own_declaration_lets_it() -> None:
    toolset = mixed()
    assert offered(toolset, None) == ["anyone", "grouped", "secret", "purge", "switch", "lookup"]
    assert offered(toolset, GROUP) == ["anyone", "grouped", "lookup"]
    listing = toolset.listing(PRIVATE)
    reasons = {name: held.reason for name, held in listing.hidden.items()}
    assert reasons == {"grouped": "scope", "purge": "admin_only", "switch": "not_for_model"}
    # Read like a registry: over every tool it may offer anyone.
    assert toolset.names() == offered(toolset, None) and len(toolset) == 6
    assert "purge" in toolset and toolset.get("purge").admin_only
    with pytest.raises(UnknownToolError):
        toolset.get("nothing")


def test_a_union_keeps_the_order_and_the_first_set_keeps_a_name(
    caplog: pytest.LogCaptureFixture,
) -> None:
    first = FunctionToolset([tool("a"), tool("shared", scope="private")], label="first")
    second = FunctionToolset([tool("b"), tool("shared")], label="second")
    union = CombinedToolset([first, second])
    caplog.set_level(logging.WARNING)
    for _ in range(3):
        assert offered(union, None) == ["a", "shared", "b"]
        # Hidden from this sender, the first set's tool still holds its name: the
        # second's `shared`, open to all, must not come through in its place.
        assert offered(union, GROUP) == ["a", "b"]
        assert union.listing(GROUP).reason("shared") == "scope"
        assert union.get("shared") is first.get("shared")
    clashes = [r.getMessage() for r in caplog.records]
    assert clashes == ["second: tool shared is left out; the name is taken"]  # once


# --- the wrappers ----------------------------------------------------------------------


def test_filtered_drops_what_its_predicate_refuses() -> None:
    kept = mixed().filtered(lambda ctx, tool: tool.effect == "read" or tool.name == "purge")
    assert offered(kept, None) == ["purge", "lookup"]
    assert offered(kept, GROUP) == ["lookup"]
    assert kept.listing(GROUP).reason("purge") == "admin_only"  # still the tool's own
    assert kept.listing(GROUP).reason("anyone") is None and "anyone" not in kept
    by_chat = mixed().filtered(lambda ctx, tool: ctx is None or ctx.chat_type == "private")
    assert offered(by_chat, GROUP) == [] and "anyone" in by_chat


def test_prefixed_renames_as_exposed_name_does_from_the_sources_spelling() -> None:
    async def call(ctx: MessageContext, arguments: dict[str, Any]) -> FunctionResult:
        return FunctionResult.direct("remote ran")

    long = "fetch_" + "x" * 70
    server = FunctionToolset(
        [external_tool(name, "d", {"type": "object"}, call) for name in ("get.time", long)]
    )
    assert server.names() == ["get_time", exposed_name("", long)]
    prefixed = server.prefixed("srv__")
    assert prefixed.names() == [exposed_name("srv__", "get.time"), exposed_name("srv__", long)]
    assert prefixed.names()[0] == "srv__get_time"
    renamed = prefixed.get("srv__get_time")
    assert (renamed.spelled, renamed.effect) == ("srv__get.time", "write")
    # Prefixed again, the name is the whole spelling's, as if it had been one prefix.
    twice = prefixed.prefixed("a_")
    assert twice.names() == [exposed_name("a_srv__", "get.time"), exposed_name("a_srv__", long)]


def test_prepared_may_drop_and_reorder_never_add() -> None:
    def private_first(ctx: MessageContext | None, offered: Sequence[Tool]) -> Sequence[Tool]:
        return sorted(offered, key=lambda tool: tool.scope != "private")[:3]

    prepared = mixed().prepared(private_first)
    assert offered(prepared, None) == ["secret", "anyone", "grouped"]
    assert offered(prepared, GROUP) == ["anyone", "grouped", "lookup"]
    assert prepared.listing(GROUP).reason("secret") == "scope"

    stranger = tool("stranger")
    widened = dataclasses.replace(mixed().get("purge"), admin_only=False)
    for adding in (
        lambda ctx, offered: [*offered, stranger],
        lambda ctx, offered: [widened],  # a copy of a tool given, made more open
    ):
        with pytest.raises(ToolDefinitionError, match="may drop tools, never add one"):
            mixed().prepared(adding).get_tools(GROUP)


@pytest.mark.parametrize(
    ("declared", "narrowing", "group", "private"),
    [
        ("both", "both", True, True),
        ("both", "group", True, False),
        ("group", "group", True, False),
        ("private", "private", False, True),
        ("private", "group", False, False),  # no chat is both: offered nowhere
        ("group", "private", False, False),
    ],
)
def test_a_narrowed_scope_is_the_intersection(
    declared: Scope, narrowing: Scope, group: bool, private: bool
) -> None:
    narrowed = tools("t", scope=declared).narrowed(scope=narrowing)
    assert ("t" in offered(narrowed, GROUP), "t" in offered(narrowed, PRIVATE)) == (group, private)
    assert ("t" in narrowed) == (group or private)
    if group or private:
        assert narrowed.get("t").scope == ("both" if group and private else narrowing)
        hidden_in = PRIVATE if group and not private else GROUP if private and not group else None
        if hidden_in is not None:
            assert narrowed.listing(hidden_in).reason("t") == "scope"


def test_narrowed_adds_admin_only_and_filters_on_the_sources_names() -> None:
    async def call(ctx: MessageContext, arguments: dict[str, Any]) -> FunctionResult:
        return FunctionResult.direct("ran")

    server = FunctionToolset(
        [external_tool(name, "d", {}, call) for name in ("files.read", "files.drop", "ping")]
    )
    narrowed = server.narrowed(admin_only=True, tools=ToolFilter(deny=("files.d*",)))
    assert narrowed.names() == ["files_read", "ping"]  # the deny list saw `files.drop`
    assert narrowed.get("ping").admin_only and not server.get("ping").admin_only
    assert narrowed.listing(GROUP).reason("ping") == "admin_only"
    assert offered(narrowed, make_ctx(is_admin=True)) == ["files_read", "ping"]
    plain = mixed()
    assert plain.narrowed() is plain  # options that narrow nothing: no wrapper


def test_refusing_hides_with_its_reason() -> None:
    refusing = mixed().refusing(lambda ctx, tool: "policy" if tool.effect == "read" else None)
    assert offered(refusing, None) == offered(mixed(), None)
    assert offered(refusing, GROUP) == ["anyone", "grouped"]
    assert refusing.listing(GROUP).reason("lookup") == "policy"


WRAPPERS: dict[str, Callable[[AbstractToolset], AbstractToolset]] = {
    "filtered": lambda inner: inner.filtered(lambda ctx, tool: tool.name != "anyone"),
    "prepared": lambda inner: inner.prepared(lambda ctx, offered: list(offered)[1:]),
    "narrowed group": lambda inner: inner.narrowed(scope="group"),
    "narrowed private": lambda inner: inner.narrowed(scope="private", admin_only=True),
    "narrowed deny": lambda inner: inner.narrowed(tools=ToolFilter(deny=("s*",))),
    "refusing": lambda inner: inner.refusing(lambda ctx, tool: "policy"),
    "prefixed": lambda inner: inner.prefixed(""),
}


@pytest.mark.parametrize("wrap", WRAPPERS.values(), ids=WRAPPERS.keys())
def test_a_wrapper_only_narrows(wrap: Callable[[AbstractToolset], AbstractToolset]) -> None:
    inner = mixed()
    wrapped = wrap(inner)
    assert set(wrapped.names()) <= set(inner.names())
    for ctx in CONTEXTS:
        mine, theirs = wrapped.get_tools(ctx), inner.get_tools(ctx)
        assert set(mine) <= set(theirs)
        for name, tool in mine.items():
            # Never more open than the tool it came from: its scope, its rights.
            assert tool.scope == theirs[name].scope or theirs[name].scope == "both"
            assert tool.admin_only >= theirs[name].admin_only
        # The same objects for every context: indexes find them by identity.
        assert all(tool is wrapped.get(name) for name, tool in mine.items())


def test_a_listing_for_anyone_is_kept_until_a_tool_under_it_changes() -> None:
    """Listings, indexes and `in` ask for every tool at every message: a composition
    answers with the same listing object until a set under it changes."""
    inner = tools("a", "b")
    composed = CombinedToolset(
        [inner.prefixed("x__").filtered(lambda ctx, t: True), mixed().narrowed(scope="group")]
    ).refusing(lambda ctx, t: None)
    first = composed.listing(None)
    assert composed.listing(None) is first
    inner.register(tool("c"))
    again = composed.listing(None)
    assert again is not first and list(again.offered)[:3] == ["x__a", "x__b", "x__c"]
    assert composed.listing(None) is again and "x__c" in composed
    # A context's listing is worked out each time: a chat's switches may have changed.
    assert composed.listing(GROUP) is not composed.listing(GROUP)


# --- the invoker: one composed set -----------------------------------------------------


async def test_the_invoker_offers_and_refuses_from_one_composed_set() -> None:
    plugin = tools("roll", "secret_roll").narrowed(scope="group", admin_only=True)
    server = tools("add").prefixed("fx__")
    policy = ToolPolicy({"fx__*": ToolRule(who="nobody")}, monotonic=lambda: 0.0)
    invoker = ToolInvoker(CombinedToolset([mixed(), plugin, server]), policy=policy)
    admin = make_ctx(is_admin=True)
    assert [tool.name for tool in invoker.offered(admin)] == [
        "anyone", "grouped", "purge", "lookup", "roll", "secret_roll",
    ]  # fmt: skip
    assert await run(invoker, admin, "roll") == "roll ran"
    for ctx, name, reason in [
        (GROUP, "roll", "admin_only"),
        (make_ctx(chat_type="private", is_admin=True), "roll", "scope"),
        (admin, "fx__add", "policy"),
    ]:
        with pytest.raises(ToolHiddenError) as hidden:
            await run(invoker, ctx, name)
        assert hidden.value.reason == reason
        assert hidden.value.available == [tool.name for tool in invoker.offered(ctx)]
    with pytest.raises(ToolSwitchedOffError):
        await run(invoker, make_ctx(tools_off=frozenset({"anyone"})), "anyone")
    with pytest.raises(UnknownToolError):
        await run(invoker, admin, "add")  # only under its prefixed name


async def test_help_lists_what_the_invokers_set_offers() -> None:
    composed = CombinedToolset([FunctionToolset([builtin_tools().get("help")]), mixed()])
    policy = ToolPolicy({"lookup": ToolRule(who="admins")}, monotonic=lambda: 0.0)
    invoker = ToolInvoker(composed, policy=policy)
    said = await run(invoker, make_ctx(source="command"), "help")
    # `switch` is for commands only (for_model=False): plain words never reach it, so
    # its example is no "ask me" line.
    assert said.splitlines()[1:-1] == ["• anyone, please", "• grouped, please"]


async def test_a_bot_composes_its_set_once(tmp_path: Any) -> None:
    config = parse_config(
        {
            "storage": {"url": f"sqlite:///{tmp_path / 'bot.db'}"},
            "plugins": [
                {"module": "tests.plugin_fixtures.scoped", "scope": "group"},
                "tests.plugin_fixtures.bad_service",
            ],
        },
        environ={},
    )
    bot = Bot(config)
    composed = bot.registry
    assert composed is bot.invoker.registry
    assert "needs_client" in composed and "poll" in composed  # loaded, not yet started
    async with bot:
        # The same set: what changed (a plugin whose service failed) changed inside it.
        assert bot.registry is composed and bot.invoker.registry is composed
        assert "needs_client" not in composed and "poll" in composed
        ctx = await bot.context(
            IncomingMessage(
                chat_id="p", chat_type="private", sender_id="u", sender_name="U", text="hi"
            )
        )
        assert ctx.deps.get(AbstractToolset) is composed  # what help and /tools read
        assert composed.listing(ctx).reason("poll") == "scope"
        assert "poll" not in [tool.name for tool in bot.invoker.offered(ctx)]


async def test_a_rounds_calls_are_checked_against_the_tools_of_that_round(
    stub: Any, make_llm: Any
) -> None:
    """A turn lists the sender's tools once a round (as pydantic-ai lists a run step's):
    a tool switched off while the first round's calls ran is refused in the next."""
    off: set[str] = set()
    sets = FunctionToolset()

    @sets.tool(description="Switch the lights off", effect="write")
    async def lights_off() -> FunctionResult:
        off.add("lights_on")  # meanwhile an admin switched lights_on off here
        return FunctionResult.for_model("the lights are off")

    @sets.tool(description="Switch the lights on", effect="write")
    async def lights_on() -> FunctionResult:
        return FunctionResult.for_model("the lights are on")

    invoker = ToolInvoker(sets.refusing(lambda ctx, t: "switched_off" if t.name in off else None))
    stub.script(s.calls(("lights_off", {})), s.calls(("lights_on", {})), s.text("Done."))
    llm = make_llm(invoker.registry, invoker=invoker, context_tokens=32_768)
    result = await llm.run(make_ctx(), "lights off, then on again")
    assert [(c.name, c.outcome) for c in result.calls] == [
        ("lights_off", "ok"),
        ("lights_on", "hidden"),
    ]
