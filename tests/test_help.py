from __future__ import annotations

import function_calls.handlers  # noqa: F401  (registers the built-in tools)
from function_calls import FunctionResult, MessageContext, ToolRegistry
from function_calls.handlers import builtin_tools
from groupmate.testing import stub_llm as s
from tests.conftest import make_ctx


def _registry() -> ToolRegistry:
    extra = ToolRegistry()
    extra.tool(name="weather", description="Current weather", examples=["weather in Rome?"])(
        lambda ctx: FunctionResult.direct("sunny")
    )
    extra.tool(name="purge", description="Delete everything", admin_only=True)(lambda ctx: None)
    extra.tool(name="diary", description="Private diary", scope="private")(lambda ctx: None)
    return ToolRegistry([builtin_tools().get("help")]).merged(extra)


async def test_help_lists_only_what_this_sender_may_use(stub, make_llm) -> None:
    stub.script(s.calls(("help", {})))
    result = await make_llm(_registry()).run(make_ctx(), "what can you do?")
    assert result.text == (
        'Here is what I can do here:\n• weather: Current weather (e.g. "weather in Rome?")'
    )
    assert result.llm_calls == 1


async def test_help_for_an_admin_in_private_chat(stub, make_llm) -> None:
    stub.script(s.calls(("help", {})))
    ctx: MessageContext = make_ctx(chat_type="private", is_admin=True)
    result = await make_llm(_registry()).run(ctx, "help")
    lines = result.text.splitlines()
    assert [line.split(":")[0] for line in lines[1:]] == ["• weather", "• purge", "• diary"]
