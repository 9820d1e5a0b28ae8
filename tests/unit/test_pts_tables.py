"""The PTS tests are listed in three tables that must agree: the names the command
takes (:data:`volbench.plans.pts.options.TESTS`), the test objects the driver runs
(:data:`volbench.plans.pts.catalog.TESTS`) and the report pages
(:data:`volbench.report.pts.pages.PAGES`). A test added to one and not the others
fails here, not in a user's run."""

from __future__ import annotations

from volbench.plans.pts import catalog, options
from volbench.report.pts.pages import PAGES, page_for


def test_every_test_the_command_takes_is_run_and_has_a_page() -> None:
    runnable = [t.name for t in catalog.TESTS if t.name != catalog.LEGACY.name]
    assert runnable == list(options.TESTS)  # same tests, same order (`all`)
    legacy = catalog.LEGACY.name  # old runs' one throughput test: run and shown, not chosen
    assert [page.test for page in PAGES if page.test != legacy] == list(options.TESTS)
    assert page_for(legacy).test == legacy
    for name in options.TESTS:
        assert catalog.by_name(name).name == name
        assert page_for(name).test == name


def test_the_help_names_every_test() -> None:
    for name in options.TESTS:
        assert name.split("-")[0] in options.TEST_NAMES
