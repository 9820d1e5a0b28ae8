"""PTS report: one sheet per result table, and the steady-state calculation.

Figures are averages over the steady-state measurement window (the 5 rounds
that passed, or the last 5 when steady state was NOT achieved), per PTS 2.0.2
"Reporting". Every figure is from stored rows (fio's own per-job numbers);
p99.999 and the DIRTH histograms are recomputed from the json+ bins in the
stored raw fio output (merged bucket by bucket, never averaged).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from volbench.analysis.percentiles import merge_bins, percentiles_from_bins
from volbench.analysis.steady_state import WINDOW_ROUNDS, Verdict
from volbench.fio.parser import parse
from volbench.model import RunRecord
from volbench.plans.pts import catalog, state
from volbench.plans.pts.options import THROUGHPUT_TESTS, PtsOptions, from_record
from volbench.report.sheet import Column, Sheet, fmt_count, fmt_latency, fmt_rate
from volbench.units import format_seconds, parse_size

EDITIONS = {
    "enterprise": "SNIA SSS PTS-E 1.1 / PTS 2.0.2",
    "client": "SNIA SSS PTS-C 1.1 / PTS 2.0.2",
}
"""The editions a run's profile follows (DESIGN.md "SNIA PTS facts")."""

FIGURE_UNITS = {"iops": ("IOPS", 1.0), "bw": ("MB/s", 1e6), "lat": ("µs", 1e3)}
"""Tracking-variable figure -> (unit the tables print, divisor of the stored value)."""

SCHEMA = "volbench.pts/1"
MB = 1_000_000
DIRTH_MAX_LATENCY_NS = 5e6
"""DIRTH MaxIOPS: the highest IOPS whose average response time is below 5 ms."""


