"""``volbench publish`` end to end: recorded fio outputs imported with labels, the site
written, then opened in headless Chromium from the folder and from a static web server
on loopback: filters change the visible rows, sorting orders them, every link resolves,
every chart renders, and no page asks any other address for anything."""

from __future__ import annotations

import functools
import http.server
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlparse
from urllib.request import urlopen

import pytest
from browser import chromium, needs_chromium, opened_in
from cli_harness import Volbench

FIXTURES = Path(__file__).parents[1] / "fixtures" / "fio"
IMPORTS = (
    ("quick/round-000.json", ("vendor=alpha", "size_gib=50", "product=aws-gp3")),
    ("stonewall_jsonplus.json", ("vendor=beta", "size_gib=100")),
    ("randrw_lat_percentiles_jsonplus.json", ("vendor=alpha",)),
)
"""Runs 1-3: a quick round checked against a product, a stonewall output, and a run
without a size label."""
PAGES = (
    "index.html",
    "runs/run-1.html",
    "runs/run-2.html",
    "runs/run-3.html",
    "compare/vendor--import.html",
    "compare/vendor_size_gib--import.html",
)
"""Every page the site should have."""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Volbench, Path]]:
    volbench = Volbench(tmp_path_factory.mktemp("publish"))
    for name, labels in IMPORTS:
        args = [a for label in labels for a in ("--label", label)]
        proc = volbench("import", str(FIXTURES / name), *args)
        assert proc.returncode == 0, proc.stderr
    folder = volbench.home / "site"
    proc = volbench(
        "publish", "1", "2", "3", "-o", str(folder), "--by", "vendor", "--by", "vendor,size_gib"
    )
    assert proc.returncode == 0, proc.stderr
    assert "published 3 run(s) and 2 comparison page(s)" in proc.stderr
    assert f"open {folder / 'index.html'}" in proc.stderr
    yield volbench, folder


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as found:
        yield found


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def served(site: tuple[Volbench, Path]) -> Iterator[str]:
    """The site's folder served by a static web server on loopback (the test's own
    thread: any server that serves files will do)."""
    handler = functools.partial(_Quiet, directory=str(site[1]))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _visible_runs(page: Any) -> list[str]:
    return [
        row.locator("td").first.inner_text()
        for row in page.locator("#runs tbody tr").all()
        if row.is_visible()
    ]


@needs_chromium
def test_filters_and_sorting_change_the_visible_rows(
    site: tuple[Volbench, Path], browser: Any
) -> None:
    _, folder = site
    with opened_in(browser, (folder / "index.html").as_uri()) as opened:
        page = opened.page
        assert _visible_runs(page) == ["1", "2", "3"]
        assert page.locator("#shown").inner_text() == "3 of 3 runs shown"
        page.select_option("select[data-key=vendor]", "alpha")
        assert _visible_runs(page) == ["1", "3"]
        page.select_option("select[data-key=size_gib]", "50")
        assert _visible_runs(page) == ["1"]
        assert page.locator("#shown").inner_text() == "1 of 3 runs shown"
        page.select_option("select[data-key=vendor]", "")
        page.select_option("select[data-key=size_gib]", "100")
        assert _visible_runs(page) == ["2"]
        page.select_option("select[data-key=size_gib]", "")
        # sort by size as numbers (50 before 100; a run without the label last), then back
        heads = page.locator("#runs thead th")
        names = [heads.nth(i).inner_text().strip() for i in range(heads.count())]
        heads.nth(names.index("size_gib")).click()
        assert _visible_runs(page) == ["1", "2", "3"]
        heads.nth(names.index("size_gib")).click()
        assert _visible_runs(page) == ["3", "2", "1"]
        heads.nth(0).click()
        assert _visible_runs(page) == ["1", "2", "3"]
        # each row: its headline figures and, for the run that names a product, its verdict
        first = page.locator("#runs tbody tr").first.inner_text()
        assert "IOPS (randread-4k-iops)" in first and "vs AWS EBS" in first
    assert opened.errors == []
    assert opened.network_requests == []


HREF = re.compile(r'href="([^"#]+)"')


def test_every_link_of_every_page_resolves(site: tuple[Volbench, Path]) -> None:
    _, folder = site
    found = sorted(str(p.relative_to(folder)) for p in folder.glob("**/*.html"))
    assert found == sorted(PAGES)
    for name in PAGES:
        page = folder / name
        for href in HREF.findall(page.read_text()):
            if href.startswith("data:"):
                continue
            assert not urlparse(href).scheme, (name, href)  # relative: the folder moves whole
            assert (page.parent / href).resolve().is_file(), (name, href)
    index = HREF.findall((folder / "index.html").read_text())
    assert set(PAGES[1:]) <= set(index)


