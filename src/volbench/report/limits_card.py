"""The limits card of a ``volbench run limits`` run: the fitted limiter
(:func:`volbench.analysis.limiter_model.fit`), one figure a row with its spread and the
tests it rests on, from the stored results (fio's IOPS and mean latency per direction,
the last round of each test); the burst probe's burst and how fast its credits came
back (:mod:`volbench.analysis.burst_refill`), from the stored per-second logs. Its JSON
document holds the model and the probes it was fitted from (:func:`card_fit` reads them
back: the charts of :mod:`volbench.report.limits_charts` draw that one fit, never one of
their own)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from volbench.analysis import validity_starved
from volbench.analysis.burst_refill import Refill, refill_rate, rested_s
from volbench.analysis.burst_series import Burst, with_spent
from volbench.analysis.cpu_starvation import HOST_CPU_PCT, mean_of
from volbench.analysis.host_series import round_hosts
from volbench.analysis.limiter_model import (
    KIB,
    DirectionModel,
    Figure,
    LimiterModel,
    Probe,
    fit,
)
from volbench.analysis.model_promise import matches
from volbench.analysis.run_validity import facts_of_tests, round_times
from volbench.analysis.stored_bursts import stored_bursts
from volbench.analysis.test_windows import io_span
from volbench.errors import VolbenchError
from volbench.model import RunRecord, StoredResult
from volbench.plans.limits import (
    BBURST,
    BURST,
    BYTES_BS,
    NAME,
    PROBED,
    PROCESS_GAP_S,
    REFILL,
    REST,
    WBBURST,
    WBURST,
    LimitsOptions,
    parse_name,
    spent_s,
)
from volbench.records import section, structure, unstructure
from volbench.report.sheet import Column, Sheet
from volbench.specs import catalogue
from volbench.specs.expectation import expect

MB = 1e6
RESUMED_S = 3.0
"""More than this many seconds (s) beyond the rest between the burst probe's end and the
second probe's start (round times, to the second): the run stopped and went on between
them, and the rest counted is that time."""


def _newest(run: RunRecord) -> dict[str, int]:
    """The last round of each test of ``run``."""
    newest: dict[str, int] = {}
    for row in run.aggregate:
        newest[row.test] = max(newest.get(row.test, row.round), row.round)
    return newest


def stored_probes(
    run: RunRecord,
    bursts: Mapping[tuple[int, str], Burst],
    short: set[tuple[int, str]] | None = None,
) -> list[Probe]:
    """The experiment's probes of ``run`` (directions of a test added up; the rest and
    the second burst probe left out), each direction's IOPS as fio gave them and whether
    fio was short of CPU in it (``short``, by round and test; None: :func:`starved`); a
    test that burst steadily (``bursts``, by round and test) counts at its baseline
    after the burst, its directions in their measured proportion."""
    newest = _newest(run)
    short = starved(run) if short is None else short
    stale = set(_bytes_stale(run, bursts))
    tests: dict[str, list[StoredResult]] = {}
    for row in run.aggregate:
        if row.round == newest[row.test]:
            tests.setdefault(row.test, []).append(row)
    found = []
    for name, rows in tests.items():
        parsed = parse_name(name)
        if parsed is None or parsed.direction not in PROBED or name in stale:
            continue
        done = [(r, r.iops) for r in rows]
        iops = sum(n for _, n in done)
        timed = [(n, r.lat_mean_ns or 0.0) for r, n in done if n > 0 and r.lat_mean_ns]
        if iops <= 0 or not timed:
            continue
        lat = sum(n * lat_ns for n, lat_ns in timed) / sum(n for n, _ in timed)
        burst = bursts.get((newest[name], name))
        scale = burst.baseline / iops if burst is not None and burst.steady else 1.0
        read = scale * sum(n for r, n in done if r.direction == "read")
        write = scale * sum(n for r, n in done if r.direction == "write")
        found.append(
            Probe(
                name,
                parsed.direction,
                parsed.bs_bytes,
                parsed.iodepth,
                read,
                write,
                lat,
                scale * sum(r.bw_bytes_per_s for r, _ in done),
                (newest[name], name) in short,
            )
        )
    return found


def _bytes_stale(
    run: RunRecord, bursts: Mapping[tuple[int, str], Burst]
) -> dict[str, list[StoredResult]]:
    """The reads' tests larger than 4 KiB that ran before a MB/s burst probe that found
    a bucket, with their rows (:func:`volbench.plans.limits.bytes_stale`): they may have
    run on its credits."""
    probe = _probe_round(bursts, BBURST.name)
    if probe is None:
        return {}
    found: dict[str, list[StoredResult]] = {}
    for row in run.aggregate:
        parsed = parse_name(row.test)
        if (
            parsed
            and parsed.direction == "read"
            and parsed.bs_bytes > 4 * KIB
            and row.round < probe
        ):
            found.setdefault(row.test, []).append(row)
    return found


RATE_LOGS = frozenset({"iops", "bw"})
"""fio's own per-second rate logs (a round's series also hold the host sampler's)."""


