"""The limits card of a ``volbench run limits`` run: the fitted limiter
(:func:`volbench.analysis.limiter_model.fit`), one figure a row with its spread and the
tests it rests on, from the stored results (fio's IOPS and mean latency per direction,
the last round of each test)."""

from __future__ import annotations

import dataclasses

from volbench.analysis.limiter_model import KIB, DirectionModel, Figure, LimiterModel, Probe, fit
from volbench.model import RunRecord, StoredResult
from volbench.plans.limits import parse_name
from volbench.report.sheet import Column, Sheet

MB = 1e6


def stored_probes(run: RunRecord) -> list[Probe]:
    """The experiment's tests of ``run`` as probes (directions of a test added up)."""
    newest: dict[str, int] = {}
    for row in run.aggregate:
        newest[row.test] = max(newest.get(row.test, row.round), row.round)
    tests: dict[str, list[StoredResult]] = {}
    for row in run.aggregate:
        if row.round == newest[row.test]:
            tests.setdefault(row.test, []).append(row)
    found = []
    for name, rows in tests.items():
        parsed = parse_name(name)
        iops = sum(r.iops for r in rows)
        timed = [r for r in rows if r.iops > 0 and r.lat_mean_ns]
        if parsed is None or iops <= 0 or not timed:
            continue
        lat = sum(r.iops * (r.lat_mean_ns or 0.0) for r in timed) / sum(r.iops for r in timed)
        read = sum(r.iops for r in rows if r.direction == "read")
        write = sum(r.iops for r in rows if r.direction == "write")
        found.append(
            Probe(name, parsed.direction, parsed.bs_bytes, parsed.iodepth, read, write, lat)
        )
    return found


def _spread(figure: Figure) -> str:
    return f"±{figure.spread:.1%}" if figure.spread else "one test"


def _rows(name: str, model: DirectionModel) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []

    def add(what: str, figure: Figure | None, shown: str) -> None:
        if figure is not None:
            rows.append({"figure": f"{name} {what}", "value": shown, "spread": _spread(figure),
                         "tests": ", ".join(figure.tests)})  # fmt: skip

    cap = model.iops_cap
    add("IOPS cap", cap, f"{cap.value:,.0f} IOPS" if cap else "")
    ceiling = model.ceiling
    add("IOPS, no cap met", ceiling, f"{ceiling.value:,.0f} IOPS or more" if ceiling else "")
    limit = model.bytes_cap
    add("MB/s cap", limit, f"{limit.value / MB:,.1f} MB/s" if limit else "")
    if model.unit is not None and cap is not None:
        how = {True: "counted rounded up", False: "counted in proportion", None: "counted"}
        rows.append({
            "figure": f"{name} I/O unit",
            "value": f"{model.unit.bytes // KIB} KiB, {how[model.unit.rounded]}",
            "spread": "exact",
            "tests": ", ".join(cap.tests),
        })  # fmt: skip
    floor = model.latency_floor
    paced = " (the limiter's pacing)" if model.paced_at_qd1 else ""
    add("latency at QD 1", floor, f"{floor.value / 1e3:,.0f} µs{paced}" if floor else "")
    return rows


def _budgets(model: LimiterModel) -> list[str]:
    said = {True: "one budget for reads and writes", False: "separate read and write budgets"}
    notes = []
    for what, shared in (("IOPS", model.shared_iops), ("MB/s", model.shared_bytes)):
        if shared is not None:
            notes.append(f"{what}: {said[shared]}")
    notes += [f"not settled: {question}" for question in model.open]
    return notes


def limits_card(run: RunRecord) -> Sheet:
    """The fitted limiter of ``run`` as a sheet, and as JSON in its document."""
    model = fit(stored_probes(run))
    rows = _rows("read", model.read) + _rows("write", model.write)
    notes = [f"run {run.id} · limits · {run.status.value} · target {run.target.path}"]
    notes += _budgets(model)
    if model.read.unit is not None and model.read.bytes_cap is not None:
        notes.append(
            "an I/O unit counted in proportion and a MB/s cap of the IOPS cap x the unit"
            " limit every workload alike: either describes this volume"
        )
    columns = (
        Column("figure", "Figure"),
        Column("value", "Fitted"),
        Column("spread", "Spread"),
        Column("tests", "Rests on"),
    )
    document = {"run": run.id, "model": dataclasses.asdict(model)}
    return Sheet("what limits this volume", columns, tuple(rows), document, tuple(notes))
