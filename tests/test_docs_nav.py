"""The site's nav and its pages agree: every page under docs/ is in mkdocs.yml's nav
(a page missing from it is built but found by no one) and every nav entry is a page
(`make docs-build` fails on one that is not, but only where MkDocs is installed); the
README's links into the docs point at pages that exist; the API reference names every
public name."""

from __future__ import annotations

import re
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import yaml

from tests.docs_pages import DOCS, ROOT

HOOK = DOCS / "hooks" / "api_reference.py"
API_FILE = SimpleNamespace(src_uri="reference/api.md")


def entries(nav: Any) -> Iterator[str]:
    """The page paths in a nav: a list of entries, each a path, `Title: path`, or
    `Title: [entries]`."""
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, list):
        for item in nav:
            yield from entries(item)
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from entries(value)


def nav_pages() -> list[str]:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    return [page for page in entries(config["nav"]) if not page.startswith(("http:", "https:"))]


def test_every_page_is_in_the_nav_once_and_every_entry_is_a_page() -> None:
    listed = nav_pages()
    on_disk = sorted(path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md"))
    assert sorted(set(listed)) == sorted(listed), "a page is in the nav twice"
    assert [page for page in on_disk if page not in listed] == [], "not in mkdocs.yml's nav"
    assert [page for page in listed if page not in on_disk] == [], "in the nav, not in docs/"


def test_the_readmes_links_into_the_docs_exist() -> None:
    readme = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\((docs/[^)#\s]+)", readme)
    assert len(links) > 20
    assert [link for link in links if not (ROOT / link).is_file()] == []


def test_the_api_reference_documents_every_public_name() -> None:
    """`groupmate`'s names are imported lazily, which the docs' renderer cannot follow:
    the build's hook (docs/hooks/api_reference.py) names each where it is defined."""
    import importlib
    import importlib.util

    import groupmate

    spec = importlib.util.spec_from_file_location("api_reference", HOOK)
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = hook.on_page_markdown(
        (DOCS / "reference" / "api.md").read_text(), SimpleNamespace(file=API_FILE)
    )
    targets = re.findall(r"^::: (\S+)$", page, re.M)
    documented = {}
    for target in targets:
        module, _, name = target.rpartition(".")
        if module.startswith("groupmate."):
            documented[name] = getattr(importlib.import_module(module), name, None)
    assert sorted(set(groupmate.__all__) - set(documented)) == []
    for name in groupmate.__all__:
        assert documented[name] is getattr(groupmate, name), f"{name}: not the public object"
    assert "groupmate.testing" in targets