def _gaps_after(run: RunRecord, rounds: Sequence[int]) -> list[float]:
    """The seconds without I/O after each of ``rounds`` until the next round's first
    request (:func:`~volbench.analysis.test_windows.io_span`: fio's logs on the Unix
    clock, else its own times of each round); the plan's
    :data:`~volbench.plans.limits.PROCESS_GAP_S` for a gap where a round cannot be
    placed. On a lab guest under a busy host a gap was 1.5 s, twice that figure: the
    bucket regained 15 MB more than it allowed for."""
    order = sorted(t.round for t in run.rounds)
    spans: dict[int, tuple[float, float] | None] = {}

    def span(round_no: int) -> tuple[float, float] | None:
        if round_no not in spans:
            spans[round_no] = _io_span(run, round_no)
        return spans[round_no]

    gaps = []
    for round_no in rounds:
        later = [r for r in order if r > round_no]
        before, after = span(round_no), span(later[0]) if later else None
        gaps.append(max(0.0, after[0] - before[1]) if before and after else PROCESS_GAP_S)
    return gaps


def _io_span(run: RunRecord, round_no: int) -> tuple[float, float] | None:
    """When round ``round_no`` of ``run`` did I/O (:func:`io_span`), from its stored
    per-second logs and fio output."""
    tests: dict[str, StoredResult] = {}
    for row in run.aggregate:
        if row.round == round_no:
            tests.setdefault(row.test, row)
    logs = [s for s in run.series if s.round == round_no and s.kind in RATE_LOGS and s.points]
    if not tests:
        return None
    seconds = sum(r.runtime_ms / 1000 + (r.workload.ramp_time_s or 0.0) for r in tests.values())
    logged = None
    if logs:
        first = min(logs, key=lambda s: s.points[0][0])
        name = first.test.partition("@")[0]
        lead = (tests[name].workload.ramp_time_s or 0.0) if name in tests else 0.0
        logged = (float(first.points[0][0]), float(max(s.points[-1][0] for s in logs)))
    else:
        lead = 0.0
    return io_span(logged, lead, seconds, round_times(run, round_no))


def _probe_round(bursts: Mapping[tuple[int, str], Burst], probe: str) -> int | None:
    """The newest round of the burst probe ``probe`` that found a burst (None: none)."""
    rounds = [key[0] for key in bursts if key[1] == probe]
    return max(rounds) if rounds else None


def _bytes_burst(
    run: RunRecord, bursts: Mapping[tuple[int, str], Burst], probe: str
) -> tuple[str, Burst] | None:
    """The burst of a MB/s burst probe (``probe``: the reads', :data:`BBURST`, or the
    writes') in MB/s and MB; the reads' bucket counted whole: what the reads' larger
    tests before it spent of it added
    (:func:`~volbench.analysis.burst_series.with_spent`, in the order they ran, with the
    gap after each: :func:`_gaps_after`)."""
    found = _probe_burst(bursts, probe)
    if found is None:
        return None
    burst = found[1]
    if probe == BBURST.name:
        tests = sorted(_bytes_stale(run, bursts).values(), key=lambda rows: rows[0].round)
        gaps = _gaps_after(run, [rows[0].round for rows in tests])
        spent = [
            (
                sum(r.bw_bytes_per_s for r in rows) / BYTES_BS,
                rows[0].runtime_ms / 1000 + (rows[0].workload.ramp_time_s or 0.0),
                gap,
            )
            for rows, gap in zip(tests, gaps, strict=True)
        ]
        burst = with_spent(burst, spent)
    mb = BYTES_BS / MB
    return probe, dataclasses.replace(
        burst,
        ceiling=burst.ceiling * mb,
        baseline=burst.baseline * mb,
        credits=burst.credits * mb,
        unit="MB/s",
        ceiling_noise=burst.ceiling_noise * mb,
        baseline_noise=burst.baseline_noise * mb,
    )


