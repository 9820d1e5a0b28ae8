"""The list of stored runs (``volbench runs``), the one added last first (``latest``):
each run's record (UTC start and end as stored), with its brief where given: which
tests, the seconds it took, its headline figures
(:meth:`volbench.report.summary.Summary.brief` makes it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from volbench.model import RunRecord
from volbench.report.rows import Row, documents
from volbench.report.sheet import Column, Sheet, fmt_duration, fmt_labels


@dataclass(frozen=True)
class RunBrief:
    """What a list of runs shows of a run beyond its record
    (:meth:`volbench.report.summary.Summary.brief`)."""

    tests: tuple[str, ...]
    duration_s: float | None
    figures: tuple[str, ...]
    """Headline figures, the first one shown in the table."""
    verdict: str | None = None
    """Against the vendor's promise, when the run's labels name a product."""


def tests_text(tests: Sequence[str]) -> str:
    """Which tests, in at most about 40 characters: ``iops, latency`` or
    ``randwrite-4k-iops, randread-4k-iops +4 more``."""
    shown: list[str] = []
    for test in tests:
        if shown and len(", ".join([*shown, test])) > TESTS_TEXT_CHARS:
            break
        shown.append(test)
    more = len(tests) - len(shown)
    return ", ".join(shown) + (f" +{more} more" if more else "")


TESTS_TEXT_CHARS = 40


@dataclass(frozen=True, eq=False)
class RunListRow(Row):
    """A stored run in the list of runs: its record's id, plan, status and UTC times,
    with its brief (seconds taken, tests, headline figures, verdict) where given."""

    id: int
    plan: str
    status: str
    started_at: str
    ended_at: str | None
    duration_s: float | None
    tests: list[str] | None
    headline: list[str] | None
    verdict: str | None
    target: str
    labels: dict[str, str]


RUN_LIST_COLUMNS = (
    Column("id", "Run", numeric=True),
    Column("plan", "Plan"),
    Column("status", "Status"),
    Column("started_at", "Started"),
    Column("duration_s", "Took", fmt_duration, numeric=True),
    Column("tests", "Tests", tests_text),
    Column("headline", "Headline", lambda v: v[0] if v else "-"),
    Column("target", "Target"),
    Column("labels", "Labels", fmt_labels),
)


def runs_sheet(runs: Sequence[RunRecord], briefs: Mapping[int, RunBrief] | None = None) -> Sheet:
    """The list of stored runs in the order given (the store's: the one added last
    first): with each run's brief (which tests, how
    long, its headline figures) where given."""
    briefs = briefs or {}
    rows = tuple(
        RunListRow(
            id=r.id,
            plan=r.plan,
            status=r.status.value,
            started_at=r.started_at,
            ended_at=r.ended_at,
            duration_s=brief.duration_s if brief else None,
            tests=list(brief.tests) if brief else None,
            headline=list(brief.figures) if brief else None,
            verdict=brief.verdict if brief else None,
            target=r.target.path,
            labels=dict(r.labels),
        )
        for r in runs
        for brief in [briefs.get(r.id)]
    )
    columns = (
        RUN_LIST_COLUMNS
        if briefs
        else tuple(c for c in RUN_LIST_COLUMNS if c.key not in ("duration_s", "tests", "headline"))
    )
    return Sheet(
        title="volbench runs",
        columns=columns,
        rows=rows,
        document={"schema": "volbench.runs/1", "runs": documents(rows)},
    )
