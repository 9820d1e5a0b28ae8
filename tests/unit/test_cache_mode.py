"""Cache modes: buffered twins of direct workloads and the >2x warning."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from volbench.errors import UsageError
from volbench.model import RW, Workload, split_cache_mode
from volbench.plans.cache_mode import with_cache_mode
from volbench.plans.runs.execution import PlanSpec
from volbench.report.run_sheets import cache_notes

PLAN = PlanSpec("p", ((Workload("a", RW.RANDREAD), Workload("b", RW.WRITE)),))


def test_modes_rewrite_the_rounds() -> None:
    assert with_cache_mode(PLAN, "direct") is PLAN
    buffered = with_cache_mode(PLAN, "buffered")
    assert [(w.name, w.direct) for w in buffered.rounds[0]] == [
        ("buffered.a", False),
        ("buffered.b", False),
    ]
    both = with_cache_mode(PLAN, "both")
    assert [(w.name, w.direct) for w in both.rounds[0]] == [
        ("a", True),
        ("b", True),
        ("buffered.a", False),
        ("buffered.b", False),
    ]
    assert both.options["cache"] == "both"
    with pytest.raises(UsageError, match="unknown cache mode"):
        with_cache_mode(PLAN, "cached")
    assert split_cache_mode("buffered.qd1-jobs1") == ("buffered", "qd1-jobs1")
    assert split_cache_mode("qd1-jobs1") == ("direct", "qd1-jobs1")


def test_warning_only_beyond_twice_the_direct_figure() -> None:
    figures = [
        ("a", 10_000.0),
        ("buffered.a", 90_000.0),
        ("b", 10_000.0),
        ("buffered.b", 19_000.0),
        ("c", 10_000.0),
        ("buffered.c", 4_000.0),
    ]
    rows = [SimpleNamespace(result=SimpleNamespace(test=t, iops=i)) for t, i in figures]
    notes = cache_notes(rows)  # type: ignore[arg-type]
    assert len(notes) == 2
    assert notes[0].startswith("warning: a buffered 90,000 IOPS vs direct 10,000 IOPS (9.0x)")
    assert "(0.4x)" in notes[1] and notes[1].startswith("warning: c buffered")


def test_adaptive_plans_run_direct_only() -> None:
    adaptive = PlanSpec("p", (), next_round=lambda tests: None)
    assert with_cache_mode(adaptive, "direct") is adaptive
    with pytest.raises(UsageError, match="--find-max"):
        with_cache_mode(adaptive, "both")
