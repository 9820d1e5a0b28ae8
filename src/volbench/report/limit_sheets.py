"""What limited each test of a stored run: the verdicts (analysis/run_limits.py) as the
summary sheet of ``volbench show`` (beside IOPS: the host and device figures sampled
while the test ran) and the full sheet of ``volbench explain`` (every sentence of
evidence), both with the same JSON rows.

Every figure comes from the store: the result rows (fio's figures), fio's raw output
of the round (each job's usr/sys CPU: fio/job_times.py), the stalls, and the host
series stored with the round (analysis/host_series.py). An imported run has no host
samples: its verdicts rest on fio's figures alone and say what would tell more.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

from volbench.analysis.host_series import RoundHost, round_hosts
from volbench.analysis.limit_evidence import KnownCap, MeasuredTest, stored_test
from volbench.analysis.run_limits import FactsOfTest, Family, TestVerdict, run_verdicts
from volbench.analysis.run_validity import round_times
from volbench.analysis.stored_bursts import stored_bursts
from volbench.model import RunRecord, StoredResult, StoredWorkload
from volbench.plans.firsttouch import PASSES
from volbench.report.fleet_sheets import aggregate_run
from volbench.report.rows import Row, documents, number
from volbench.report.sampled_note import sampled_note
from volbench.report.sheet import Column, Sheet, fmt_count

LIMITS_SCHEMA = "volbench.limits/1"

FIRSTTOUCH = "firsttouch"
"""The first-touch plan (plans/firsttouch.py): its first pass is read again."""


def _mean(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.fmean(known) if known else None


def _measured(results: Sequence[StoredResult], cpu: tuple[float, ...]) -> MeasuredTest:
    """A test's figures from its result rows (:func:`stored_test`)."""
    return stored_test(results, cpu)


ALONE = {"randrw": ("randread", "randwrite"), "rw": ("read", "write")}
"""fio's mixed patterns and the same pattern reading alone and writing alone
(``readwrite`` is ``rw``)."""
PURE = {"read", "write", "randread", "randwrite", "trim", "randtrim"}


def _family(work: StoredWorkload, rw: str | None = None) -> Family:
    """A workload apart from its queue depth and job count; a single-direction pattern
    without its read share (PTS records 100 or 0, other plans none)."""
    rw = rw or work.rw
    return (
        rw,
        work.bs_bytes,
        work.bssplit,
        None if rw in PURE else work.rwmixread_pct,
        work.direct,
        work.ioengine,
        work.random_distribution,
        work.rate_iops,
        work.rate_bytes_per_s,
    )


def _alone(work: StoredWorkload) -> tuple[Family, Family] | None:
    """A mixed workload's families reading alone and writing alone (None: not mixed)."""
    pair = ALONE.get("rw" if work.rw == "readwrite" else work.rw or "")
    return None if pair is None else (_family(work, pair[0]), _family(work, pair[1]))


def _rate(value: int | None) -> float | None:
    return float(value) if value else None


def facts_of(run: RunRecord) -> list[FactsOfTest]:
    """Every test of ``run`` (of a run on several places: the aggregates), in order."""
    run = aggregate_run(run)
    hosts = round_hosts(run.series)
    bursts = stored_bursts(run.series)
    by_test: dict[tuple[int, str], list[StoredResult]] = {}
    for result in run.results:
        by_test.setdefault((result.round, result.test), []).append(result)
    cpu_of: dict[int, dict[str, tuple[float, ...]]] = {}
    found = []
    for (round_no, name), results in by_test.items():
        if round_no not in cpu_of:
            cpu_of[round_no] = round_times(run, round_no).cpu_pct
        work = results[0].workload
        stalls = [s.seconds for s in run.stalls if s.round == round_no and s.test == name]
        directions = {r.direction for r in results if r.iops > 0}
        found.append(
            FactsOfTest(
                round=round_no,
                measured=_measured(results, cpu_of[round_no].get(name, ())),
                family=_family(work),
                reads="read" in directions or (not directions and (work.rw or "").endswith("read")),
                writes="write" in directions or "trim" in directions,
                stall_s=max(stalls, default=0.0),
                host=hosts.get(round_no),
                read_again=PASSES[1] if run.plan == FIRSTTOUCH and name == PASSES[0] else None,
                burst=bursts.get((round_no, name)),
                alone=_alone(work),
                rate=(_rate(work.rate_iops), _rate(work.rate_bytes_per_s)),
            )
        )
    return found


