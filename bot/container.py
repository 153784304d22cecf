"""The container image's entry point (`python -m bot.container`): the contract the image
keeps, in one place.

- It serves on port 8080 and reads /data/config.yaml. On first start, with none there, it
  writes one from the template: SQLite in /data (`storage.url`, or the
  GROUPMATE_DATABASE_URL the container is given, as compose does), the HTTP API on
  0.0.0.0:8080, and its token from ${GROUPMATE_TOKEN}. An existing config is never
  touched.
- Without a token the bot refuses to start (a public bind needs one), saying to set
  GROUPMATE_TOKEN; a config of the user's own that names no token is refused by
  `groupmate serve` itself, in its own words.
- The bot runs as the unprivileged user `groupmate`. Started as root (the default), the
  entry point does one thing as root: it gives that user /data when /data is root's (a
  fresh `mkdir data` for `-v ./data:/data`), the folder itself, never a file in it (a
  file there could be a link the bot made to anywhere). Then it drops to the user, and
  everything else (the config included) is done as that user. Started as another user
  (`--user`), it runs as that user.
- What it writes is its user's alone (umask 077): the config, the database and its
  copies hold secrets.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from groupmate.storage.exceptions import GroupmateError

DATA = Path(os.environ.get("GROUPMATE_DATA", "/data"))
TEMPLATE = Path(os.environ.get("GROUPMATE_TEMPLATE", "/opt/groupmate/config.yaml.template"))
USER_ID = GROUP_ID = 10001  # `groupmate` in the image's /etc/passwd
# Each line of the template the image's config changes, and what it becomes: every one
# must be found exactly once, or the image would write a config that is not what it says.
_CHANGES = (
    (
        "  url: sqlite:///data/groupmate.db",
        "  url: ${GROUPMATE_DATABASE_URL:-sqlite:////data/groupmate.db}",
    ),
    ("    enabled: false\n    host: 127.0.0.1", "    enabled: true\n    host: 0.0.0.0"),
    ("    token: ${GROUPMATE_API_TOKEN}", "    token: ${GROUPMATE_TOKEN}"),
)


NO_TOKEN = (
    "groupmate: refusing to start: set GROUPMATE_TOKEN (e.g. podman run -e "
    "GROUPMATE_TOKEN=$(openssl rand -hex 24) ...). The HTTP API listens on 0.0.0.0 in the "
    "container, and without a token anyone who reaches the port could use it."
)


class TemplateChanged(GroupmateError):
    """The template no longer has a line the image's config changes."""


def first_config(template: str) -> str:
    """The image's config: the template with the changes above."""
    config = template
    for old, new in _CHANGES:
        if config.count(old) != 1:
            raise TemplateChanged(f"config.yaml.template has no single line {old.strip()!r}")
        config = config.replace(old, new)
    return "# Written by the container image on its first start; yours to edit.\n" + config


def _drop_root() -> None:
    """As root: give the bot user /data if it is root's (the folder alone: lstat and
    lchown, so a link is never followed), then become that user for good."""
    DATA.mkdir(parents=True, exist_ok=True)
    folder = os.lstat(DATA)
    if stat.S_ISDIR(folder.st_mode) and folder.st_uid == 0:
        os.chown(DATA, USER_ID, GROUP_ID, follow_symlinks=False)
        os.chmod(DATA, 0o700, follow_symlinks=False)
    os.setgroups([])
    os.setgid(GROUP_ID)
    os.setuid(USER_ID)


def _write_first(config: Path) -> None:
    """The image's config, as a new file only (never through a link, never over one)."""
    text = first_config(TEMPLATE.read_text())
    try:
        handle = os.open(config, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return  # there after all (another start, a link): it is the user's to write
    with os.fdopen(handle, "w") as file:
        file.write(text)
    print(f"groupmate: wrote {config} from the template (edit it, then restart)", flush=True)


def main() -> None:
    os.umask(0o077)
    if os.getuid() == 0:
        _drop_root()
    config = DATA / "config.yaml"
    if not os.path.lexists(config):
        _write_first(config)
    if "${GROUPMATE_TOKEN}" in config.read_text() and not os.environ.get("GROUPMATE_TOKEN"):
        print(NO_TOKEN, file=sys.stderr, flush=True)
        raise SystemExit(2)
    os.environ["HOME"] = str(DATA)
    groupmate = str(Path(sys.executable).with_name("groupmate"))
    os.execv(groupmate, [groupmate, "--config", str(config), "serve", *sys.argv[1:]])


if __name__ == "__main__":
    main()