@needs_chromium
@pytest.mark.parametrize("name", PAGES[1:])
def test_every_chart_renders_from_the_folder(
    site: tuple[Volbench, Path], browser: Any, name: str
) -> None:
    _, folder = site
    with opened_in(browser, (folder / name).as_uri()) as opened:
        charts = opened.page.locator("div.chart").all()
        assert charts, name
        for chart in charts:
            assert chart.locator(".main-svg").count() >= 1, (name, chart.get_attribute("id"))
        if name.startswith("runs/"):  # a report answers first: its summary above its charts
            top = opened.page.locator("table.summary").first.bounding_box()
            assert top is not None and top["y"] < (charts[0].bounding_box() or {"y": 0})["y"]
    assert opened.errors == []
    assert opened.network_requests == []


@needs_chromium
def test_the_site_works_from_a_static_web_server(
    site: tuple[Volbench, Path], browser: Any, served: str
) -> None:
    _, folder = site
    for name in PAGES:
        hrefs = [h for h in HREF.findall((folder / name).read_text()) if not h.startswith("data:")]
        for address in [urljoin(served, name), *(urljoin(urljoin(served, name), h) for h in hrefs)]:
            with urlopen(address) as response:  # the server on loopback
                assert response.status == 200, address
    for name in ("index.html", "compare/vendor--import.html"):
        with opened_in(browser, urljoin(served, name)) as opened:
            for chart in opened.page.locator("div.chart").all():
                assert chart.locator(".main-svg").count() >= 1, name
        assert opened.errors == [], (name, opened.errors)
        assert _outside(opened, served) == [], name


def _outside(opened: Any, base: str) -> list[str]:
    """Requests to anything but the site itself."""
    return [u for u in opened.requests if not u.startswith((base, "data:"))]


def test_comparison_pages_group_by_label_with_keys_and_leave_out_the_unlabelled(
    site: tuple[Volbench, Path],
) -> None:
    _, folder = site
    index = (folder / "index.html").read_text()
    assert "import runs by vendor: vendor=alpha, vendor=beta" in index
    by_size = (folder / "compare" / "vendor_size_gib--import.html").read_text()
    for name in ("vendor=alpha size_gib=50", "vendor=beta size_gib=100"):
        assert name in by_size
    assert "left out (no vendor/size_gib label): run(s) 3" in by_size
    # the pages share one plotly.js beside them; none inlines it or names an address
    assert (folder / "assets" / "plotly.min.js").stat().st_size > 1_000_000
    for page in folder.glob("**/*.html"):
        text = page.read_text()
        assert not re.search(r"https?://", text), page
        assert len(text) < 500_000, page


def test_each_run_has_its_bundle_to_download(site: tuple[Volbench, Path], tmp_path: Path) -> None:
    """The bundle the index links for a run is ``volbench export``'s: imported into
    another store, it is the same run."""
    volbench, folder = site
    index = (folder / "index.html").read_text()
    links = [h for h in HREF.findall(index) if h.startswith("bundles/")]
    assert links == [f"bundles/run-{n}.vbundle" for n in (1, 2, 3)]
    other = Volbench(tmp_path / "other")
    proc = other("import", str(folder / links[1]))
    assert proc.returncode == 0, proc.stderr
    original, received = volbench.stored("2"), other.stored("1")
    assert received["uuid"] == original["uuid"]
    assert received["results"] == [{**r, "run_id": 1} for r in original["results"]]
    assert received["labels"] == {"vendor": "beta", "size_gib": "100"}


def test_publish_refuses_what_it_cannot_do(site: tuple[Volbench, Path], tmp_path: Path) -> None:
    volbench, _ = site
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "index.html").write_text("<html>someone's page</html>")
    for args, message in (
        (("publish", "-o", str(tmp_path / "a")), "choose the runs to publish"),
        (("publish", "1", "-o", str(foreign)), "was not written by volbench publish"),
        (("publish", "--label", "vendor=none", "-o", str(tmp_path / "b")), "no finished run"),
        (("publish", "1", "--by", ",", "-o", str(tmp_path / "c")), "--by needs label keys"),
    ):
        proc = volbench(*args)
        assert proc.returncode == 2, proc.stderr
        assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    # --label chooses the runs: the vendor's two
    proc = volbench("publish", "--label", "vendor=alpha", "-o", str(tmp_path / "alpha"))
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "alpha" / "runs").iterdir()) == [
        "run-1.html",
        "run-3.html",
    ]
