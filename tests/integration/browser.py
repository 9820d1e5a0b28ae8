"""The generated HTML reports opened in headless Chromium (Debian's ``chromium``,
driven by Playwright with its executable path set)."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")


@dataclass
class OpenPage:
    """A rendered report page and what it did: console errors and requests."""

    page: Any
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    @property
    def network_requests(self) -> list[str]:
        """Requests to any address (the page must make none: it works offline)."""
        return [u for u in self.requests if not u.startswith(("file:", "data:", "blob:"))]


@contextlib.contextmanager
def rendered(page_file: Path) -> Iterator[OpenPage]:
    """``page_file`` opened in headless Chromium once every chart has rendered."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            opened = OpenPage(page)
            page.on(
                "console", lambda m: opened.errors.append(m.text) if m.type == "error" else None
            )
            page.on("pageerror", lambda e: opened.errors.append(str(e)))
            page.on("request", lambda r: opened.requests.append(r.url))
            page.goto(page_file.as_uri())
            page.wait_for_selector("body[data-rendered=true]", timeout=30_000)
            yield opened
        finally:
            browser.close()