def _cpu_held_rounds(run: RunRecord) -> set[tuple[int, str]]:
    """The tests of ``run`` (round, name) whose round ran with every CPU of fio's host
    :data:`~volbench.analysis.cpu_starvation.HOST_CPU_PCT` busy on average: a device
    whose work is the CPUs' (a loop device over an image in RAM) moves its rate with the
    CPU other work leaves it, in steps a burst probe reads as a bucket's, while fio
    itself waits on its I/O and is not short of CPU (:func:`starved`). A cap's plateau
    is judged by :func:`starved` alone: a limiter holds its rate whatever else runs."""
    busy_rounds = {
        round_no
        for round_no, host in round_hosts(run.series).items()
        if (mean_of([mean_of(s.cpu_busy_pct) for s in host.readings]) or 0.0) >= HOST_CPU_PCT
    }
    return {(row.round, row.test) for row in run.aggregate if row.round in busy_rounds}


def starved(run: RunRecord) -> set[tuple[int, str]]:
    """The tests of ``run`` (round, name) in which fio was short of CPU: the validity
    check "starved" (:mod:`volbench.analysis.validity_starved`), on fio's own figures
    (its jobs' CPU, its cgroup's quota, its threads' waits for a CPU), never on the
    host's CPUs alone: other work that keeps every CPU busy does not hold a limiter's
    rate, which leaves fio idle between its I/Os."""
    return {
        (facts.round, facts.test)
        for facts in facts_of_tests(run)
        if validity_starved.check(facts).marks
    }


def _spread(figure: Figure) -> str:
    return f"±{figure.spread:.1%}" if figure.spread else "one test"


@dataclass(frozen=True)
class CardLine:
    """A figure of the card: what it is, its fitted value and spread (text as shown), and
    the tests it rests on (their stored names)."""

    figure: str
    value: str
    spread: str
    tests: tuple[str, ...]

    def row(self) -> dict[str, object]:
        """The line as the card's row (its tests named in one text, as shown)."""
        return {
            "figure": self.figure,
            "value": self.value,
            "spread": self.spread,
            "tests": ", ".join(self.tests),
        }


def _rows(name: str, model: DirectionModel) -> list[CardLine]:
    rows: list[CardLine] = []

    def add(what: str, figure: Figure | None, shown: str) -> None:
        if figure is not None:
            rows.append(CardLine(f"{name} {what}", shown, _spread(figure), tuple(figure.tests)))

    cap = model.iops_cap
    add("IOPS cap", cap, f"{cap.value:,.0f} IOPS" if cap else "")
    ceiling = model.ceiling
    add("IOPS, no cap met", ceiling, f"{ceiling.value:,.0f} IOPS or more" if ceiling else "")
    limit = model.bytes_cap
    level = "MB/s cap" if cap is not None else "MB/s levelled at (a cap, or the device's)"
    add(level, limit, f"{limit.value / MB:,.1f} MB/s" if limit else "")
    if model.unit is not None and cap is not None:
        how = {True: "counted rounded up", False: "counted in proportion", None: "in proportion"}
        same = ", the same limit as the MB/s cap" if limit is not None else ""
        rows.append(
            CardLine(
                f"{name} I/O unit",
                f"{model.unit.bytes // KIB} KiB, {how[model.unit.rounded]}{same}",
                "exact",
                tuple(cap.tests),
            )
        )
    floor = model.latency_floor
    paced = " (the limiter's pacing)" if model.paced_at_qd1 else ""
    add("latency at QD 1", floor, f"{floor.value / 1e3:,.0f} µs{paced}" if floor else "")
    return rows


BUDGET_ROOM = 3
"""Tests' time (``--runtime`` + ``--ramp-time``) a budget must still have had for the
next round (a drain, then the test at a longer runtime when its queue needs one): with
less left, what stayed open stayed so for want of time."""


