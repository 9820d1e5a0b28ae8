"""The sheet of a run on several targets or hosts: each place's share beside the
aggregate, what each place did alone (``--solo``), and the shared-limit finding.

Every figure is a stored result row: the aggregate rows (no place) sum IOPS and
bandwidth over the places and merge latency from fio's json+ bins; each place's
rows are fio's own figures for its jobs (:func:`volbench.analysis.aggregate.place_tests`).
MB/s = bytes/s / 10^6.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from volbench.analysis.shared_limit import SharedLimit, shared_limits
from volbench.model import HostProbe, RunRecord, StoredResult
from volbench.records import json_object
from volbench.report.rows import Row, documents
from volbench.report.sheet import Column, Sheet, fmt_count, fmt_latency, fmt_rate

SOLO_PREFIX = "solo."  # as volbench.plans.placement.fleet writes it
MB = 1_000_000

COLUMNS = (
    Column("test", "Test"),
    Column("direction", "Dir"),
    Column("place", "Place"),
    Column("iops", "IOPS", fmt_count, numeric=True),
    Column("bw_mb_per_s", "MB/s", fmt_rate, numeric=True),
    Column("lat_mean_ns", "Lat mean", fmt_latency, numeric=True),
    Column("lat_p99_ns", "p99", fmt_latency, numeric=True),
    Column("alone_iops", "Alone IOPS", fmt_count, numeric=True),
    Column("share_of_alone_pct", "% of alone", lambda v: f"{float(v):.0f} %", numeric=True),
)


def is_fleet(run: RunRecord) -> bool:
    """Whether ``run`` ran on several targets or hosts at once."""
    return bool(run.settings.places)


def aggregate_run(run: RunRecord) -> RunRecord:
    """``run`` with only its aggregate results (what its plan's own sheets read)."""
    if not is_fleet(run):
        return run
    return dataclasses.replace(run, results=run.aggregate)


def _alone(results: Sequence[StoredResult]) -> dict[tuple[str, str, str], float]:
    """IOPS of each (test, direction, place) measured alone (the last round's)."""
    return {
        (r.test[len(SOLO_PREFIX) :], r.direction, r.hostname or ""): r.iops
        for r in results
        if r.test.startswith(SOLO_PREFIX)
    }


@dataclass(frozen=True, eq=False)
class PlaceRow(Row):
    """A test's result on one place (or all together): IOPS, bytes/s and MB/s (10^6
    B/s), mean, p99 and maximum latency (ns), fio's job count, and IOPS measured on
    the place alone with the share of it reached together (%), None when not measured."""

    round: int
    test: str
    direction: str
    place: str
    iops: float
    bw_bytes_per_s: float
    bw_mb_per_s: float
    lat_mean_ns: float | None
    lat_p99_ns: float | None
    lat_max_ns: float | None
    jobs: int
    alone_iops: float | None
    share_of_alone_pct: float | None


def _row(result: StoredResult, place: str, alone: float | None) -> PlaceRow:
    return PlaceRow(
        round=result.round,
        test=result.test,
        direction=result.direction,
        place=place,
        iops=result.iops,
        bw_bytes_per_s=result.bw_bytes_per_s,
        bw_mb_per_s=result.bw_bytes_per_s / MB,
        lat_mean_ns=result.lat_mean_ns,
        lat_p99_ns=result.lat_p99_ns,
        lat_max_ns=result.lat_max_ns,
        jobs=result.jobs,
        alone_iops=alone,
        share_of_alone_pct=100.0 * result.iops / alone if alone else None,
    )


def findings(run: RunRecord) -> list[SharedLimit]:
    """The shared-limit finding of every test measured together and alone (IOPS of
    all directions added; the last round of each test)."""
    together: dict[str, float] = {}
    alone: dict[str, dict[str, float]] = {}
    shares: dict[str, dict[str, float]] = {}
    latest: dict[tuple[str, str | None], int] = {}
    for r in run.results:
        latest[(r.test, r.place)] = max(r.round, latest.get((r.test, r.place), -1))
    for r in run.results:
        if r.round != latest[(r.test, r.place)]:
            continue
        if r.test.startswith(SOLO_PREFIX):
            per_place = alone.setdefault(r.test[len(SOLO_PREFIX) :], {})
            per_place[r.place or ""] = per_place.get(r.place or "", 0.0) + r.iops
        elif r.place is None:
            together[r.test] = together.get(r.test, 0.0) + r.iops
        else:
            per_place = shares.setdefault(r.test, {})
            per_place[r.place] = per_place.get(r.place, 0.0) + r.iops
    return shared_limits(together, alone, shares)


def _host_notes(hosts: Sequence[HostProbe]) -> list[str]:
    notes = []
    for host in hosts:
        if host.answers:
            notes.append(
                f"host {host.address}: {host.hostname} · {host.os} {host.arch} · "
                f"{host.fio_version} (answered in {host.seconds:.2f} s)"
            )
        else:
            notes.append(f"host {host.address}: no answer ({host.error})")
    return notes


def fleet_sheet(run: RunRecord) -> Sheet:
    """Per test and direction: the aggregate ("all N"), then each place's share."""
    places = [p.label for p in run.settings.places]
    order = {label: index for index, label in enumerate(places)}
    alone = _alone(run.results)
    rows: list[PlaceRow] = []
    for result in run.results:
        if result.test.startswith(SOLO_PREFIX):
            continue
        if result.place is None:
            rows.append(_row(result, f"all {len(places)} together", None))
            shares = [
                r
                for r in run.results
                if r.round == result.round
                and r.test == result.test
                and r.direction == result.direction
                and r.place is not None
            ]
            shares.sort(key=lambda r: order.get(r.place or "", len(order)))
            rows += [
                _row(r, r.place or "", alone.get((r.test, r.direction, r.place or "")))
                for r in shares
            ]
    found = findings(run)
    # the number N of each place names its per-second series (TEST@N) in reports
    notes = ["places: " + ", ".join(f"{n} = {label}" for n, label in enumerate(places, 1))]
    notes += _host_notes(run.settings.hosts)
    if run.error:
        notes.append(f"note: {run.error}")
    notes += [f.sentence() for f in found if f.found]
    if found and not any(f.found for f in found):
        notes.append(
            "no shared limit: together the targets reached at least "
            f"{min(f.together / f.sum_alone for f in found if f.sum_alone):.0%} "
            "of the sum of what each did alone"
        )
    if not alone and len(places) > 1:
        notes.append("measure each target alone too (--solo) to test for a shared limit")
    document = {
        "schema": "volbench.places/1",
        "places": [json_object(p) for p in run.settings.places],
        "hosts": [json_object(h) for h in run.settings.hosts],
        "rows": documents(rows),
        "shared_limits": [
            {
                "test": f.test,
                "unit": f.unit,
                "together": f.together,
                "alone": dict(f.alone),
                "shares": dict(f.shares),
                "sum_alone": f.sum_alone,
                "found": f.found,
            }
            for f in found
        ],
    }
    return Sheet(
        title=f"run {run.id}: {len(places)} places at once",
        columns=COLUMNS,
        rows=tuple(rows),
        document=document,
        notes=tuple(notes),
    )
