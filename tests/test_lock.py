"""The locks: requirements.lock (the app and PostgreSQL's driver: what the container
image installs) and requirements-dev.lock (with the tests and tools: what `make run`,
`make test` and CI install). Every requirement pinned to a version its range allows, each
pin with its hashes, nothing pinned twice, the same versions in both, no test tool in
the app's."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
_PIN = re.compile(r"^(?P<name>[A-Za-z0-9_.\-]+)==(?P<version>[^\s;\\]+)")


APP, DEV = "requirements.lock", "requirements-dev.lock"


def pins(lock: str) -> dict[str, tuple[Version, int]]:
    """Each pinned package: its version and how many hashes the lock has for it."""
    found: dict[str, tuple[Version, int]] = {}
    current: str | None = None
    for line in (ROOT / lock).read_text().splitlines():
        pinned = _PIN.match(line)
        if pinned:
            current = canonicalize_name(pinned["name"])
            assert current not in found, f"{current} is pinned twice"
            found[current] = (Version(pinned["version"]), 0)
        elif current is not None and line.strip().startswith("--hash=sha256:"):
            version, hashes = found[current]
            found[current] = (version, hashes + 1)
    return found


def _own_extras(requirements: list[str]) -> list[str]:
    return [
        extra
        for r in map(Requirement, requirements)
        if r.name == "groupmate"
        for extra in sorted(r.extras)
    ]


def required(*extras: str) -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    optional = project["optional-dependencies"]
    # An extra naming groupmate's own extras (`all`) stands for theirs
    expanded = [name for extra in extras for name in _own_extras(optional[extra]) or [extra]]
    wanted = [*project["dependencies"], *(r for extra in expanded for r in optional[extra])]
    return [Requirement(r) for r in wanted]


@pytest.mark.parametrize(
    ("lock", "extras"),
    [(APP, ("all", "postgres", "speed")), (DEV, ("dev", "docs", "all", "postgres", "speed"))],
)
def test_each_lock_pins_every_requirement_within_its_range_with_hashes(
    lock: str, extras: tuple[str, ...]
) -> None:
    locked = pins(lock)
    assert len(locked) > 50
    for requirement in required(*extras):
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{requirement} is not in {lock}: run make lock"
        version, _ = locked[name]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"{lock} pins {name} {version}, outside {requirement}: run make lock"
        )
    unhashed = [name for name, (_, hashes) in locked.items() if hashes == 0]
    assert unhashed == []


def test_the_app_lock_is_the_dev_locks_versions_without_the_tools() -> None:
    app, dev = pins(APP), pins(DEV)
    assert {name: version for name, (version, _) in app.items()} == {
        name: dev[name][0] for name in app
    }
    assert not {"pytest", "mypy", "ruff", "playwright", "pip-tools"} & set(app)


@pytest.mark.parametrize("lock", [APP, DEV])
def test_the_locks_are_made_by_make_lock(lock: str) -> None:
    """Each lock's header names the command that made it: `make lock`'s, from PyPI alone
    (no local wheel folder or extra index in it); the Makefile installs the dev lock,
    and the container image the app's."""
    text = (ROOT / lock).read_text()
    makefile = (ROOT / "Makefile").read_text()
    for flag in ("--generate-hashes", "--no-emit-find-links", "--no-emit-index-url"):
        assert flag in text.split("\n\n", 1)[0] and flag in makefile
    assert "--index-url=https://pypi.org/simple" in text
    assert "file://" not in text and "/opt/" not in text
    assert "--require-hashes -r requirements-dev.lock" in makefile
