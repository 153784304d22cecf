"""The `groupmate` command line: chat, serve, check, db."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import uvicorn

from bot.adapters.console import run_console
from bot.adapters.http import create_app
from bot.app import Bot
from bot.config import Config, ConfigError, load_config
from bot.logs import setup_logging
from storage import (
    Database,
    StorageError,
    current_revision,
    head_revision,
    upgrade,
)

DEFAULT_CONFIG = "config.yaml"


def _config(options: argparse.Namespace) -> Config:
    path = options.config
    if path is None and Path(DEFAULT_CONFIG).exists():
        path = DEFAULT_CONFIG
    config = load_config(path)
    url = getattr(options, "url", None) or os.environ.get("GROUPMATE_STORAGE_URL")
    if url:
        config.storage.url = url
    return config


async def _chat(config: Config) -> None:
    await run_console(Bot(config), user=os.environ.get("USER") or "you")


async def _serve(config: Config) -> None:
    webhook = config.adapters.webhook
    async with Bot(config) as bot:
        server = uvicorn.Server(
            uvicorn.Config(
                create_app(bot),
                host=webhook.host,
                port=webhook.port,
                lifespan="off",
                log_level="warning",
                access_log=False,
                # Longer than clients' usual idle expiry, so they never reuse a connection
                # the server is closing at that very moment.
                timeout_keep_alive=30,
            )
        )
        print(f"groupmate serving on http://{webhook.host}:{webhook.port}", flush=True)
        await server.serve()


def _check(config: Config) -> int:
    """What is enabled, without secrets."""
    database = Database(config.storage.url)
    try:
        revision = current_revision(database)
    except StorageError as exc:
        revision = f"unreachable ({exc})"
    finally:
        database.close()
    webhook = config.adapters.webhook
    llm = config.llm
    lines = [
        f"bot: {config.bot.name}, time zone {config.bot.timezone}, "
        f"groups {', '.join(config.bot.groups.allow)}, {len(config.bot.admins)} admin(s)",
        f"storage: {database.safe_url} (schema {revision}; code {head_revision()})",
        "llm: "
        + (
            f"{llm.model} at {llm.base_url or 'the OpenAI API'}, tools {llm.tool_mode}"
            if llm.enabled
            else "off (offline commands only; set OPENAI_API_KEY or llm.base_url)"
        ),
        "search: "
        + (f"{config.search.provider} ({config.search.model})" if config.search.enabled else "off"),
        "console adapter: " + ("on" if config.adapters.console.enabled else "off"),
        f"http adapter: {webhook.host}:{webhook.port}, "
        + ("token required" if webhook.token else "no token")
        + (", outbound webhook set" if webhook.outbound_url else ", no outbound webhook"),
    ]
    print("\n".join(lines))
    return 0


def _db(config: Config, action: str) -> int:
    database = Database(config.storage.url)
    try:
        if action == "upgrade":
            upgrade(database)
        revision = current_revision(database)
    finally:
        database.close()
    state = "up to date" if revision == head_revision() else f"behind {head_revision()}"
    print(f"{database.safe_url}: schema revision {revision or 'none'} ({state})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    config_help = f"config file (default: ./{DEFAULT_CONFIG} if present)"
    parser = argparse.ArgumentParser(prog="groupmate", description="Group-chat assistant bot.")
    parser.add_argument("--config", help=config_help)
    # `--config` is accepted before or after the subcommand.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", default=argparse.SUPPRESS, help=config_help)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("chat", parents=[common], help="a simulated group chat in this terminal")
    commands.add_parser("serve", parents=[common], help="the HTTP API (adapters.webhook.*)")
    commands.add_parser("check", parents=[common], help="validate the config, print what is on")
    db = commands.add_parser("db", parents=[common], help="database schema migrations")
    db.add_argument("action", choices=["upgrade", "current"])
    db.add_argument("--url", help="database URL (default: storage.url)")
    options = parser.parse_args(argv)
    try:
        config = _config(options)
        setup_logging(os.environ.get("GROUPMATE_LOG_LEVEL") or config.logging.level)
        if options.command == "check":
            return _check(config)
        if options.command == "db":
            return _db(config, options.action)
        asyncio.run(_chat(config) if options.command == "chat" else _serve(config))
    except KeyboardInterrupt:
        return 130
    except (ConfigError, StorageError) as exc:
        print(f"groupmate: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
