"""The config the container image writes on its first start (bot/container.py): the
template with SQLite in /data (or the database compose names), the HTTP API on
0.0.0.0:8080 and the token from GROUPMATE_TOKEN; read as `groupmate serve` reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from groupmate.bot.config import Config, load_config
from groupmate.bot.container import TemplateChanged, first_config

ROOT = Path(__file__).resolve().parent.parent


def written(tmp_path: Path, **environ: str) -> Config:
    path = tmp_path / "config.yaml"
    path.write_text(first_config((ROOT / "config.yaml.template").read_text()))
    return load_config(path, environ=environ)


def test_sqlite_in_data_the_api_on_every_address_and_the_token(tmp_path: Path) -> None:
    config = written(tmp_path, GROUPMATE_TOKEN="t0k")
    assert config.storage.url == "sqlite:////data/groupmate.db"
    webhook = config.adapters.webhook
    assert (webhook.enabled, webhook.host, webhook.port) == (True, "0.0.0.0", 8080)
    assert webhook.token is not None and webhook.token.get_secret_value() == "t0k"


def test_the_database_compose_names_and_an_empty_one(tmp_path: Path) -> None:
    url = "postgresql://groupmate:pw@postgres:5432/groupmate"
    named = written(tmp_path, GROUPMATE_TOKEN="t", GROUPMATE_DATABASE_URL=url)
    assert named.storage.url == url
    # Set but empty: the default, as the shell's ${NAME:-default} has it.
    empty = written(tmp_path, GROUPMATE_TOKEN="t", GROUPMATE_DATABASE_URL="")
    assert empty.storage.url == "sqlite:////data/groupmate.db"


def test_a_template_without_a_line_it_changes_is_refused() -> None:
    template = (ROOT / "config.yaml.template").read_text()
    with pytest.raises(TemplateChanged):
        first_config(template.replace("    host: 127.0.0.1", "    host: ::1"))
