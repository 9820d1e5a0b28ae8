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
def chromium() -> Iterator[Any]:
    """Headless Chromium (one per test module: starting it takes most of a second)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            yield browser
        finally:
            browser.close()


VIEWPORT = {"width": 1200, "height": 900}
"""The window a page is opened in: its first screen is what shows without scrolling."""


def hover_shows(page: Any, chart: Any, target: Any, shown: str, tries: int = 4) -> None:
    """Hover the visible part of ``target`` (a bar in ``chart``) until the element
    ``shown`` (a selector) is visible.

    On a log axis plotly draws a bar from far below the plot and clips it, so the
    centre of the bar's own box can lie outside the plot (where no hover happens):
    the mouse goes to the centre of the bar's box cut to the plot area. On a busy
    machine plotly may draw its hover label late, so each try waits 7.5 s, then the
    mouse leaves and comes back."""
    from playwright.sync_api import TimeoutError as NotShown

    plot = chart.locator(".nsewdrag").first
    plot.scroll_into_view_if_needed()
    area, bar = plot.bounding_box(), target.bounding_box()
    assert area is not None and bar is not None, "the chart or its bar is not drawn"
    left, right = max(area["x"], bar["x"]), min(area["x"] + area["width"], bar["x"] + bar["width"])
    top = max(area["y"], bar["y"])
    bottom = min(area["y"] + area["height"], bar["y"] + bar["height"])
    assert left < right and top < bottom, f"the bar {bar} is outside the plot {area}"
    for attempt in range(tries):
        page.mouse.move(0, 0)
        page.mouse.move((left + right) / 2, (top + bottom) / 2, steps=2)
        try:
            page.wait_for_selector(shown, timeout=7_500)
            return
        except NotShown:
            if attempt + 1 == tries:
                raise


@contextlib.contextmanager
def opened_in(browser: Any, address: str) -> Iterator[OpenPage]:
    """``address`` (a file or http URL) opened in ``browser`` once every chart has
    rendered (the page sets ``body[data-rendered=true]``)."""
    page = browser.new_page(viewport=VIEWPORT)
    opened = OpenPage(page)
    page.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: opened.errors.append(str(e)))
    page.on("request", lambda r: opened.requests.append(r.url))
    try:
        page.goto(address)
        page.wait_for_selector("body[data-rendered=true]", timeout=30_000)
        yield opened
    finally:
        page.close()


@contextlib.contextmanager
def rendered(page_file: Path) -> Iterator[OpenPage]:
    """``page_file`` opened in headless Chromium once every chart has rendered."""
    with chromium() as browser, opened_in(browser, page_file.as_uri()) as opened:
        yield opened


def first_screen(opened: OpenPage, shot: Path) -> tuple[dict[str, float], dict[str, float]]:
    """The first screen of a report (the window before any scrolling) saved as ``shot``
    (PNG), and where on the page its summary table and its first chart are."""
    page = opened.page
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(shot))
    summary = page.locator("table.summary").first.bounding_box()
    chart = page.locator("div.chart").first.bounding_box()
    assert summary is not None and chart is not None
    return summary, chart


def assert_summary_first(opened: OpenPage, shot: Path) -> None:
    """The report's summary table is whole on its first screen, above its first chart
    (and the screenshot of that screen is a real picture, not a blank page)."""
    summary, chart = first_screen(opened, shot)
    assert summary["y"] + summary["height"] <= VIEWPORT["height"], (summary, shot)
    assert summary["y"] + summary["height"] <= chart["y"], (summary, chart, shot)
    assert shot.stat().st_size > 20_000, shot  # text and tables, not a blank screen
