"""The `groupmate` command line: chat, serve, mcp, check, db, backup, export, import, eval,
plugins, plugin.

This module reads the arguments only, with nothing but the standard library: `--help`
and a mistyped argument answer at once. What a command does is bot.cli_run's, imported
once the arguments are read (the bot, its model client and its database take seconds).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import get_args, overload

DEFAULT_CONFIG = "config.yaml"
INSECURE_FLAG = "--insecure-no-auth"
DATA_COMMANDS = {
    "backup": "copy the SQLite database to FILE, safe while the bot runs",
    "export": "write every row of the database to FILE (JSON Lines)",
    "import": "load an export FILE into a new, empty database",
}


class _Later(Sequence[str]):
    """An option's choices, read from the module that defines them when first asked for
    (checking a value, or printing that command's help), not while the parser is built."""

    def __init__(self, load: Callable[[], Sequence[str]]) -> None:
        self._load = load
        self._items: tuple[str, ...] | None = None

    def _loaded(self) -> tuple[str, ...]:
        if self._items is None:
            self._items = tuple(self._load())
        return self._items

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return self._loaded()[index]

    def __len__(self) -> int:
        return len(self._loaded())

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())


def _prompt_formats() -> Sequence[str]:
    from groupmate.function_calls.prompt_formats import PROMPT_FORMATS

    return list(PROMPT_FORMATS)


def _tool_schemas() -> Sequence[str]:
    from groupmate.function_calls.vocabulary import ToolSchema

    return get_args(ToolSchema)


def _vias() -> Sequence[str]:
    from groupmate.bot.eval.runner import Via

    return get_args(Via)


def _port(value: str) -> int:
    try:
        port = int(value)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{value!r} is no port (0 to 65535)")
    return port


def _eval_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], common: argparse.ArgumentParser
) -> None:
    parser = commands.add_parser(
        "eval", parents=[common], help="run the eval corpus against an OpenAI-compatible endpoint"
    )
    parser.add_argument("--base-url", help="the endpoint (default: llm.base_url)")
    parser.add_argument("--model", help="the model (default: llm.model)")
    parser.add_argument("--mode", choices=["native", "prompt"], default="native")
    # A metavar each, so that building the parser does not list (and so load) the choices.
    parser.add_argument(
        "--format",
        choices=_Later(_prompt_formats),
        default="hermes",
        dest="prompt_format",
        metavar="FORMAT",
        help="the prompt format in prompt mode: %(choices)s",
    )
    parser.add_argument(
        "--schema",
        choices=_Later(_tool_schemas),
        default="auto",
        dest="tool_schema",
        metavar="SCHEMA",
        help="llm.tool_schema (%(choices)s): auto is compact in prompt mode and under an 8k window",
    )
    parser.add_argument(
        "--temperature", type=float, default=0.0, help="sampling temperature (default 0)"
    )
    parser.add_argument("--cases", type=Path, default=Path("evals"), help="a file or folder")
    parser.add_argument("--only", nargs="*", default=[], help="case ids or tags to run")
    parser.add_argument(
        "--results", type=Path, default=Path("bench/results"), help="JSON goes here"
    )
    parser.add_argument(
        "--via",
        choices=_Later(_vias),
        default="handle",
        metavar="VIA",
        help="%(choices)s: send each case's message to Bot.handle or POST it to /v1/messages "
        "of the HTTP API",
    )
    parser.add_argument(
        "--minimal",
        action="store_true",
        help="configure the bot as a new user would: only llm.base_url, model and tool_mode "
        "(--mode), the rest the defaults; every sender an ordinary member",
    )
    parser.add_argument(
        "--fast-path",
        action="store_true",
        help="keep reminders.fast_path on (a request the grammar reads whole is set without "
        "the model); off by default, so that the model is what is measured",
    )


def parser() -> argparse.ArgumentParser:
    config_help = f"config file (default: ./{DEFAULT_CONFIG} if present)"
    parser = argparse.ArgumentParser(prog="groupmate", description="Group-chat assistant bot.")
    parser.add_argument("--config", help=config_help)
    # `--config` is accepted before or after the subcommand.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--config", default=argparse.SUPPRESS, help=config_help)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("chat", parents=[common], help="a simulated group chat in this terminal")
    serve = commands.add_parser("serve", parents=[common], help="the HTTP API (adapters.webhook.*)")
    serve.add_argument("--host", help="the address to listen on (adapters.webhook.host)")
    serve.add_argument(
        "--port",
        type=_port,
        help="the port to listen on, 0 for any free one (adapters.webhook.port)",
    )
    serve.add_argument(
        INSECURE_FLAG,
        action="store_true",
        help="serve on a non-loopback address without adapters.webhook.token (unsafe)",
    )
    commands.add_parser(
        "mcp", parents=[common], help="serve the bot's tools over MCP stdio (mcp.serve.*)"
    )
    commands.add_parser("check", parents=[common], help="validate the config, print what is on")
    commands.add_parser(
        "plugins", parents=[common], help="installed and configured plugins, and their state"
    )
    db = commands.add_parser("db", parents=[common], help="database schema migrations")
    db.add_argument("action", choices=["upgrade", "current"])
    db.add_argument("--url", help="database URL (default: storage.url)")
    for name, text in DATA_COMMANDS.items():
        data = commands.add_parser(name, parents=[common], help=text)
        data.add_argument("file", type=Path, metavar="FILE")
        data.add_argument("--url", help="database URL (default: storage.url)")
    _eval_parser(commands, common)
    plugin = commands.add_parser("plugin", help="plugin projects: `plugin new NAME`")
    plugin_actions = plugin.add_subparsers(dest="action", required=True)
    plugin_new = plugin_actions.add_parser("new", help="write a plugin project to start from")
    plugin_new.add_argument("name", help="the plugin's name: lowercase letters, digits, _ or -")
    plugin_new.add_argument("--dir", help="where to write it (default: ./groupmate-NAME)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    options = parser().parse_args(argv)
    from groupmate.bot import cli_run

    return cli_run.run(options)


if __name__ == "__main__":
    raise SystemExit(main())
