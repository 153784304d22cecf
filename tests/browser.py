"""Headless Chromium for the web app's tests: Debian's `chromium` package (installed with
apt when missing), driven by Playwright through `executable_path` (Playwright's own
browser download is not used). Pages open at 1280x800 (the phone tests set 390x844).
Screenshots go to tests/artifacts/ (gitignored): playground.png and dashboard.png, which
are copied by hand to docs/ (the README's pictures) after a change to the pages, and
each page at both sizes (playground-1280x800.png, dashboard-390x844.png, …)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, async_playwright

from tests.tool_venv import ROOT

CHROMIUM = Path("/usr/bin/chromium")
# Reminders start with ⏰: without an emoji font the screenshots show a box.
EMOJI_FONT = Path("/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf")
ARTIFACTS = ROOT / "tests" / "artifacts"
# As root in a container: no sandbox. No background traffic: this machine has no internet,
# and Chromium's own lookups would only fail slowly.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def ensure_chromium() -> Path:
    if not CHROMIUM.exists() or not EMOJI_FONT.exists():
        apt = shutil.which("apt-get")
        if apt is None:
            raise RuntimeError("chromium is missing and there is no apt-get to install it")
        subprocess.run([apt, "update", "-q"], check=True, capture_output=True)
        subprocess.run(
            [apt, "install", "-y", "-q", "chromium", "fonts-noto-color-emoji"],
            check=True,
            capture_output=True,
        )
    return CHROMIUM


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    async with async_playwright() as driver:
        browser = await driver.chromium.launch(executable_path=str(ensure_chromium()), args=FLAGS)
        try:
            yield browser
        finally:
            await browser.close()


@pytest.fixture
async def page() -> AsyncIterator[Page]:
    """A fresh browser page (its own context: no storage shared between tests)."""
    async with chromium() as browser:
        context = await browser.new_context(viewport={"width": 1280, "height": 800})
        yield await context.new_page()
        await context.close()
