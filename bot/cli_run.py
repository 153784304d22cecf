"""What the `groupmate` commands do once their arguments are read (bot.cli reads them):
chat, serve, mcp, check, plugins, db, plugin new. Apart from bot.cli so that `--help`
and a mistyped argument import none of this; each command's module is imported when it
runs (bot.cli_serve, bot.cli_check, bot.cli_data, bot.eval.cli), so that one imports
none of the others' (`check` no web server, `serve` no eval)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import get_args

from groupmate.bot.cli import DATA_COMMANDS, DEFAULT_CONFIG
from groupmate.bot.config import Config, ConfigError, load_config
from groupmate.bot.config_sections import LoggingSettings
from groupmate.bot.logs import setup_logging
from groupmate.storage import StorageError


def _config(options: argparse.Namespace) -> Config:
    path = options.config
    if path is None and Path(DEFAULT_CONFIG).exists():
        path = DEFAULT_CONFIG
    config = load_config(path)
    url = getattr(options, "url", None) or os.environ.get("GROUPMATE_STORAGE_URL")
    if url:
        config.storage.url = url
    return config


def _plugin_new(options: argparse.Namespace) -> int:
    """`groupmate plugin new NAME [--dir PATH]`: a plugin project to start from."""
    from groupmate.bot.scaffold import (  # the built-in tools' names: not for others
        ScaffoldError,
        new_plugin,
    )

    directory = Path(options.dir) if options.dir is not None else None
    try:
        target, written = new_plugin(options.name, directory)
    except (ScaffoldError, OSError) as exc:
        print(f"groupmate: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {target}/")
    for path in written:
        print(f"  {path.relative_to(target)}")
    print(f"next: cd {target} && pip install -e '.[test]' && pytest")
    return 0


def _command(options: argparse.Namespace, config: Config) -> int:
    if options.command == "check":
        from groupmate.bot import cli_check

        return cli_check.check(config)
    if options.command == "plugins":
        from groupmate.bot import cli_check

        return cli_check.list_plugins(config)
    if options.command == "db":
        from groupmate.bot import cli_check

        return cli_check.db(config, options.action)
    if options.command in DATA_COMMANDS:
        from groupmate.bot import cli_data

        return cli_data.run(options, config)
    if options.command == "eval":
        from groupmate.bot.eval import cli as eval_cli

        return eval_cli.run(options, config)
    from groupmate.bot import cli_serve

    return cli_serve.run(options, config)


def _log_level(config: Config) -> str:
    """The config's level, or GROUPMATE_LOG_LEVEL's for this run, read as the config's is:
    a level logging doesn't know is a ConfigError, never a traceback."""
    given = os.environ.get("GROUPMATE_LOG_LEVEL")
    if not given:
        return config.logging.level
    levels = get_args(LoggingSettings.model_fields["level"].annotation)
    if given.strip().upper() not in levels:
        raise ConfigError(
            f"GROUPMATE_LOG_LEVEL={given!r} is no log level; use {' | '.join(levels)}"
        )
    return given.strip().upper()


def run(options: argparse.Namespace) -> int:
    """Run the command bot.cli read; its exit status."""
    if options.command == "plugin":  # needs no config
        return _plugin_new(options)
    try:
        config = _config(options)
        setup_logging(_log_level(config), config.logging.format)
        return _command(options, config)
    except KeyboardInterrupt:
        return 130
    except (ConfigError, StorageError) as exc:
        print(f"groupmate: {exc}", file=sys.stderr)
        return 2
