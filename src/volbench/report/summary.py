"""What a report says first about a run (:class:`Summary`): its headline figures as a
table a person reads in ten seconds, the verdict against the vendor's promise when its
labels name a product and a size (``volbench check``'s, with the built-in catalogue and
the user's),
the limit verdict (why a figure is what it is: :func:`limit_lines`), and the notes
that explain the figures (knee, throttle, stalls, non-compliance).

The same summary gives ``volbench runs`` its columns (tests, duration, headline) and a
published site its index. Figures come from the stored result rows: the last round of
each test, its directions as stored; percentiles shown at most at the test's maximum.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from volbench.analysis.limit_evidence import KnownCap, Limit
from volbench.analysis.promise import NOT_JUDGED
from volbench.errors import VolbenchError
from volbench.model import RunRecord
from volbench.plans.pts.options import NAME as PTS
from volbench.plans.pts.options import PtsSetup
from volbench.report.fleet_sheets import aggregate_run
from volbench.report.limit_sheets import LimitRow, limit_rows, limits
from volbench.report.plan_view import Headline, PlanView
from volbench.report.rows import documents, rows_of
from volbench.report.run_list import RunBrief, tests_text
from volbench.report.run_sheets import ResultRow, result_records, shown_percentile, with_errors
from volbench.report.sheet import (
    Column,
    Sheet,
    fmt_count,
    fmt_duration,
    fmt_labels,
    fmt_latency,
    fmt_rate,
)
from volbench.report.validity_sheets import Verdicts, given, with_marks

if TYPE_CHECKING:
    from volbench.specs.catalogue import Catalogue

SCHEMA = "volbench.summary/1"

VERDICTS = ("meets", "above", "below")
"""The verdicts the promise line counts (``error`` too, where a test has one)."""


@dataclass(frozen=True)
class Summary:
    """A run's summary: what the top of its report, its row in ``volbench runs`` and
    in a published index show."""

    run: RunRecord
    table: Sheet
    """The headline figures, a row per test (a plan's own: PTS, sweep)."""
    figures: tuple[str, ...]
    """The few figures a list of runs shows: ``41,191 IOPS (randread-4k-iops)``."""
    promise: Sheet | None
    """Measured vs promised (``volbench check``), when the labels name a product."""
    verdict: str | None
    """One line on the promise: how many figures meet, are above or below it."""
    limits: tuple[str, ...]
    """Why a figure is what it is (:func:`limit_lines`)."""
    notes: tuple[str, ...]

    @property
    def tests(self) -> tuple[str, ...]:
        return run_tests(self.run)

    @property
    def duration_s(self) -> float | None:
        return duration_s(self.run)

    def brief(self) -> RunBrief:
        """What ``volbench runs`` shows of the run beside its record."""
        return RunBrief(self.tests, self.duration_s, self.figures, self.verdict)

    def document(self) -> dict[str, object]:
        """The summary in JSON (schema ``volbench.summary/1``)."""
        return {
            "schema": SCHEMA,
            "run": self.run.id,
            "tests": list(self.tests),
            "duration_s": self.duration_s,
            "figures": list(self.figures),
            "rows": list(self.table.rows),
            "verdict": self.verdict,
            "promise": dict(self.promise.document) if self.promise else None,
            "limits": list(self.limits),
            "notes": list(self.notes),
        }


def run_tests(run: RunRecord) -> tuple[str, ...]:
    """The tests a run measured, in order: a PTS run's tests, else its tests' names."""
    if run.plan == PTS:
        return run.setup(PtsSetup).options.tests
    return tuple(dict.fromkeys(r.test for r in run.aggregate))


def duration_s(run: RunRecord) -> float | None:
    """Seconds from the run's start to its end (None: still running, or unknown)."""
    try:
        start = dt.datetime.fromisoformat(run.started_at)
        end = dt.datetime.fromisoformat(run.ended_at) if run.ended_at else None
    except (TypeError, ValueError):
        return None
    return (end - start).total_seconds() if end is not None else None


def latest_rows(run: RunRecord) -> list[ResultRow]:
    """The result rows of each test's last round (a run's own, not a place's share)."""
    latest: dict[tuple[str, str], ResultRow] = {}
    for row in result_records(aggregate_run(run)):
        key = (row.result.test, row.result.direction)
        if key not in latest or row.result.round >= latest[key].result.round:
            latest[key] = row
    return list(latest.values())


GENERIC_COLUMNS = (
    Column("test", "Test"),
    Column("direction", "Dir"),
    Column("pattern", "Workload"),
    Column("iops", "IOPS", fmt_count, numeric=True),
    Column("bw_mb_per_s", "MB/s", fmt_rate, numeric=True),
    Column("lat_mean_ns", "Mean latency", fmt_latency, numeric=True),
    Column(
        "lat_p99_ns",
        "p99 latency",
        fmt_latency,
        numeric=True,
        shown=lambda r: shown_percentile(r, "lat_p99_ns"),
    ),
)


def generic_headline(run: RunRecord) -> Headline:
    """A row per test and direction (IOPS, MB/s, mean and p99 latency; fio's error
    beside a test's rows, flagged, where its jobs ended with one); the figures: the
    highest IOPS, the highest MB/s and the lowest latency at QD 1, each with its
    test."""
    rows = latest_rows(run)
    plain = documents(rows)  # the summary's JSON lists the headline table's rows
    columns, notes, errored = with_errors(GENERIC_COLUMNS, rows)
    table = Sheet(
        f"Run {run.id} at a glance",
        columns,
        tuple(plain),
        {"rows": plain},
        tuple(notes),
        errored,
    )
    return Headline(table, headline_figures(rows))


def headline_figures(rows: Sequence[ResultRow]) -> tuple[str, ...]:
    """The highest IOPS and MB/s of a test (its directions summed) and the lowest mean
    latency of a test at one outstanding I/O."""
    iops: dict[str, float] = {}
    bw: dict[str, float] = {}
    for row in rows:
        test = row.result.test
        iops[test] = iops.get(test, 0.0) + float(row.result.iops)
        bw[test] = bw.get(test, 0.0) + float(row.result.bw_bytes_per_s)
    figures = []
    if iops and max(iops.values()) > 0:
        test = max(iops, key=lambda t: iops[t])
        figures.append(f"{fmt_count(iops[test])} IOPS ({test})")
    if bw and max(bw.values()) > 0:
        test = max(bw, key=lambda t: bw[t])
        figures.append(f"{fmt_rate(bw[test] / 1e6)} MB/s ({test})")
    qd1 = [
        (r.result.lat_mean_ns, r.result.test)
        for r in rows
        if r.outstanding_configured == 1 and r.result.lat_mean_ns is not None
    ]
    if qd1:
        lat, test = min(qd1, key=lambda pair: pair[0])
        figures.append(f"{fmt_latency(lat)} at QD 1 ({test})")
    return tuple(figures)


LIMIT_TESTS_SHOWN = 4
"""Tests named per limit in the summary's line (the limits sheet has them all)."""


def limit_lines(run: RunRecord, caps: Sequence[KnownCap] = ()) -> tuple[str, ...]:
    """Why the figures are what they are: one line per limit found (host CPU, queue,
    rate limiter, device, cache, stall; :mod:`volbench.report.limit_sheets`), naming
    its tests and the first test's evidence; shown right under the promise verdict.
    None for a record read without its rounds' outputs (a list of runs). ``caps``: the
    volume's known caps (:mod:`volbench.volume_limits`)."""
    if not run.raw_outputs:
        return ()
    groups: dict[str, list[LimitRow]] = {}
    for row in limit_rows(limits(run, caps)):
        groups.setdefault(row.limit, []).append(row)
    lines = []
    for limit, rows in groups.items():
        names = [r.test for r in rows[:LIMIT_TESTS_SHOWN]]
        more = f" and {len(rows) - len(names)} more" if len(rows) > len(names) else ""
        why = f": {rows[0].why}" if rows[0].why else ""
        tests = ", ".join(names) + more
        if limit == Limit.NOT_DETERMINED:
            lines.append(f"limit not determined for {tests}{why}")
        else:
            lines.append(f"limited by {limit}: {tests}{why}")
    return tuple(lines)


def limit_phrase(limit: str) -> str:
    """How a limit verdict reads in a sentence: ``limited by host CPU``, or ``limit not
    determined`` (no cause stood out: :class:`~volbench.analysis.limit_evidence.Limit`)."""
    return "limit not determined" if limit == Limit.NOT_DETERMINED else f"limited by {limit}"


def run_notes(run: RunRecord) -> tuple[str, ...]:
    """Notes every run may have: non-compliance, stalls, an error or interruption."""
    notes = []
    if run.non_compliant:
        reasons = run.settings.non_compliant_reasons
        notes.append(
            "NON-COMPLIANT with its standard: " + ("; ".join(reasons) or "shortened or reduced")
        )
    if run.stalls:
        longest = max(run.stalls, key=lambda s: s.seconds)
        notes.append(
            f"{len(run.stalls)} stall(s) at 0 IOPS with I/O outstanding; the longest "
            f"{longest.seconds:,.0f} s in {longest.test}"
        )
    if run.status.value != "completed":
        notes.append(f"run {run.status.value}" + (f": {run.error}" if run.error else ""))
    elif run.error:
        notes.append(f"note: {run.error}")
    return tuple(notes)


def _catalogue() -> Catalogue:
    """The catalogue with the ``--catalogue`` files of the command running
    (:func:`volbench.specs.catalogue.using`), read once per set of files."""
    from volbench.specs import catalogue

    return _loaded(catalogue.given_files())


@functools.cache
def _loaded(files: tuple[str, ...]) -> Catalogue:
    from volbench.specs import catalogue

    return catalogue.load(files)


def promise(run: RunRecord, validity: Verdicts | None = None) -> tuple[Sheet | None, str | None]:
    """``volbench check`` of the run against the product and size its labels name
    (``product`` and ``size_gib`` or ``size``), and one line saying how it went;
    (None, None) when the labels name none. ``validity``: the command's
    (:class:`Verdicts`)."""
    product = run.labels.get("product")
    if product is None or not (run.labels.get("size_gib") or run.labels.get("size")):
        return None, None
    from volbench.report.check_sheets import CheckRequest, VerdictRow, check_sheet

    try:
        sheet = check_sheet(run, _catalogue(), CheckRequest(None, None), validity=validity)
    except VolbenchError as exc:
        return None, f"not checked against {product}: {exc}"
    checked = rows_of(sheet.rows, VerdictRow)
    verdicts = [r.verdict for r in checked]
    shown = (*VERDICTS, *(v for v in ("error", NOT_JUDGED) if v in verdicts))
    counts = ", ".join(f"{verdicts.count(v)} {v}" for v in shown)
    subject = sheet.title.split(" vs ", 1)[1]
    line = f"vs {subject}: {len(verdicts)} figure(s) checked: {counts}"
    below = [r for r in checked if r.verdict == "below"]
    if below:
        line += "; below: " + "; ".join(
            f"{r.test} {r.metric} {fmt_count(r.measured)} of {fmt_count(r.expected)} {r.unit}"
            for r in below
        )
    failed = list(dict.fromkeys(r.test for r in checked if r.verdict == "error"))
    if failed:
        line += "; fio error in: " + ", ".join(failed)
    unjudged = list(dict.fromkeys(r.test for r in checked if r.verdict == NOT_JUDGED))
    if unjudged:
        line += "; not the volume's figure: " + ", ".join(unjudged)
    return sheet, line


def with_promise(table: Sheet, check: Sheet) -> Sheet:
    """``table`` with a column saying, for each of its tests the check compared, how
    the measured figure stands against the promised one (``3,000 IOPS: above (7.69x)``,
    ``latency read 10 ms: meets``)."""
    from volbench.report.check_sheets import VerdictRow

    found: dict[str, list[str]] = {}
    for row in rows_of(check.rows, VerdictRow):
        if row.unit in ("IOPS", "MB/s"):
            text = f"{fmt_count(row.expected)} {row.unit}: {row.verdict} ({row.ratio:.2f}x)"
        else:
            text = f"{row.metric} {row.expected:g} {row.unit}: {row.verdict}"
        found.setdefault(row.test, []).append(text)
    if not any(r.get("test") in found for r in table.rows):
        return table
    promised = ["; ".join(found.get(str(r.get("test")), [])) for r in table.rows]
    rows = tuple({**r, "promise": text} for r, text in zip(table.rows, promised, strict=True))
    flagged = frozenset(
        i for i, text in enumerate(promised) if ": below" in text or ": error" in text
    )
    columns = (*table.columns, Column("promise", "Promised: verdict"))
    return Sheet(
        table.title,
        columns,
        rows,
        {**table.document, "rows": list(rows)},
        table.notes,
        table.flagged_rows | flagged,
        table.row_tests,
    )


def summarise(
    run: RunRecord,
    view: PlanView,
    *,
    check: bool = True,
    caps: Sequence[KnownCap] = (),
    verdicts: Verdicts | None = None,
) -> Summary:
    """The summary of ``run`` as its plan's view says (``view.headline``, else a row per
    test; of a run on places, of their aggregate: each place's share is its own table);
    ``check``: against the vendor's promise too; ``caps``: the volume's known caps, for
    the limit verdicts; ``verdicts``: the command's (:class:`Verdicts`)."""
    verdicts = given(verdicts)
    headline = (view.headline or generic_headline)(aggregate_run(run))
    sheet, verdict = promise(run, verdicts) if check else (None, None)
    # a plan's own header may say it already (PTS: its non-compliant reasons)
    said = (
        {n for n in run_notes(run) if n.startswith("NON-COMPLIANT")}
        if any("NON-COMPLIANT" in n for n in headline.notes)
        else set()
    )
    table = with_promise(headline.table, sheet) if sheet else headline.table
    if run.raw_outputs:  # a record read with its outputs (not a list of runs)
        table = with_marks(table, verdicts.of(run))
    return Summary(
        run=run,
        table=table,
        figures=headline.figures,
        promise=sheet,
        verdict=verdict,
        limits=limit_lines(run, caps),
        notes=headline.notes + tuple(n for n in run_notes(run) if n not in said),
    )


OVERVIEW_COLUMNS = (
    Column("id", "Run", numeric=True),
    Column("plan", "Plan"),
    Column("labels", "Labels", fmt_labels),
    Column("tests", "Tests", tests_text),
    Column("duration_s", "Took", fmt_duration, numeric=True),
    Column("figures", "Headline figures", lambda v: " · ".join(v)),
    Column("verdict", "Against the promise"),
)


def overview_sheet(summaries: Sequence[Summary]) -> Sheet:
    """A row per run: its plan, labels, tests, how long it took, its headline figures
    and its verdict against the promise."""
    rows = tuple(
        {
            "id": s.run.id,
            "plan": s.run.plan,
            "labels": dict(s.run.labels),
            "tests": list(s.tests),
            "duration_s": s.duration_s,
            "figures": list(s.figures),
            "verdict": s.verdict,
        }
        for s in summaries
    )
    document = {"schema": SCHEMA, "runs": [s.document() for s in summaries]}
    return Sheet("The runs at a glance", OVERVIEW_COLUMNS, rows, document)