def _budget_spent(run: RunRecord, model: LimiterModel) -> list[str]:
    """A note when the experiment left a question open (one IOPS budget or two among
    them) and its budget was spent (the plan stops where the next test would not fit):
    a larger ``--budget`` settles it. The time spent is counted as the plan counts it
    (:func:`volbench.plans.limits.spent_s`)."""
    if not model.open and model.shared_iops is not None:
        return []
    try:
        options = section(run.settings.options, NAME, LimitsOptions)
    except VolbenchError:
        return []
    if options is None:
        return []
    ran: dict[str, float] = {}
    for row in run.aggregate:
        ran[row.test] = max(ran.get(row.test, 0.0), row.runtime_ms)
    used = spent_s(options, ran)
    if options.budget_s - used >= BUDGET_ROOM * options.test_s:
        return []
    return [
        f"the budget ran out first ({used:,.0f} s of tests of --budget"
        f" {options.budget_s:,.0f} s): a larger --budget measures what it left out, whether"
        " reads and writes share one IOPS budget among them"
    ]


def _budgets(model: LimiterModel) -> list[str]:
    said = {True: "one budget for reads and writes", False: "separate read and write budgets"}
    notes = []
    for what, shared in (("IOPS", model.shared_iops), ("MB/s", model.shared_bytes)):
        if shared is not None:
            notes.append(f"{what}: {said[shared]}")
    notes += [f"not settled: {question}" for question in model.open]
    return notes


def _probe_burst(
    bursts: Mapping[tuple[int, str], Burst], probe: str = BURST.name
) -> tuple[str, Burst] | None:
    """The burst of the burst probe (or the writes', ``probe``) of its newest round, with
    the probe's name, if it had one (a resumed run may have run the probe again)."""
    found = [(key, burst) for key, burst in bursts.items() if key[1] == probe]
    if not found:
        return None
    key, burst = max(found, key=lambda pair: pair[0][0])
    return key[1], burst


def _burst_rows(found: tuple[str, Burst] | None, what: str = "burst") -> list[CardLine]:
    """The rows of a burst probe's burst, each figure named with ``what`` ("burst",
    "write burst")."""
    if found is None:
        return []
    name, burst = found
    spread = f"±{burst.spread:.1%}"
    digits = 0 if burst.unit == "IOPS" else 1
    return [
        CardLine(f"{what} ceiling", f"{burst.ceiling:,.{digits}f} {burst.unit}", spread, (name,)),
        CardLine(f"{what} length", f"{burst.seconds:,.1f} s from rest", "±1 s", (name,)),
        CardLine(
            f"{what} credits",
            f"{burst.credits:,.0f} {burst.amount} above the baseline",
            spread,
            (name,),
        ),
        CardLine(
            f"baseline after the {what}",
            f"{burst.baseline:,.{digits}f} {burst.unit}",
            spread,
            (name,),
        ),
    ]


def _buckets(found: RunFit, ran: bool) -> list[str]:
    """One bucket or two: the reads burst, and the write burst probe (``ran``) found a
    bucket of the writes' own, or none left."""
    notes = []
    if found.burst is not None and ran:
        notes.append(
            "burst: a bucket for reads and one for writes"
            if found.write_burst is not None
            else "burst: one bucket for reads and writes (the write burst probe found none left)"
        )
    if found.bytes_burst is not None and found.wrote_bytes_burst:
        notes.append(
            "MB/s burst: a bucket for reads and one for writes"
            if found.write_bytes_burst is not None
            else "MB/s burst: one bucket for reads and writes (the writes' MB/s burst probe"
            " found none left)"
        )
    return notes


@dataclass(frozen=True)
class RunFit:
    """What a limits run fitted: its probes, the model, and the burst probe's burst
    (with the probe's name) if it had one."""

    probes: list[Probe]
    model: LimiterModel
    burst: tuple[str, Burst] | None
    refill: Refill | None = None
    write_burst: tuple[str, Burst] | None = None
    """The write burst probe's burst (a bucket of the writes' own), if it had one."""
    unmeasured: str | None = None
    """Why the burst refill was not measured (None: it was, or there was no burst)."""
    wrote_burst: bool = False
    """The write burst probe ran."""
    bytes_burst: tuple[str, Burst] | None = None
    """The MB/s burst probe's burst (MB/s, MB), if it had one."""
    write_bytes_burst: tuple[str, Burst] | None = None
    """The writes' MB/s burst probe's burst (a MB/s bucket of the writes' own)."""
    wrote_bytes_burst: bool = False
    """The writes' MB/s burst probe ran."""