def limits(run: RunRecord, caps: Sequence[KnownCap] = ()) -> list[TestVerdict]:
    """The verdict of every test of ``run``; ``caps``: limits from outside the run
    (a catalogue product's or an instance's, as ``volbench check`` gives them)."""
    return run_verdicts(facts_of(run), caps)


class HostFigures(TypedDict, total=False):
    """The host and device figures of a test's round, as its JSON row nests them (none
    for a round without host samples): means over the samples, CPU and device busy in
    %, in-flight requests, fio's cores and threads waiting for a CPU, memory pressure
    in % (PSI ``some``), the cgroup's CPU quota in cores and share of periods throttled
    in %, the device's hardware queues, its ``cap_*`` facts, the drive's °C."""

    samples: int
    cpu_busy_pct: float | None
    device_busy_pct: float | None
    device_in_flight: float | None
    fio_cpu_cores: float | None
    fio_wait_threads: float | None
    memory_pressure_pct: float | None
    cpu_quota_cores: float | None
    quota_throttled_pct: float | None
    hw_queues: float | None
    caps: dict[str, float]
    temperature_before_c: float | None
    temperature_after_c: float | None


def _host_figures(host: RoundHost | None) -> HostFigures:
    """The host and device figures of a test's round (means over its samples)."""
    if host is None:
        return {}
    readings = host.readings
    temps = host.temperatures()
    return {
        "samples": len(readings),
        "cpu_busy_pct": _mean([_mean(r.cpu_busy_pct) for r in readings]),
        "device_busy_pct": _mean([r.device_busy_pct for r in readings]),
        "device_in_flight": _mean([r.in_flight for r in readings]),
        "fio_cpu_cores": _mean([r.fio_cpu_cores for r in readings]),
        "fio_wait_threads": _mean([r.fio_wait_threads for r in readings]),
        "memory_pressure_pct": _mean([r.memory_some_pct for r in readings]),
        "cpu_quota_cores": host.cpu_quota_cores,
        "quota_throttled_pct": host.throttled_pct,
        "hw_queues": host.facts.get("dev_hwq"),
        "caps": {k: v for k, v in host.facts.items() if k.startswith("cap_")},
        "temperature_before_c": temps.before_c if temps else None,
        "temperature_after_c": temps.after_c if temps else None,
    }


@dataclass(frozen=True, eq=False)
class LimitRow(Row):
    """A test's limit verdict as a row: fio's figures of the test (IOPS, bytes/s, mean
    latency in ns, queue, each job's CPU in %), the limit, its evidence (``why``: the
    first sentence), other limits also seen, the host figures of its round and three
    of them again at the top (CPUs and device busy in %, fio's cores)."""

    round: int
    test: str
    iops: float
    read_iops: float | None
    write_iops: float | None
    bw_bytes_per_s: float
    lat_mean_ns: float | None
    iodepth: int
    numjobs: int
    job_cpu_pct: list[float]
    limit: str
    evidence: list[str]
    why: str | None
    also: list[str]
    host: HostFigures
    cpu_busy_pct: float | None
    device_busy_pct: float | None
    fio_cpu_cores: float | None


