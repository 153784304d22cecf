"""Two steps of the container image's build (Containerfile), kept here to be tested.

`requirements`: the lines of requirements.lock (versions and hashes as they are) that
the core and the chosen platforms' extras need, for `pip install --require-hashes`. The
lock is compiled with every extra, and pip-compile's `# via` notes are its dependency
graph: a package is needed when the project requires it (the core, a chosen extra) or
when a needed package is among those it is there for. Every extra the lock was compiled
with that is not a platform (`postgres`, ...) is always installed. Run by the build's
python3 before anything is installed: the standard library only, nothing of groupmate.

`bytecode`: bytecode for groupmate and for what a start imports (the installed
platforms' adapters included), nothing more. The image's files are the bot user's to
read only, so Python can't cache what it compiles: a module without bytecode here is
compiled again on every start. Modules a start never imports (most of a vendor SDK's
generated API, the tools') stay without it, which keeps the image small."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import py_compile
import re
import sys
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._\-]*)==")
_NAME = re.compile(r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._\-]*)\s*(?:\[(?P<extras>[^\]]*)\])?")
_LOCKED_EXTRA = re.compile(r"--extra[= ](?P<name>[A-Za-z0-9._\-]+)")
# What pip-compile writes for a requirement of the project itself
_PROJECT = "(pyproject.toml)"


@dataclass(frozen=True, slots=True)
class Locked:
    """One package of the lock: its lines (pin, hashes, notes) and what it is there for."""

    text: str
    via: frozenset[str]


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(text: str) -> dict[str, Locked]:
    """The lock's packages by canonical name."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        pinned = _PIN.match(line)
        if pinned:
            current = blocks.setdefault(canonical(pinned["name"]), [])
        if current is not None:
            current.append(line)
    locked = {}
    for name, lines in blocks.items():
        # "# via x", or "# via" and then "#   x" a line each
        notes = [line.split("#", 1)[1].strip() for line in lines if "#" in line]
        parents = [note.removeprefix("via").strip() for note in notes]
        via = {canonical(parent) for parent in parents if parent and _PROJECT not in parent}
        locked[name] = Locked("\n".join(lines), frozenset(via))
    return locked


def locked_extras(text: str) -> list[str]:
    """The extras the lock was compiled with (its header's command)."""
    header = "\n".join(line for line in text.splitlines() if line.startswith("#"))
    return list(dict.fromkeys(match["name"] for match in _LOCKED_EXTRA.finditer(header)))


def _own_extras(requirement: str, project: str) -> list[str] | None:
    named = _NAME.match(requirement)
    if named is None or canonical(named["name"]) != canonical(project):
        return None
    return [extra.strip() for extra in (named["extras"] or "").split(",") if extra.strip()]


def expand(extras: Iterable[str], optional: dict[str, list[str]], project: str) -> list[str]:
    """Extras with those that name the project's own (`all`) replaced by theirs."""
    expanded: list[str] = []
    for extra in extras:
        own = [e for r in optional[extra] for e in _own_extras(r, project) or []]
        expanded.extend(expand(own, optional, project) if own else [extra])
    return list(dict.fromkeys(expanded))


def platforms(pyproject: dict[str, object]) -> list[str]:
    """The chat platforms' extras: those `all` names."""
    project = _table(pyproject, "project")
    return expand(["all"], _table(project, "optional-dependencies"), str(project["name"]))


def chosen_extras(argument: str, pyproject: dict[str, object], lock: str) -> list[str]:
    """The extras an image with the platforms `argument` names installs: those, and the
    lock's extras that are no platform. `all` is every platform, an empty one none."""
    every = platforms(pyproject)
    given = [name.strip() for name in argument.replace(" ", ",").split(",") if name.strip()]
    names = list(dict.fromkeys(n for name in given for n in (every if name == "all" else [name])))
    unknown = [name for name in names if name not in every]
    if unknown:
        # A build's message (LookupError, as a requirement missing from the lock): this
        # script runs before groupmate is installed, outside its exception tree.
        raise LookupError(
            f"PLATFORMS: unknown platform {', '.join(unknown)}; "
            f"choose from {','.join(every)} (or all, or nothing)"
        )
    project = _table(pyproject, "project")
    optional = _table(project, "optional-dependencies")
    others = expand(locked_extras(lock), optional, str(project["name"]))
    return list(dict.fromkeys([*[e for e in others if e not in every], *names]))


