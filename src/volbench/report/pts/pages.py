"""The report page of every PTS test. A page lives in a module of this package that
lists it as ``PAGES`` (a tuple of :class:`~volbench.report.pts.page.TestPage`); the
pages are found there when first asked for, in the order the tests run
(:data:`volbench.plans.pts.catalog.TESTS`), so a new test's page is its module and
nothing else."""

from __future__ import annotations

import functools
import importlib
import pkgutil

import volbench.report.pts as package
from volbench.plans.pts import catalog
from volbench.report.pts.page import TestPage


@functools.cache
def _found() -> tuple[TestPage, ...]:
    """Every ``PAGES`` of the package's modules (imported here: each imports this one)."""
    found: list[TestPage] = []
    for module in pkgutil.iter_modules(package.__path__):
        listed: tuple[TestPage, ...] = getattr(
            importlib.import_module(f"{package.__name__}.{module.name}"), "PAGES", ()
        )
        found += listed
    return tuple(found)


def all_pages() -> tuple[TestPage, ...]:
    """Every page, in the order :data:`~volbench.plans.pts.catalog.TESTS` runs the
    tests (a page of no test last)."""
    order = {test.name: n for n, test in enumerate(catalog.TESTS)}
    return tuple(sorted(_found(), key=lambda page: order.get(page.test, len(order))))


def page_for(test: str) -> TestPage:
    """The page of the test named ``test`` (KeyError: a test with no page)."""
    found = next((page for page in all_pages() if page.test == test), None)
    if found is None:
        raise KeyError(test)
    return found
