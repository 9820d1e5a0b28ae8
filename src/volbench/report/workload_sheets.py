"""A captured workload's characterisation: tables and charts of a ``capture`` run.

Everything here reads the profile stored with the run, checked as a typed record
(:func:`volbench.plans.profile_record.stored_profile`; written by
:func:`volbench.analysis.workload_fit.workload_record`): ``volbench workload``,
``show``, export, the HTML/PDF report and the published pages show the same values.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from volbench.analysis.workload_profile import HOT_SHARES, QD_PERCENTILE, size_label
from volbench.model import RunRecord
from volbench.plans.capture import CaptureSetup, workload_name
from volbench.plans.profile_record import StoredProfile, stored_profile
from volbench.report.chart import Chart, Series, bar_chart, line_chart
from volbench.report.document import Section
from volbench.report.plan_view import Report
from volbench.report.rows import Row, number
from volbench.report.run_charts import run_header
from volbench.report.sheet import Column, Sheet, fmt_count, fmt_latency
from volbench.units import format_bytes

SOURCE = (
    "Method: SNIA Real World Storage Workload (RWSW) Performance Test Specification for"
    " Datacenter Storage (IO Streams); events: blktrace(8)/blkparse(1) D and C, or the"
    " kernel's block_rq_issue/block_rq_complete tracepoints."
)


def _pct(value: object) -> str:
    return f"{number(value):.1f}%"


@dataclass(frozen=True, eq=False)
class ProfileLine(Row):
    """A line of the workload's summary: a figure's name and its value as shown."""

    figure: str
    value: str


@dataclass(frozen=True, eq=False)
class PatternLine(Row):
    """An access pattern's share of requests in %, captured and as the synthetic job
    issues it; ``other`` (the rest of the patterns) has no access, op or size."""

    pattern: str
    access: str | None
    op: str | None
    size_bytes: int | None
    share_pct: float
    fitted_pct: float

    optional = frozenset({"access", "op", "size_bytes"})


@dataclass(frozen=True, eq=False)
class SizeLine(Row):
    """A block size of a direction: its requests and their share of all (%)."""

    op: str
    size_bytes: int
    count: int
    size: str
    share_pct: float


@dataclass(frozen=True, eq=False)
class OptionLine(Row):
    """An option of the synthetic fio job and its value as fio reads it."""

    option: str
    value: str


def _summary_rows(run: RunRecord, p: StoredProfile) -> list[ProfileLine]:
    capture = run.setup(CaptureSetup).capture
    counts = p.counts
    seq = p.sequential_by_op
    hot = p.hot_pct
    rows = [
        ("Device", f"{capture.device} ({capture.method})"),
        ("Duration", f"{p.duration_s:,.1f} s"),
        (
            "Requests",
            f"{p.ios:,} ({counts.read:,} read, {counts.write:,} write, "
            f"{counts.trim:,} trim, {counts.flush:,} flush)",
        ),
        ("Rate", f"{fmt_count(p.iops)} IOPS on average"),
        (
            "Read / write (by count)",
            f"{p.read_pct:.1f}% / {100 - p.read_pct:.1f}%" if counts.read + counts.write else "-",
        ),
        (
            "Sequential",
            f"{p.sequential_pct:.1f}% ("
            + ", ".join(f"{op} {v:.1f}%" for op, v in seq.items())
            + ")",
        ),
        (
            "Queue depth",
            f"mean {p.qd_mean:.1f}, p{QD_PERCENTILE:.0f} {p.qd_percentile:.0f},"
            f" max {p.qd_max} (while busy, {p.busy_pct:.0f}% of the time;"
            f" longest pause {p.longest_idle_s:,.1f} s)",
        ),
        (
            "Working set",
            f"{format_bytes(p.working_set_bytes)} touched in a span of "
            f"{format_bytes(p.span_bytes)}",
        ),
        (
            "Concentration",
            ", ".join(f"{hot[str(s)]:.0f}% of I/O in the hottest {s}%" for s in HOT_SHARES)
            + f" of the touched space ({format_bytes(p.region_bytes)} regions)",
        ),
    ]
    if p.lost:
        rows.append(("Events lost", f"{p.lost:,} (the kernel's trace buffer was full)"))
    if p.before:
        rows.append(("Issued before", f"{p.before:,} completions of earlier requests"))
    return [ProfileLine(k, v) for k, v in rows]


def _pattern_rows(p: StoredProfile) -> list[PatternLine]:
    rows = []
    for pattern in p.patterns:
        s = p.share_of(pattern)
        name = pattern.label.rsplit(" ", 1)[0]
        rows.append(PatternLine(name, s.access, s.op, s.size_bytes, s.share_pct, s.fitted_pct))
    other = max(0.0, 100.0 - sum(r.share_pct for r in rows))
    if other >= 0.05:
        fitted = max(0.0, 100.0 - sum(r.fitted_pct for r in rows))
        rows.append(PatternLine("other", None, None, None, other, fitted))
    return rows


def _size_rows(p: StoredProfile) -> list[SizeLine]:
    total = sum(s.count for s in p.sizes) or 1
    return [
        SizeLine(s.op, s.size_bytes, s.count, size_label(s.size_bytes), 100.0 * s.count / total)
        for s in p.sizes
    ]


def _synthetic_rows(p: StoredProfile) -> list[OptionLine]:
    s = p.synthetic

    def split(pairs: Sequence[Sequence[int]]) -> str:
        return ":".join(f"{size}/{pct}" for size, pct in pairs) or "-"

    rows = [
        ("rw", "randrw"),
        ("rwmixread", str(s.rwmixread_pct)),
        ("bssplit", f"{split(s.read_bssplit)},{split(s.write_bssplit)}"),
        ("percentage_random", f"{s.read_random_pct},{s.write_random_pct}"),
        ("random_distribution", s.random_distribution),
        ("iodepth", str(s.iodepth)),
        ("size", str(s.span_bytes)),
    ]
    return [OptionLine(k, v) for k, v in rows]


def workload_report(run: RunRecord) -> Report:
    """The sheets of a capture run and its JSON document (the profile)."""
    p = stored_profile(run)
    name = workload_name(run)
    notes = [SOURCE]
    if run.error:
        notes.append(run.error)
    summary = Sheet(
        f"Workload {name} (run {run.id}, {run.status.value})",
        (Column("figure", "Figure"), Column("value", "Value")),
        tuple(_summary_rows(run, p)),
        {"id": run.id, "workload": name, "profile": run.setup(CaptureSetup).profile},
        tuple(notes),
    )
    patterns = Sheet(
        "Dominant access patterns (share of requests)",
        (
            Column("pattern", "Pattern"),
            Column("share_pct", "Captured", _pct, numeric=True),
            Column("fitted_pct", "Synthetic job", _pct, numeric=True),
        ),
        tuple(_pattern_rows(p)),
        {},
    )
    sizes = Sheet(
        "Block sizes",
        (
            Column("op", "Direction"),
            Column("size", "Size"),
            Column("count", "Requests", fmt_count, numeric=True),
            Column("share_pct", "Share", _pct, numeric=True),
        ),
        tuple(_size_rows(p)),
        {},
    )
    latency = Sheet(
        "Device time per request (issue to completion)",
        (
            Column("op", "Direction"),
            Column("count", "Requests", fmt_count, numeric=True),
            Column("mean_ns", "Mean", fmt_latency, numeric=True),
            Column("p50_ns", "p50", fmt_latency, numeric=True),
            Column("p99_ns", "p99", fmt_latency, numeric=True),
            Column("max_ns", "Max", fmt_latency, numeric=True),
        ),
        tuple(dataclasses.asdict(row) for row in p.latency),
        {},
    )
    synthetic = Sheet(
        f"Synthetic fio workload: matches {p.synthetic.match_pct:.1f}% of the captured mix",
        (Column("option", "fio option"), Column("value", "Value")),
        tuple(_synthetic_rows(p)),
        {},
        (
            "Match: 100 minus the total variation distance between the captured and the"
            " job's (access, direction, size) shares; `volbench run replay --synthetic"
            f" --workload {name}` runs it.",
        ),
    )
    document = {"id": run.id, "workload": name, "profile": run.setup(CaptureSetup).profile}
    return [summary, patterns, sizes, latency, synthetic], document


def workload_charts(run: RunRecord) -> list[Chart]:
    """I/O rate and queue depth over time, block sizes, concentration."""
    p = stored_profile(run)
    rid = run.id
    seconds = list(range(len(p.per_second)))
    rate = [
        Series("read", seconds, [r[0] for r in p.per_second]),
        Series("write", seconds, [r[1] for r in p.per_second]),
    ]
    if any(r[2] for r in p.per_second):
        rate.append(Series("trim/flush", seconds, [r[2] for r in p.per_second]))
    qd = [Series("queue depth", list(range(len(p.qd_per_second))), list(p.qd_per_second))]
    by_op: dict[str, dict[str, int]] = {}
    for s in p.sizes:
        by_op.setdefault(s.op, {})[size_label(s.size_bytes)] = s.count
    first: dict[str, int] = {}
    for s in p.sizes:
        first.setdefault(size_label(s.size_bytes), s.size_bytes)
    sizes = sorted(first, key=lambda label: first[label])
    bars = [Series(op, sizes, [counts.get(x, 0) for x in sizes]) for op, counts in by_op.items()]
    hot = p.hot_pct
    shares = [f"hottest {s}%" for s in HOT_SHARES]
    return [
        line_chart(
            f"run{rid}-workload-rate",
            "Requests issued per second",
            rate,
            x_title="Seconds",
            y_title="Requests",
            markers=None,
        ),
        line_chart(
            f"run{rid}-workload-qd",
            "Queue depth over time (mean per second)",
            qd,
            x_title="Seconds",
            y_title="Requests in flight",
            markers=None,
        ),
        bar_chart(
            f"run{rid}-workload-sizes",
            "Block sizes",
            bars,
            x_title="Request size",
            y_title="Requests",
        ),
        bar_chart(
            f"run{rid}-workload-hot",
            "Share of requests in the hottest touched space",
            [
                Series("captured", shares, [hot[str(s)] for s in HOT_SHARES]),
                Series("uniform", shares, [float(s) for s in HOT_SHARES]),
            ],
            y_title="% of requests",
            unit="%",
        ),
    ]


def workload_sections(run: RunRecord) -> list[Section]:
    sheets, _ = workload_report(run)
    return [
        Section(
            title=f"Workload {workload_name(run)} (run {run.id})",
            header=run_header(run),
            charts=tuple(workload_charts(run)),
            sheets=tuple(sheets),
        )
    ]