def _avg(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _pct(value: Any) -> str:
    return f"{float(value):.1f}%"


class _Run:
    """A stored PTS run read back: its options, rounds and steady-state verdicts."""

    def __init__(self, run: RunRecord) -> None:
        self.run = run
        self.options = from_record(run.settings["pts"])
        self.active = int(run.settings["active_bytes"])
        self.rounds = state.stored_rounds(run.results, self.options, self.active)
        self._parsed: dict[int, Any] = {}

    def history(self, test: str, phase: str | None = None) -> list[state.StoredRound]:
        return [r for r in self.rounds if r.test == test and (phase is None or r.phase == phase)]

    def verdict(self, test: str) -> Verdict:
        return state.verdict(test, self.history(test))

    def window(self, test: str) -> list[state.StoredRound]:
        """The rounds the reported figures average over."""
        ss = self.history(test, "ss")
        chosen = self.verdict(test).window_rounds
        return [ss[i] for i in chosen] if chosen else ss[-5:]

    def bins(self, round_no: int, cell: str) -> dict[int, int]:
        """json+ latency bins of one cell of one round: merged over its jobs (clones,
        every place) and directions, from that cell's jobs only (a sweep round
        holds dozens of cells: merging them all took most of a report's time)."""
        if round_no not in self._parsed:
            self._parsed[round_no] = parse(self.run.raw_outputs[round_no]).jobs
        jobs = [j for j in self._parsed[round_no] if j.name == cell]
        return merge_bins(
            *(d.latency.bins for j in jobs for d in j.directions.values() if d.latency)
        )


def header_notes(run: RunRecord) -> tuple[str, ...]:
    """The PTS test header: purge, preconditioning, active range, TC/QD, pattern, cache.
    Preconditioning and round limits are those of the tests the run has (from its
    options, not a stored text: a WSAT run has no WIPC and no steady-state rounds)."""
    s = run.settings
    options = from_record(s["pts"])
    latency = " (latency TC1/QD1)" if "latency" in options.tests else ""
    notes = [
        f"run {run.id} · {EDITIONS.get(options.profile, 'SNIA SSS PTS')} ({options.profile})"
        f" · {run.status.value} · target {run.target.get('path')} · ioengine {s.get('ioengine')}",
        f"purge: {s.get('purge_method')} · preconditioning: {catalog.preconditioning(options)}"
        f" · active range {options.active_range_pct}% ({int(s['active_bytes']) >> 20} MiB)",
        " · ".join(
            [
                f"TC x QD {options.threads} x {options.iodepth}{latency}",
                f"data pattern {s.get('data_pattern')}",
                f"write cache {s.get('write_cache')}",
                f"cells {options.cell_seconds:g} s",
                *round_limits(options),
            ]
        ),
    ]
    reasons = s.get("non_compliant_reasons") or []
    if reasons:
        notes.append("NON-COMPLIANT with PTS: " + "; ".join(reasons))
    if run.error:
        notes.append(f"note: {run.error}")
    return tuple(notes)


def round_limits(options: PtsOptions) -> list[str]:
    """The round limits of the run's tests: steady-state rounds, WSAT samples."""
    limits = []
    if [t for t in options.tests if t not in ("wsat", "xsr")]:
        limits.append(f"max rounds {options.max_rounds}")
    if "wsat" in options.tests:
        limits.append(f"WSAT at most {options.wsat_max_rounds} samples")
    return limits


def _steady_notes(data: _Run, test: str) -> tuple[str, ...]:
    verdict = data.verdict(test)
    ss = data.history(test, "ss")
    if verdict.steady:
        rounds = verdict.window_rounds
        return (f"steady state reached: rounds {rounds[0] + 1}-{rounds[-1] + 1} of {len(ss)}",)
    if len(ss) < WINDOW_ROUNDS:
        return (_not_evaluated(len(ss)) + " (figures: average of these rounds)",)
    return (f"steady state NOT achieved after {len(ss)} rounds (figures: last window)",)


_FIGURE_NAMES = {"iops": "IOPS", "bw": "bandwidth", "lat": "mean response time"}


def variable_label(name: str) -> str:
    """A tracking variable as a person reads it: ``0-100.4k iops`` -> ``R/W 0/100,
    4 KiB, IOPS``; ``tc2-qd2 iops`` -> ``TC 2 x QD 2, IOPS``."""
    cell, _, figure = name.rpartition(" ")
    return ", ".join([cell_label(cell or name), _FIGURE_NAMES.get(figure, figure)])


def cell_label(cell: str) -> str:
    """A cell name (``CELL`` of ``TEST.PHASE.CELL``) as a person reads it:
    ``100-0.4k`` -> ``R/W 100/0, 4 KiB`` (not 100 - 0.4k), ``100-0.512`` ->
    ``R/W 100/0, 512 B``, ``tc2-qd2`` -> ``TC 2 x QD 2``, ``pass1`` -> ``pass 1``;
    others as they are."""
    mix, dot, bs = cell.partition(".")
    grid = re.fullmatch(r"tc(\d+)-qd(\d+)", cell)
    if dot and re.fullmatch(r"\d+-\d+", mix) and re.fullmatch(r"\d+[km]?", bs):
        return f"R/W {mix.replace('-', '/')}, {catalog.block_size_label(parse_size(bs))}"
    if grid:
        return f"TC {grid[1]} x QD {grid[2]}"
    if re.fullmatch(r"pass\d+", cell):
        return f"pass {cell[4:]}"
    return cell


def _block_size(value: Any) -> str:
    return catalog.block_size_label(int(value))


def _figure(value: Any) -> str:
    """A figure with thousands separators and no exponent: ``60410.3`` -> ``60,410``,
    ``27.31`` -> ``27.3``, ``0.0123`` -> ``0.0123``."""
    number = float(value)
    size = abs(number)
    if size >= 100 or number == 0:
        return f"{number:,.0f}"
    decimals = min(6, 2 - math.floor(math.log10(size)))
    return f"{number:,.{decimals}f}"


def _not_evaluated(rounds: int) -> str:
    return (
        f"steady state not evaluated: {rounds} round{'s' if rounds != 1 else ''} "
        f"(needs a {WINDOW_ROUNDS}-round window)"
    )


def iops_sheet(data: _Run) -> Sheet:
    window = data.window("iops")
    mixes = data.options.mixes
    rows = []
    for bs in data.options.block_sizes:
        row: dict[str, Any] = {"bs_bytes": bs, "block_size": _bs(bs)}
        for mix in mixes:
            key = f"{mix}-{100 - mix}.{_bs(bs)}"
            row[f"iops_{mix}"] = _avg([r.cells[key].iops for r in window if key in r.cells])
        rows.append(row)
    columns = (
        Column("bs_bytes", "Block size", _block_size),
        *(Column(f"iops_{m}", f"R/W {m}/{100 - m}", fmt_count, numeric=True) for m in mixes),
    )
    return _sheet("IOPS (average over the window)", columns, rows, _steady_notes(data, "iops"))


THROUGHPUT_METHOD = (
    "SNIA SSS PTS-E 1.1 Throughput test (as PTS 2.0.2): each block size a test of its own "
    "(purge, WIPC, rounds of SEQ 100% write and 100% read to steady state)"
)
LEGACY_THROUGHPUT = (
    "1024 KiB and 128 KiB in each round after one purge and WIPC (recorded before volbench "
    "ran each block size as a test of its own, as SNIA SSS PTS-E 1.1 does)"
)


def throughput_title(test: str) -> str:
    """``throughput-1024k`` -> ``Throughput SEQ 1024 KiB``; the legacy test: ``Throughput``."""
    if test in THROUGHPUT_TESTS:
        return f"Throughput SEQ {catalog.block_size_label(THROUGHPUT_TESTS[test])}"
    return "Throughput"


def throughput_sheet(data: _Run, test: str = "throughput-1024k") -> Sheet:
    window = data.window(test)
    rows = []
    for cell in window[0].cells if window else {}:
        values = [r.cells[cell].bw_bytes_per_s for r in window if cell in r.cells]
        bw = _avg(values) or 0.0
        mix, bs = cell.split(".")
        size = parse_size(bs)
        direction = "read" if mix == "100-0" else "write"
        rows.append(
            {
                "cell": f"SEQ {catalog.block_size_label(size)} {direction}",
                "bs_bytes": size,
                "direction": direction,
                "bw_bytes_per_s": bw,
                "bw_mb_per_s": bw / MB,
            }
        )
    columns = (Column("cell", "Access"), Column("bw_mb_per_s", "MB/s", fmt_rate, numeric=True))
    method = THROUGHPUT_METHOD if test in THROUGHPUT_TESTS else LEGACY_THROUGHPUT
    return _sheet(throughput_title(test), columns, rows, (*_steady_notes(data, test), method))


def latency_sheet(data: _Run) -> Sheet:
    window = data.window("latency")
    rows = []
    for cell in window[0].cells if window else {}:
        mix, bs = cell.split(".")
        cells = [r.cells[cell] for r in window if cell in r.cells]
        means = [c.lat_mean_ns for c in cells if c.lat_mean_ns is not None]
        maxima = [r.lat_max_ns for c in cells for r in c.results if r.lat_max_ns is not None]
        bins = merge_bins(*(data.bins(c.round_no, f"latency.ss.{cell}") for c in cells))
        p = percentiles_from_bins(bins, (99.999,))[99.999] if bins else None
        if p is not None and maxima:  # a bucket's value may exceed the true maximum by 1/128
            p = min(p, max(maxima))
        rows.append(
            {
                "cell": f"RND {catalog.block_size_label(parse_size(bs))} R/W "
                f"{mix.replace('-', '/')}",
                "bs_bytes": parse_size(bs),
                "read_pct": int(mix.split("-")[0]),
                "lat_mean_ns": _avg(means),
                "lat_max_ns": max(maxima) if maxima else None,
                "lat_p99999_ns": p,
            }
        )
    columns = (
        Column("cell", "Access (TC1/QD1)"),
        Column("lat_mean_ns", "Average", fmt_latency, numeric=True),
        Column("lat_max_ns", "Maximum", fmt_latency, numeric=True),
        Column("lat_p99999_ns", "p99.999", fmt_latency, numeric=True),
    )
    return _sheet("Latency (response time)", columns, rows, _steady_notes(data, "latency"))


def wsat_sheet(data: _Run) -> Sheet:
    rows = []
    elapsed_s = 0.0
    written = 0
    for index, r in enumerate(data.history("wsat")):
        cell = next(iter(r.cells.values()))
        elapsed_s += max((x.runtime_ms for x in cell.results), default=0.0) / 1000
        written += cell.io_bytes
        rows.append(
            {
                "sample": index + 1,
                "elapsed_s": elapsed_s,
                "iops": cell.iops,
                "written_gb": written / 1e9,
            }
        )
    columns = (
        Column("sample", "Sample", numeric=True),
        Column("elapsed_s", "Time (s)", lambda v: f"{float(v):,.0f}", numeric=True),
        Column("written_gb", "Written (GB)", lambda v: f"{float(v):,.2f}", numeric=True),
        Column("iops", "IOPS", fmt_count, numeric=True),
    )
    target = state.WSAT_CAPACITY_MULTIPLE * data.active
    notes = (
        f"4 KiB random write until {target / 1e9:,.2f} GB (4 x active range) are written, "
        f"at most {data.options.wsat_max_rounds} samples of {data.options.cell_seconds:g} s "
        "(the last one cut short to end at the target)",
        *wsat_written_notes(data, written, len(rows)),
    )
    sheet = _sheet("WSAT: IOPS vs time and vs total GB written", columns, rows, notes)
    document = {**sheet.document, "target_bytes": target, "written_bytes": written}
    return Sheet(sheet.title, sheet.columns, sheet.rows, document, sheet.notes)


def wsat_written_notes(data: _Run, written: int, samples: int) -> tuple[str, ...]:
    """How the written total ended against 4 x the active range: at it, past it by
    what the last sample wrote after it, or short of it at the sample limit."""
    target = state.WSAT_CAPACITY_MULTIPLE * data.active
    total = f"written {written / 1e9:,.2f} GB of {target / 1e9:,.2f} GB"
    if written > target:
        over = written - target
        return (f"{total}: the last sample wrote {over / 1e6:,.1f} MB ({over / target:.2%}) "
                "past 4 x active range",)  # fmt: skip
    if written == target:
        return (f"{total}: stopped at 4 x active range",)
    if samples >= data.options.wsat_max_rounds:
        return (f"{total}: stopped at the limit of {samples} samples, short of 4 x active range",)
    return (f"{total} so far",)


def hir_sheet(data: _Run) -> Sheet:
    """IOPS per wait state: over the whole cycle cell (fio's figure, idle time
    included), during the write periods only (4 KiB I/Os / (cycles x write time)),
    and over the continuous writes after it; against the steady-state IOPS."""
    window = data.window("hir")
    baseline = _avg([c.iops for r in window for c in r.cells.values()])
    scale = data.options.cell_seconds / 60
    rows = []
    for r in data.history("hir", "idle"):
        name = next(n for n in r.cells if n.endswith("-cycles"))
        wait = int(name[1:].split("-")[0])
        cycles, cont = r.cells[name], r.cells[f"w{wait}-cont"]
        write_s = data.options.hir_cycles * catalog.HIR_WRITE_S * scale
        rows.append(
            {
                "wait_s": wait * scale,
                "cycles": data.options.hir_cycles,
                "cycle_iops": cycles.iops,
                "write_period_iops": cycles.io_bytes / 4096 / write_s,
                "continuous_iops": cont.iops,
                "steady_state_iops": baseline,
            }
        )
    columns = (
        Column("wait_s", "Wait", lambda v: format_seconds(float(v)), numeric=True),
        Column("cycles", "Cycles", numeric=True),
        Column("write_period_iops", "IOPS while writing", fmt_count, numeric=True),
        Column("cycle_iops", "IOPS incl. idle", fmt_count, numeric=True),
        Column("continuous_iops", "IOPS after (continuous)", fmt_count, numeric=True),
        Column("steady_state_iops", "Steady-state IOPS", fmt_count, numeric=True),
    )
    notes = (
        *_steady_notes(data, "hir"),
        f"times scaled by cell length: write periods "
        f"{format_seconds(catalog.HIR_WRITE_S * scale)}, "
        f"continuous {format_seconds(catalog.HIR_CONTINUOUS_S * scale)}",
    )
    return _sheet("HIR: IOPS per wait state", columns, rows, notes)


XSR_RECOVERED_FRACTION = 0.9
"""XSR recovery: group 3 has recovered at the first cell with at least 90% of the
throughput of group 1's last five cells (volbench's definition; PTS shows the plot)."""


def xsr_recovery_s(groups: Sequence[state.StoredRound]) -> float | None:
    """Seconds from the start of access group 3 to the end of its first recovered cell."""
    if len(groups) < 3:
        return None
    first = list(groups[0].cells.values())[-5:]
    baseline = sum(c.bw_bytes_per_s for c in first) / len(first)
    elapsed = 0.0
    for cell in groups[2].cells.values():
        elapsed += max((r.runtime_ms for r in cell.results), default=0.0) / 1000
        if cell.bw_bytes_per_s >= XSR_RECOVERED_FRACTION * baseline:
            return elapsed
    return None


def xsr_sheet(data: _Run) -> Sheet:
    groups = data.history("xsr", "group")
    rows = []
    elapsed = 0.0
    for group in groups:
        for name, cell in group.cells.items():
            elapsed += max((r.runtime_ms for r in cell.results), default=0.0) / 1000
            label, n = name.split(".")
            rows.append(
                {
                    "group": label,
                    "cell": int(n[1:]),
                    "elapsed_s": elapsed,
                    "bw_bytes_per_s": cell.bw_bytes_per_s,
                    "bw_mb_per_s": cell.bw_bytes_per_s / MB,
                    "lat_mean_ns": cell.lat_mean_ns,
                }
            )
    columns = (
        Column("group", "Access group"),
        Column("cell", "Cell", numeric=True),
        Column("elapsed_s", "Time (s)", lambda v: f"{float(v):,.1f}", numeric=True),
        Column("bw_mb_per_s", "MB/s", fmt_rate, numeric=True),
        Column("lat_mean_ns", "Avg response", fmt_latency, numeric=True),
    )
    recovery = xsr_recovery_s(groups)
    notes = (
        "recovery time: "
        + (f"{recovery:,.1f} s" if recovery is not None else "not recovered")
        + f" (group 3 back to {XSR_RECOVERED_FRACTION:.0%} of group 1's final throughput)",
    )
    sheet = _sheet("XSR: throughput and response time vs time", columns, rows, notes)
    document = {**sheet.document, "recovery_s": recovery}
    return Sheet(sheet.title, sheet.columns, sheet.rows, document, sheet.notes)


def demand_rows(data: _Run, test: str) -> list[dict[str, Any]]:
    """The sweep: one row per TC x QD, with DIRTH's MaxIOPS/MidIOPS/MinIOPS marked."""
    sweep = data.history(test, "sweep")
    if not sweep:
        return []
    rows: list[dict[str, Any]] = []
    for name, cell in sweep[-1].cells.items():
        tc, qd = (int(part[2:]) for part in name.split("-"))
        rows.append(
            {
                "cell": name,
                "tc": tc,
                "qd": qd,
                "toio": tc * qd,
                "iops": cell.iops,
                "lat_mean_ns": cell.lat_mean_ns,
                "point": None,
            }
        )
    if test == "dirth":
        under = [r for r in rows if (r["lat_mean_ns"] or 0) < DIRTH_MAX_LATENCY_NS]
        top = max(under or rows, key=lambda r: r["iops"])
        low = min(rows, key=lambda r: r["toio"])
        middle = (top["iops"] + low["iops"]) / 2
        others = [r for r in rows if r is not top and r is not low] or rows
        mid = min(others, key=lambda r: abs(r["iops"] - middle))
        for row, label in ((top, "MaxIOPS"), (mid, "MidIOPS"), (low, "MinIOPS")):
            row["point"] = label if row["point"] is None else f"{row['point']}+{label}"
    return rows


def demand_sheet(data: _Run, test: str) -> Sheet:
    rows = demand_rows(data, test)
    columns = (
        Column("tc", "TC", numeric=True),
        Column("qd", "QD", numeric=True),
        Column("toio", "TOIO", numeric=True),
        Column("iops", "IOPS", fmt_count, numeric=True),
        Column("lat_mean_ns", "Avg response", fmt_latency, numeric=True),
        Column("point", "Point"),
    )
    title = "ECW" if test == "ecw" else "DIRTH"
    notes = (
        *_steady_notes(data, test),
        "demand intensity: IOPS vs TOIO and response time vs IOPS",
    )
    return _sheet(f"{title}: demand-intensity sweep", columns, rows, notes)


HISTOGRAM_PCTS = (50.0, 90.0, 99.0, 99.9, 99.99)


def dirth_histogram_sheet(data: _Run) -> Sheet:
    """Response-time histograms of the MaxIOPS, MidIOPS and MinIOPS points: the json+
    bins in power-of-two buckets (upper edge in ns), with percentiles."""
    sweep = data.history("dirth", "sweep")
    rows = []
    for point in (r for r in demand_rows(data, "dirth") if r["point"]):
        bins = data.bins(sweep[-1].cells[point["cell"]].round_no, f"dirth.sweep.{point['cell']}")
        buckets: dict[int, int] = {}
        for value, count in bins.items():
            edge = 1 << max(int(value).bit_length(), 10)
            buckets[edge] = buckets.get(edge, 0) + count
        pcts = percentiles_from_bins(bins, HISTOGRAM_PCTS) if bins else {}
        rows.append(
            {
                "point": point["point"],
                "cell": point["cell"],
                **{f"p{p:g}_ns": pcts.get(p) for p in HISTOGRAM_PCTS},
                "histogram": {str(edge): count for edge, count in sorted(buckets.items())},
            }
        )
    columns = (
        Column("point", "Point"),
        Column("cell", "TC x QD"),
        *(Column(f"p{p:g}_ns", f"p{p:g}", fmt_latency, numeric=True) for p in HISTOGRAM_PCTS),
        Column("histogram", "Histogram (<= ns: I/Os)", _histogram),
    )
    return _sheet("DIRTH response-time histograms", columns, rows, ())


def _histogram(value: Any) -> str:
    return " ".join(f"{fmt_latency(int(edge))}:{count}" for edge, count in value.items())


def steady_state_sheet(data: _Run) -> Sheet:
    """Every tracking variable's window: average, fit line and both excursions."""
    rows: list[dict[str, Any]] = []
    for test in data.options.tests:
        if test in ("wsat", "xsr"):
            continue
        verdict = data.verdict(test)
        ss = data.history(test, "ss")
        if not verdict.windows and ss:  # fewer rounds than a window: the rounds there are
            for name, values in state.tracking(test, ss).items():
                rows.append(
                    {
                        "test": test,
                        "variable": name,
                        "label": variable_label(name),
                        "rounds": f"1-{len(values)}",
                        "values": values,
                        "average": _avg(values),
                        "slope": None,
                        "intercept": None,
                        "data_excursion_pct": None,
                        "slope_excursion_pct": None,
                        "steady": _not_evaluated(len(values)).removeprefix("steady state "),
                    }
                )
        for name, w in verdict.windows.items():
            rows.append(
                {
                    "test": test,
                    "variable": name,
                    "label": variable_label(name),
                    "rounds": f"{w.rounds[0] + 1}-{w.rounds[-1] + 1}",
                    "values": list(w.values),
                    "average": w.average,
                    "slope": w.slope,
                    "intercept": w.intercept,
                    "data_excursion_pct": 100 * w.data_excursion / w.average if w.average else None,
                    "slope_excursion_pct": 100 * w.slope_excursion / w.average
                    if w.average
                    else None,
                    "steady": "yes" if w.steady else "NOT achieved",
                }
            )
    for row in rows:  # what the table prints: in the figure's unit (the raw ones stay)
        unit, divisor = FIGURE_UNITS.get(str(row["variable"]).rsplit(" ", 1)[-1], ("", 1.0))
        row["unit"] = unit
        for key in ("average", "slope", "intercept"):
            row[f"{key}_in_unit"] = row[key] / divisor if row[key] is not None else None
    columns = (
        Column("test", "Test"),
        Column("label", "Tracking variable"),
        Column("rounds", "Window"),
        Column("unit", "Unit"),
        Column("average_in_unit", "Average", _figure, numeric=True),
        Column("slope_in_unit", "Slope/round", _figure, numeric=True),
        Column("intercept_in_unit", "Intercept", _figure, numeric=True),
        Column("data_excursion_pct", "Excursion (<=20%)", _pct, numeric=True),
        Column("slope_excursion_pct", "Slope x4 (<=10%)", _pct, numeric=True),
        Column("steady", "Steady state"),
    )
    notes = (
        "figures in the unit of their row: IOPS, MB/s (10^6 bytes/s), µs (mean response "
        "time); in JSON, average/slope/intercept in IO/s, bytes/s and ns",
    )
    return _sheet("Steady state (PTS 5-round window)", columns, rows, notes)


def cells_sheet(run: RunRecord) -> Sheet:
    """Every stored cell of every round, as stored (fio's own per-direction figures),
    partial rounds included: the rows the tables above are computed from."""
    rows = []
    for r in run.results:
        test, phase, cell = [*r.test.split(".", 2), "", ""][:3]
        rows.append(
            {
                "round": r.round,
                "test": test,
                "phase": phase,
                "cell": cell,
                "cell_label": cell_label(cell),
                "direction": r.direction,
                "iops": r.iops,
                "bw_bytes_per_s": r.bw_bytes_per_s,
                "bw_mb_per_s": r.bw_bytes_per_s / MB,
                "lat_mean_ns": r.lat_mean_ns,
            }
        )
    columns = (
        Column("round", "Round", numeric=True),
        Column("test", "Test"),
        Column("phase", "Phase"),
        Column("cell_label", "Cell"),
        Column("direction", "Dir"),
        Column("iops", "IOPS", fmt_count, numeric=True),
        Column("bw_mb_per_s", "MB/s", fmt_rate, numeric=True),
        Column("lat_mean_ns", "Lat mean", fmt_latency, numeric=True),
    )
    notes = ("phases: wipc preconditioning, ss steady-state round, run WSAT sample, idle HIR "
             "wait state, group XSR access group, sweep TC x QD sweep",)  # fmt: skip
    return _sheet("Every stored cell of every round", columns, rows, notes)


def _bs(bs: int) -> str:
    from volbench.units import format_block_size

    return format_block_size(bs)


def _sheet(
    title: str, columns: tuple[Column, ...], rows: list[dict[str, Any]], notes: Any
) -> Sheet:
    return Sheet(title, columns, tuple(rows), {"title": title, "rows": rows}, tuple(notes))


def _throughput_builder(test: str) -> Callable[[_Run], list[Sheet]]:
    return lambda data: [throughput_sheet(data, test)]


_BUILDERS: dict[str, Callable[[_Run], list[Sheet]]] = {
    "iops": lambda d: [iops_sheet(d)],
    **{test: _throughput_builder(test) for test in (*THROUGHPUT_TESTS, "throughput")},
    "latency": lambda d: [latency_sheet(d)],
    "wsat": lambda d: [wsat_sheet(d)],
    "hir": lambda d: [hir_sheet(d)],
    "xsr": lambda d: [xsr_sheet(d)],
    "ecw": lambda d: [demand_sheet(d, "ecw")],
    "dirth": lambda d: [demand_sheet(d, "dirth"), dirth_histogram_sheet(d)],
}


def pts_sheets(run: RunRecord) -> list[Sheet]:
    """Every table of a PTS run, the header notes on the first one."""
    data = _Run(run)
    sheets: list[Sheet] = []
    for test in data.options.tests:
        if data.history(test):
            sheets += _BUILDERS[test](data)
    steady = steady_state_sheet(data)  # none for a run of WSAT and XSR only
    sheets += [*([steady] if steady.rows else []), cells_sheet(run)]
    first = sheets[0]
    sheets[0] = Sheet(
        first.title, first.columns, first.rows, first.document,
        header_notes(run) + first.notes, first.flagged_rows,
    )  # fmt: skip
    return sheets


def pts_document(run: RunRecord) -> dict[str, Any]:
    """The stable JSON form of a PTS report (schema ``volbench.pts/1``)."""
    data = _Run(run)
    return {
        "schema": SCHEMA,
        "id": run.id,
        "status": run.status.value,
        "non_compliant": run.non_compliant,
        "header": list(header_notes(run)),
        "settings": run.settings,
        "steady_state": {
            test: {
                "steady": data.verdict(test).steady,
                "rounds": len(data.history(test, "ss")),
                "evaluated": len(data.history(test, "ss")) >= WINDOW_ROUNDS,
            }
            for test in data.options.tests
            if test not in ("wsat", "xsr")
        },
        "tables": [dict(s.document) | {"notes": list(s.notes)} for s in pts_sheets(run)],
    }