def fitted_model(run: RunRecord) -> RunFit:
    """The limits run's fit: what the card shows and what other runs of the same volume
    are explained with (:mod:`volbench.volume_limits`)."""
    short = starved(run)
    held = short | _cpu_held_rounds(run)
    bursts = {
        key: burst for key, burst in stored_bursts(run.series).items() if key not in held
    }  # a rate the CPU it got held varied with that CPU: not a bucket's
    probes = stored_probes(run, bursts, short)
    refill, unmeasured = stored_refill(run, bursts)
    writes = _probe_burst(bursts, WBURST.name)
    ran = any(r.test == WBURST.name for r in run.aggregate)
    model = fit(probes, two_buckets=writes is not None)
    return RunFit(
        probes,
        model,
        _probe_burst(bursts),
        refill,
        writes,
        unmeasured,
        ran,
        _bytes_burst(run, bursts, BBURST.name),
        _bytes_burst(run, bursts, WBBURST.name),
        any(r.test == WBBURST.name for r in run.aggregate),
    )


MATCHES_SHOWN = 3
"""Catalogue products named on the card as matching the model."""


def _no_limiter(model: LimiterModel) -> list[str]:
    """A "no limiter found" note when no direction met an IOPS cap, with the device's own
    ceilings (a MB/s level without an IOPS cap may be either: said so)."""
    sides = (("read", model.read), ("write", model.write))
    if any(side.iops_cap for _, side in sides):
        return []
    ceilings = [
        f"{name} {side.ceiling.value:,.0f} IOPS"
        + (" (fio was short of CPU: the host's CPUs)" if side.cpu_bound else "")
        for name, side in sides
        if side.ceiling
    ]
    if not ceilings:
        return []
    levels = [
        f"{name} {side.bytes_cap.value / MB:,.0f} MB/s" for name, side in sides if side.bytes_cap
    ]
    level = (
        f"; MB/s levelled at {' and '.join(levels)} (a MB/s cap, or the device's own bandwidth)"
        if levels
        else ""
    )
    return [
        f"no limiter found; the device's own ceiling is {' and '.join(ceilings)} at 4 KiB{level}"
    ]


def _size(run: RunRecord, unit: str) -> float:
    """The volume's size in a product's unit (GiB or GB): its ``size_gib`` label, else
    the target's capacity."""
    label = run.labels.get("size_gib")
    try:
        return float(label) if label is not None else run.target.capacity_bytes / _UNITS[unit]
    except ValueError:
        return run.target.capacity_bytes / _UNITS[unit]


_UNITS = {"GiB": float(1 << 30), "GB": 1e9, "TiB": float(1 << 40), "TB": 1e12}


def _matching(run: RunRecord, found: RunFit) -> list[str]:
    """The catalogue products (the built-in and the user's) at the volume's size whose
    every promised figure the model meets (:func:`volbench.analysis.model_promise.matches`)."""
    if _no_limiter(found.model):
        return []
    promises = []
    for product in catalogue.load().products:
        try:
            size = round(_size(run, product.size_unit), 3)
            promises.append(expect(product, size))
        except VolbenchError:
            continue  # a size out of its range, a product needing provisioned figures
    burst = found.burst[1] if found.burst else None
    best = matches(found.model, burst, promises, found.probes)
    if not best:
        return ["no catalogue product at this size promises what was measured"]
    names = [
        f"{m.product} at {m.size:g} {m.size_unit} ({m.figures} figures)"
        for m in best[:MATCHES_SHOWN]
    ]
    more = f" and {len(best) - MATCHES_SHOWN} more" if len(best) > MATCHES_SHOWN else ""
    return [f"matches the promise of {', '.join(names)}{more} (`volbench check --product`)"]


def _rest_span(run: RunRecord, before: int, after: int, rest_s: float) -> float:
    """The rest counted between rounds ``before`` (the burst probe) and ``after`` (the
    second probe): ``rest_s`` (s: the rest test's runtime and the gaps around it), or
    the time between the two rounds when their times show more than :data:`RESUMED_S`
    beyond it."""
    times = {r.round: r for r in run.rounds}
    end = times[before].ended_at if before in times else None
    start = times[after].started_at if after in times else None
    if not end or not start:
        return rest_s
    try:
        span = (datetime.fromisoformat(start) - datetime.fromisoformat(end)).total_seconds()
    except ValueError:  # not a time with its zone: the rest as planned
        return rest_s
    return span if span > rest_s + RESUMED_S else rest_s


