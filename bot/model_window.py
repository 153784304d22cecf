"""The model's context window and how the bot's own prompt spends it: what `serve` fits
its requests to, and what `groupmate check` reports. Apart from bot.runtime, so that
`check` imports no router, scheduler, metrics or web server to say it."""

from __future__ import annotations

from groupmate.bot.config import Config, LLMSettings
from groupmate.bot.plugin_runtime import PluginRuntime, configured_plugins
from groupmate.function_calls import FunctionCallLLM, MessageContext, ToolInvoker
from groupmate.function_calls.llm import PromptBudget
from groupmate.function_calls.server_info import ContextWindow, context_window


async def llm_context_window(settings: LLMSettings) -> ContextWindow:
    """`llm.context_tokens`; unset, what the server says (a few seconds at most), else 4096."""
    return await context_window(
        settings.context_tokens,
        base_url=settings.base_url,
        model=settings.model,
        api_key=settings.api_key.get_secret_value() if settings.api_key else None,
    )


async def prompt_budget(config: Config, window: ContextWindow) -> PromptBudget:
    """How `window` is spent on the configured bot's own tools (built-ins and plugins; MCP
    and OpenAPI servers add theirs while it runs), for a member's message in a group."""
    settings = config.llm
    tools = PluginRuntime(configured_plugins(config))
    async with FunctionCallLLM(
        model=settings.model,
        base_url=settings.base_url,
        api_key="unused",  # never sent: no request is made
        invoker=ToolInvoker(tools),
        tool_mode=settings.tool_mode,
        prompt_format=settings.prompt_format,
        tool_schema=settings.tool_schema,
        max_output_tokens=settings.max_output_tokens,
        context_tokens=window.tokens,
        context_source=window.source,
        http_backend="httpx",
    ) as llm:
        ctx = MessageContext(
            chat_id="groupmate:check", chat_type="group", sender_id="member",
            timezone=config.bot.timezone,
        )  # fmt: skip
        return llm.budget(list(tools), ctx)