def limit_rows(found: Sequence[TestVerdict]) -> list[LimitRow]:
    """One row per test: its figures, verdict, evidence and samples."""
    rows = []
    for item in found:
        measured = item.facts.measured
        figures = _host_figures(item.facts.host)
        rows.append(
            LimitRow(
                round=item.facts.round,
                test=measured.name,
                iops=measured.iops,
                read_iops=measured.read_iops,
                write_iops=measured.write_iops,
                bw_bytes_per_s=measured.bw_bytes_per_s,
                lat_mean_ns=measured.lat_mean_ns,
                iodepth=measured.iodepth,
                numjobs=measured.numjobs,
                job_cpu_pct=list(measured.job_cpu_pct),
                limit=item.verdict.limit.value,
                evidence=list(item.verdict.evidence),
                why=item.verdict.evidence[0] if item.verdict.evidence else None,
                also=[limit.value for limit in item.verdict.also],
                host=figures,
                cpu_busy_pct=figures.get("cpu_busy_pct"),
                device_busy_pct=figures.get("device_busy_pct"),
                fio_cpu_cores=figures.get("fio_cpu_cores"),
            )
        )
    return rows


def _pct(value: object) -> str:
    return f"{number(value):.0f}%"


def _cores(value: object) -> str:
    return f"{number(value):.2f}"


SUMMARY_COLUMNS = (
    Column("round", "Round", numeric=True),
    Column("test", "Test"),
    Column("iops", "IOPS", fmt_count, numeric=True),
    Column("cpu_busy_pct", "CPUs busy", _pct, numeric=True),
    Column("fio_cpu_cores", "fio cores", _cores, numeric=True),
    Column("device_busy_pct", "Device busy", _pct, numeric=True),
    Column("limit", "Limited by"),
    Column("why", "Why"),
)


def _document(run: RunRecord, rows: Sequence[LimitRow]) -> dict[str, object]:
    return {"schema": LIMITS_SCHEMA, "run": run.id, "tests": documents(rows)}


def _sampled_note(run: RunRecord) -> str:
    """Which hosts were sampled, or exactly why not (report/sampled_note.py)."""
    return sampled_note(run)


def limits_sheet(run: RunRecord, caps: Sequence[KnownCap] = ()) -> Sheet | None:
    """The summary of what limited each test (``volbench show``); None without tests."""
    rows = limit_rows(limits(run, caps))
    if not rows:
        return None
    return Sheet(
        title=f"volbench run {run.id}: what limited each test",
        columns=SUMMARY_COLUMNS,
        rows=tuple(documents(rows)),  # plain, as the run's JSON lists them (views.report_for)
        document=_document(run, rows),
        notes=(
            _sampled_note(run),
            f"all the evidence of each verdict: volbench explain {run.id}",
        ),
    )


EXPLAIN_COLUMNS = (
    Column("round", "Round", numeric=True),
    Column("test", "Test"),
    Column("iops", "IOPS", lambda v: "" if v == "" else fmt_count(v), numeric=True),
    Column("limit", "Limited by"),
    Column("evidence", "Evidence"),
)


@dataclass(frozen=True, eq=False)
class EvidenceLine(Row):
    """A line of ``volbench explain``'s table: a sentence of a test's evidence, the
    test's round, name, IOPS and limit on its first line only (``""`` below it)."""

    round: int | str
    test: str
    iops: float | str
    limit: str
    evidence: str


def explain_sheet(run: RunRecord, caps: Sequence[KnownCap] = ()) -> Sheet:
    """Every test's verdict with all its evidence, a line of the table per sentence
    (``volbench explain``); the JSON has one row per test."""
    rows = limit_rows(limits(run, caps))
    lines: list[EvidenceLine] = []
    for row in rows:
        also = [f"also seen: {', '.join(row.also)}"] if row.also else []
        for index, sentence in enumerate([*row.evidence, *also]):
            if index == 0:
                lines.append(EvidenceLine(row.round, row.test, row.iops, row.limit, sentence))
            else:
                lines.append(EvidenceLine("", "", "", "", sentence))
    notes = [_sampled_note(run)]
    if not rows:
        notes.append(f"run {run.id} has no stored test results")
    return Sheet(
        title=f"volbench run {run.id} ({run.plan}): what limited each test",
        columns=EXPLAIN_COLUMNS,
        rows=tuple(lines),
        document=_document(run, rows),
        notes=tuple(notes),
    )