def stored_refill(
    run: RunRecord, bursts: Mapping[tuple[int, str], Burst]
) -> tuple[Refill | None, str | None]:
    """How fast the burst probe's credits came back, from the second burst probe after
    the rest (:func:`volbench.analysis.burst_refill.refill_rate`), or why it was not
    measured (None, None: the burst probe saw no steady burst, so there was nothing to
    measure)."""
    newest = _newest(run)
    first = bursts.get((newest[BURST.name], BURST.name)) if BURST.name in newest else None
    if first is None or not first.steady:
        return None, None
    if REST.name not in newest or REFILL.name not in newest:
        return None, (
            "burst refill not measured: no rest and second burst probe ran (fio's summary"
            " of the burst probe's windows showed no bucket it emptied, the burst was too"
            " short to see a part of it come back, or the budget left no room)"
        )
    rest = next(r for r in run.aggregate if r.test == REST.name and r.round == newest[REST.name])
    planned = rest.workload.runtime_s or rest.runtime_ms / 1e3
    rest_s = _rest_span(run, newest[BURST.name], newest[REFILL.name], rested_s(planned))
    second = bursts.get((newest[REFILL.name], REFILL.name))
    if second is None or not second.steady:
        return None, (
            f"burst refill not measured: no steady burst in {REFILL.name} after the"
            f" {rest_s:,.0f} s rest"
        )
    return refill_rate(first, second, rest_s, (BURST.name, REST.name, REFILL.name)), None


def _refill_rows(refill: Refill | None) -> list[CardLine]:
    if refill is None:
        return []
    return [CardLine("burst refill", refill.sentence(), f"±{refill.spread:.1%}", refill.tests)]


def _refill_document(refill: Refill | None) -> dict[str, Any] | None:
    if refill is None:
        return None
    return {**dataclasses.asdict(refill), "full_s": refill.full_s}


def limits_card(run: RunRecord) -> Sheet:
    """The fitted limiter of ``run`` as a sheet, and as JSON in its document."""
    found = fitted_model(run)
    probes, model, burst, refill = found.probes, found.model, found.burst, found.refill
    lines = _burst_rows(burst) + _refill_rows(refill)
    lines += _burst_rows(found.write_burst, "write burst")
    lines += _burst_rows(found.bytes_burst, "MB/s burst")
    lines += _burst_rows(found.write_bytes_burst, "write MB/s burst")
    lines += _rows("read", model.read) + _rows("write", model.write)
    notes = [f"run {run.id} · limits · {run.status.value} · target {run.target.path}"]
    notes += _budgets(model) + _budget_spent(run, model) + _buckets(found, found.wrote_burst)
    notes += _no_limiter(model) + _matching(run, found)
    notes += [found.unmeasured] if found.unmeasured else []
    columns = (
        Column("figure", "Figure"),
        Column("value", "Fitted"),
        Column("spread", "Spread"),
        Column("tests", "Rests on"),
    )
    document = {
        "run": run.id,
        "model": dataclasses.asdict(model),
        "burst": dataclasses.asdict(burst[1]) if burst else None,
        "probes": unstructure(probes),
        "refill": _refill_document(refill),
        "write_burst": dataclasses.asdict(found.write_burst[1]) if found.write_burst else None,
        "bytes_burst": _asdict(found.bytes_burst),
        "write_bytes_burst": _asdict(found.write_bytes_burst),
    }
    rows = tuple(line.row() for line in lines)
    tests = tuple(line.tests for line in lines)
    return Sheet("what limits this volume", columns, rows, document, tuple(notes), row_tests=tests)


def _asdict(found: tuple[str, Burst] | None) -> dict[str, Any] | None:
    return dataclasses.asdict(found[1]) if found else None


def card_fit(card: Sheet) -> tuple[list[Probe], LimiterModel]:
    """The probes and the fitted model a limits card (:func:`limits_card`) shows, read
    back from its document; :class:`volbench.records.RecordError` when it holds none."""
    document = card.document
    probes = structure(document.get("probes"), list[Probe], "the limits card's probes")
    return probes, structure(document.get("model"), LimiterModel, "the limits card's model")
