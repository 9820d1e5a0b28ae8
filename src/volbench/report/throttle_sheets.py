"""The sheet of ``volbench fingerprint``: throttle detection over stored runs.

Points come from the stored result rows (fio's IOPS and mean total latency per
test, last round of each run), grouped by workload (rw, block size, read mix);
each group with three or more queue depths is fingerprinted by
:func:`volbench.analysis.throttle.fingerprint`.
"""

from __future__ import annotations

from collections.abc import Sequence

from volbench.analysis.throttle import Fingerprint, Point, fingerprint, shared_budget
from volbench.errors import FioError, UsageError
from volbench.fio.parser import parse
from volbench.model import RunRecord, StoredResult, StoredWorkload
from volbench.report.sheet import Column, Sheet, fmt_count


def _workload_key(workload: StoredWorkload) -> str:
    rw = workload.rw or "?"
    size = f"{workload.bs_bytes / 1024:g}k" if workload.bs_bytes is not None else "?"
    mix = workload.rwmixread_pct
    return f"{rw} {size}" + (f" {mix}/{100 - mix}" if rw in ("rw", "randrw") and mix else "")


MIN_SAMPLES = 3
"""Fewer of fio's IOPS samples than this give no spread (one sample has stddev 0)."""


def sample_spread(raw_outputs: Sequence[str]) -> dict[str, float]:
    """Per test: fio's per-interval IOPS spread, iops_stddev / iops_mean of each
    active direction (fio samples IOPS every 500 ms), the largest over the test's
    job entries and directions. A rate limiter gives a flat top (a small spread)."""
    spread: dict[str, float] = {}
    for raw in raw_outputs:
        try:
            output = parse(raw)
        except FioError:
            continue
        for job in output.jobs:
            for direction in job.directions.values():
                stats = direction.iops_samples
                if stats and stats.mean > 0 and stats.samples >= MIN_SAMPLES:
                    spread[job.name] = max(spread.get(job.name, 0.0), stats.stddev / stats.mean)
    return spread


def points_by_workload(runs: Sequence[RunRecord]) -> dict[str, list[Point]]:
    """One point per test and run (directions summed; latency IOPS-weighted)."""
    groups: dict[str, list[Point]] = {}
    for run in runs:
        spread = sample_spread(run.raw_outputs)
        newest: dict[str, int] = {}
        for row in run.aggregate:
            newest[row.test] = max(newest.get(row.test, row.round), row.round)
        tests: dict[str, list[StoredResult]] = {}
        for row in run.aggregate:
            if row.round == newest[row.test]:
                tests.setdefault(row.test, []).append(row)
        for name, rows in tests.items():
            workload = rows[0].workload
            iops = sum(r.iops for r in rows)
            timed = [r for r in rows if r.lat_mean_ns is not None and r.iops > 0]
            if iops <= 0 or not timed:
                continue
            lat = sum(r.iops * (r.lat_mean_ns or 0.0) for r in timed) / sum(r.iops for r in timed)
            outstanding = rows[0].outstanding_io
            point = Point(outstanding, iops, lat, f"run {run.id} {name}", spread.get(name))
            groups.setdefault(_workload_key(workload), []).append(point)
    return groups


def shared_findings(results: dict[str, Fingerprint]) -> list[str]:
    """For each mixed workload (``rw``/``randrw``): do reads and writes share one
    budget? That takes the mix and the read-only and write-only sweeps of the
    same block size, all rate-limited (:func:`shared_budget`); otherwise the
    finding names the sweep that is missing or was not rate-limited."""
    found = []
    for key, result in results.items():
        rw, _, rest = key.partition(" ")
        if rw not in ("rw", "randrw"):
            continue
        size = rest.split(" ")[0]
        seq = "" if rw == "rw" else "rand"
        names = (f"{seq}read {size}", f"{seq}write {size}")
        missing = [name for name in names if name not in results]
        if missing:
            needed = " and a ".join(missing) + (" sweep is" if len(missing) == 1 else " sweep are")
            found.append(
                f"{key}: a {needed} needed to tell whether reads and writes share one budget"
            )
            continue
        read, write = results[names[0]], results[names[1]]
        unlimited = [
            k for k, r in ((key, result), (names[0], read), (names[1], write)) if not r.limited
        ]
        if unlimited:
            found.append(
                f"{key}: no rate limit found in {', '.join(unlimited)}: cannot tell whether"
                " reads and writes share one budget"
            )
            continue
        total = result.cap_iops or 0.0
        mix = rest.split(" ")[1] if " " in rest else "50/50"
        share = int(mix.split("/")[0]) / 100
        found.append(
            f"{key}: "
            + shared_budget(
                read.cap_iops or 0, write.cap_iops or 0, total * share, total * (1 - share)
            )
        )
    return found


def _plateau_spread(result: Fingerprint) -> float | None:
    """Largest per-interval IOPS spread over the plateau points (None: unknown)."""
    known = [p.sample_spread for p in result.plateau if p.sample_spread is not None]
    return max(known) if known else None


def fingerprint_sheet(runs: Sequence[RunRecord]) -> Sheet:
    """Fingerprint every workload measured at three or more queue depths (a run
    named twice counts once)."""
    runs = list({run.id: run for run in runs}.values())
    groups = points_by_workload(runs)
    results = {
        key: fingerprint(points)
        for key, points in sorted(groups.items())
        if len({p.outstanding for p in points}) >= 3
    }
    if not results:
        depths = {k: sorted({p.outstanding for p in v}) for k, v in groups.items()}
        raise UsageError(
            "no workload was measured at 3 or more queue depths in these runs"
            f" ({'; '.join(f'{k}: QD {d}' for k, d in depths.items()) or 'no results'}):"
            " run it at more --iodepth values"
        )
    rows = tuple(
        {
            "workload": key,
            "depths": " ".join(str(d) for d in sorted({p.outstanding for p in groups[key]})),
            "limited": r.limited,
            "cap_iops": r.cap_iops if r.limited else None,
            "cap_stderr_iops": r.cap_stderr_iops if r.limited else None,
            "confidence": r.confidence if r.limited else None,
            "r_squared": r.r_squared,
            "sample_spread": _plateau_spread(r),
            "plateau": [p.source for p in r.plateau],
            "reason": r.reason,
        }
        for key, r in results.items()
    )
    columns = (
        Column("workload", "workload"),
        Column("depths", "queue depths"),
        Column("limited", "rate-limited", lambda v: "yes" if v else "no"),
        Column("cap_iops", "cap IOPS", fmt_count, numeric=True),
        Column("cap_stderr_iops", "±", fmt_count, numeric=True),
        Column("confidence", "confidence", lambda v: f"{float(v):.2f}", numeric=True),
        Column("sample_spread", "per-0.5 s spread", lambda v: f"{float(v):.1%}", numeric=True),
        Column("reason", "reason"),
    )
    findings = shared_findings(results)
    notes = (
        "points: fio's IOPS and mean total latency of each stored test (last round);"
        " spread: fio's iops_stddev / iops_mean over its 0.5 s samples (a limiter's flat top)",
        *findings,
    )
    runs_text = ", ".join(str(r.id) for r in runs)
    document = {"runs": [r.id for r in runs], "workloads": list(rows), "findings": findings}
    return Sheet(f"Throttle fingerprint of runs {runs_text}", columns, rows, document, notes)
