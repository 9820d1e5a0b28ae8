"""The PTS tests are listed once (:data:`volbench.plans.pts.catalog.TESTS`, whose names
the command takes) and each has a report page (the ``PAGES`` of a module of
:mod:`volbench.report.pts`, found by :func:`volbench.report.pts.pages.all_pages`): a
test without a page, or a page of no test, fails here. Each test's own options
are declared by its record; the ``pts`` command and the stored runs are made from
those declarations. A test added to one table and not the other, or an option
declared twice, fails here, not in a user's run."""

from __future__ import annotations

import dataclasses

from click.testing import CliRunner

from volbench.cli.pts import pts
from volbench.plans.pts import catalog, declared, options
from volbench.report.pts.pages import all_pages, page_for


def test_every_test_the_command_takes_is_run_and_has_a_page() -> None:
    names = catalog.names()
    assert names == (
        "iops",
        "throughput-1024k",
        "throughput-128k",
        "latency",
        "wsat",
        "hir",
        "xsr",
        "ecw",
        "dirth",
    )
    legacy = catalog.LEGACY.name  # old runs' one throughput test: run and shown, not chosen
    assert [page.test for page in all_pages() if page.test != legacy] == list(names)  # same order
    assert page_for(legacy).test == legacy
    assert sorted(page.test for page in all_pages()) == sorted(t.name for t in catalog.TESTS)
    for name in names:
        assert catalog.by_name(name).name == name
        assert page_for(name).test == name
        assert options.parse_tests([name]) == (name,)
    assert options.parse_tests(["all"]) == names


def test_the_help_names_every_test_and_its_own_options_under_it() -> None:
    shown = CliRunner().invoke(pts, ["--help"], terminal_width=200).output
    for name in catalog.names():
        assert name.split("-")[0] in catalog.names_text()
        assert name.split("-")[0] in shown.split("Options:")[0]
    for kind in catalog.own_kinds():
        section = shown.split(f"\n{kind.TITLE} options:\n", 1)[1].split("\n\n")[0]
        for _, option in declared.declarations(kind):
            assert option.flag in section and option.source in section


def test_each_declared_option_is_one_key_with_a_default_that_is_compliant() -> None:
    keys = [d.key for kind in catalog.own_kinds() for _, d in declared.declarations(kind)]
    assert len(keys) == len(set(keys))
    assert not set(keys) & {f.name for f in dataclasses.fields(options.PtsOptions)}
    assert set(keys) == {
        "block_sizes",
        "mixes",
        "wsat_max_rounds",
        "hir_cycles",
        "xsr_cells",
        "toio_grid",
    }
    every = options.build(catalog.names(), "enterprise")
    for kind in catalog.own_kinds():
        readers = catalog.readers(kind, catalog.names())
        assert readers and all(catalog.by_name(t).own is kind for t in readers)
        assert kind().reasons(every, readers) == ()
    assert every.non_compliant_reasons == ()