def needed(lock: str, pyproject: dict[str, object], extras: list[str]) -> list[str]:
    """The lock's entries the core and `extras` need, in the lock's order."""
    project = _table(pyproject, "project")
    optional = _table(project, "optional-dependencies")
    requirements = [
        *_strings(project["dependencies"]),
        *(r for extra in extras for r in _strings(optional[extra])),
    ]
    packages = read_lock(lock)
    wanted: set[str] = set()
    for requirement in requirements:
        named = _NAME.match(requirement)
        if named is None or _own_extras(requirement, str(project["name"])) is not None:
            continue
        name = canonical(named["name"])
        if name in packages:
            wanted.add(name)
        elif ";" not in requirement:  # one with a marker may be for another system
            raise LookupError(f"{requirement} is not in the lock: run make lock")
    grown = True
    while grown:
        more = {name for name, entry in packages.items() if entry.via & wanted} - wanted
        wanted |= more
        grown = bool(more)
    return [entry.text for name, entry in packages.items() if name in wanted]


def _table(parent: dict[str, object] | object, key: str) -> dict[str, list[str]]:
    assert isinstance(parent, dict)
    value = parent[key]
    assert isinstance(value, dict)
    return value


def _strings(value: object) -> list[str]:
    assert isinstance(value, list)
    return [str(item) for item in value]


def requirements(argument: str, source: Path, output: Path) -> str:
    """Writes the chosen platforms' requirements to `output`; returns the extras (comma
    separated) that groupmate is then installed with."""
    pyproject = tomllib.loads((source / "pyproject.toml").read_text())
    lock = (source / "requirements.lock").read_text()
    extras = chosen_extras(argument, pyproject, lock)
    header = f"# requirements.lock for PLATFORMS={argument!r}: extras {','.join(extras)}\n"
    output.write_text(header + "\n".join(needed(lock, pyproject, extras)) + "\n")
    return ",".join(extras)


# What a start imports besides what the modules below import at their top: uvicorn picks
# its loop and protocols when it starts.
STARTUP = (
    "groupmate.bot.container",
    "groupmate.bot.cli",
    "groupmate.bot.cli_check",
    "groupmate.bot.cli_serve",
    "groupmate.bot.app",
    "uvicorn.loops.auto",
    "uvicorn.protocols.http.auto",
    "uvicorn.protocols.websockets.auto",
    "uvicorn.lifespan.on",
)


def bytecode(prefix: Path) -> int:
    """Compiles groupmate's modules and every module under `prefix` that a start
    imports; returns how many. Hash-based and unchecked: the image's sources never
    change, so neither their times (which copying between stages may not keep) nor their
    contents are looked at again."""
    from groupmate.bot.adapters import PLATFORMS, SDKS

    modules = [*STARTUP]
    modules += [
        target.partition(":")[0]
        for name, target in PLATFORMS.items()
        if importlib.util.find_spec(SDKS[name]) is not None
    ]
    for module in modules:
        importlib.import_module(module)
    own = Path(importlib.import_module("groupmate").__file__ or "").resolve().parent
    sources = {Path(file) for module in list(sys.modules.values()) if (file := _source(module))}
    sources |= set(own.rglob("*.py"))
    compiled = 0
    for source in sorted(sources):
        if source.resolve().is_relative_to(prefix.resolve()):
            target = importlib.util.cache_from_source(str(source))
            mode = py_compile.PycInvalidationMode.UNCHECKED_HASH
            py_compile.compile(str(source), cfile=target, doraise=True, invalidation_mode=mode)
            compiled += 1
    return compiled


def _source(module: object) -> str | None:
    """A module's source file, if it has one (not a compiled extension, not built in)."""
    file = getattr(module, "__file__", None)
    return file if isinstance(file, str) and file.endswith(".py") else None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="image_build", description=__doc__)
    steps = parser.add_subparsers(dest="step", required=True)
    wanted = steps.add_parser("requirements", help="the lock's lines for PLATFORMS")
    wanted.add_argument("platforms", help="comma separated; all; or empty for none")
    wanted.add_argument("--source", type=Path, default=Path())
    wanted.add_argument("--output", type=Path, required=True)
    compiled = steps.add_parser("bytecode", help="bytecode for what a start imports")
    compiled.add_argument("--prefix", type=Path, default=Path(sys.prefix))
    args = parser.parse_args(argv)
    if args.step == "requirements":
        try:
            print(requirements(args.platforms, args.source, args.output))
        except LookupError as exc:  # a build's message, not a traceback
            raise SystemExit(str(exc)) from None
    else:
        print(f"compiled {bytecode(args.prefix)} modules", file=sys.stderr)


if __name__ == "__main__":
    main()
