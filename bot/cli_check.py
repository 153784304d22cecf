"""What `groupmate check`, `plugins` and `db` do: report the config, the database and the
plugins. Apart from `serve`'s modules: a config of no model, search or plugin imports
no model client, web server or built-in tool to be reported."""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING

from groupmate.bot.adapters import install_line, missing_sdks
from groupmate.bot.config import Config
from groupmate.bot.status import config_lines, model_warning, plugin_lines, probe_search
from groupmate.storage import StorageError, head_revision
from groupmate.storage.location import shown_url
from groupmate.storage.revisions import is_known, revision_at

if TYPE_CHECKING:
    from groupmate.function_calls.plugins import PluginStatus


def _plugin_statuses(config: Config) -> tuple[list[PluginStatus], list[str]]:
    """The config's plugins, each loaded or why not, and the commands of theirs that
    clash with another's. With none configured nothing loads: the built-in tools load
    (their modules imported) only to find a plugin's clash."""
    if not config.plugins:
        return [], []
    from groupmate.bot.plugin_runtime import command_clashes, configured_plugins

    statuses = configured_plugins(config).statuses
    return [s for s in statuses if not s.builtin], command_clashes(statuses)


def check(config: Config) -> int:
    """What is enabled, without secrets; 1 when a configured plugin does not load (the
    bot would serve without it), a plugin's command clashes with another command (the
    bot would answer it with the other) or a configured platform's SDK is not installed."""
    missing = missing_sdks(config)
    if missing:
        print(f"groupmate: {install_line(missing)}", file=sys.stderr)
    url = shown_url(config.storage.url)
    try:
        revision = revision_at(config.storage.url)
    except StorageError as exc:
        revision = f"unreachable ({exc})"
    context = None
    if config.llm.enabled:  # the bot (and its model client) only for a config with a model
        from groupmate.bot.model_window import llm_context_window, prompt_budget

        # The context window as `serve` would find it: asked of the server when not configured.
        context = asyncio.run(llm_context_window(config.llm))
    print("\n".join(config_lines(config, url, revision, context=context)))
    if context is not None:
        budget = asyncio.run(prompt_budget(config, context))
        print(budget.describe())
        if not budget.fits:
            print(
                f"groupmate: the model's window ({budget.window.tokens} tokens) is too small "
                f"for the bot's own instructions ({budget.minimal} tokens, and "
                f"{budget.answer} kept for the answer): start the server with a larger "
                "window and set llm.context_tokens to it, or lower llm.max_output_tokens",
                file=sys.stderr,
            )
            return 1
    if config.llm.base_url:
        from groupmate.function_calls.server_info import served_models  # the model client

        key = config.llm.api_key.get_secret_value() if config.llm.api_key else None
        served = asyncio.run(served_models(config.llm.base_url, api_key=key))
        warning = model_warning(config, served)
        if warning is not None:
            print(f"groupmate: warning: {warning}", file=sys.stderr)
    if config.search.enabled:
        print("\n".join(asyncio.run(probe_search(config))))
    plugins, clashes = _plugin_statuses(config)
    print("\n".join(plugin_lines(plugins) or ["plugins: none configured"]))
    failed = [s for s in plugins if s.state == "failed"]
    for status in failed:
        print(f"groupmate: plugin {status.name} does not load: {status.error}", file=sys.stderr)
    for clash in clashes:
        print(f"groupmate: {clash}", file=sys.stderr)
    return 1 if failed or clashes or missing else 0


def list_plugins(config: Config) -> int:
    """Configured plugins (loaded, or why not) and installed ones the config leaves
    off; 1 when a configured one does not load."""
    from groupmate.bot.plugin_runtime import (
        listing,  # the plugin machinery: not for `check` without
    )

    statuses = listing(config)
    print("\n".join(plugin_lines(statuses) or ["no plugins configured or installed"]))
    return 1 if any(s.state == "failed" for s in statuses) else 0


def db(config: Config, action: str) -> int:
    # Alembic and SQLAlchemy: not for `check`, which only reads (storage.revisions).
    from groupmate.storage import Database, current_revision, upgrade

    database = Database(config.storage.url)
    try:
        copy = upgrade(database) if action == "upgrade" else None
        revision = current_revision(database)
    finally:
        database.close()
    if copy is not None:
        print(f"copied the database to {copy} before upgrading it")
    state = "up to date" if revision == head_revision() else f"behind {head_revision()}"
    if not is_known(revision):
        state = "newer than this groupmate knows: it won't start on it"
    print(f"{database.safe_url}: schema revision {revision or 'none'} ({state})")
    return 0
