"""The report page of every PTS test, as one table (:data:`PAGES`)."""

from __future__ import annotations

from volbench.report.pts.demand import ECW_PAGE
from volbench.report.pts.dirth import DIRTH_PAGE
from volbench.report.pts.hir import HIR_PAGE
from volbench.report.pts.iops import IOPS_PAGE
from volbench.report.pts.latency import LATENCY_PAGE
from volbench.report.pts.page import TestPage
from volbench.report.pts.throughput import THROUGHPUT_PAGES
from volbench.report.pts.wsat import WSAT_PAGE
from volbench.report.pts.xsr import XSR_PAGE

PAGES: tuple[TestPage, ...] = (
    IOPS_PAGE, *THROUGHPUT_PAGES, LATENCY_PAGE, WSAT_PAGE, HIR_PAGE, XSR_PAGE, ECW_PAGE,
    DIRTH_PAGE,
)  # fmt: skip
"""A page per test of :data:`volbench.plans.pts.catalog.TESTS`."""


def page_for(test: str) -> TestPage:
    """The page of the test named ``test`` in :data:`PAGES` (KeyError: a test with no
    page)."""
    found = next((page for page in PAGES if page.test == test), None)
    if found is None:
        raise KeyError(test)
    return found
