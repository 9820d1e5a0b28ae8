"""Every test of a stored run checked for the ways a benchmark fools its reader: the one
service every view calls (:func:`validity_of`).

For each test it builds the context every check reads (:class:`TestFacts`: fio's rows
and workload, the device's counters over the test's own seconds, the host samples, the
per-second rates, fio's job CPU, the target, a cache in front of it the run records)
and runs each check of :data:`CHECKS` on it, in order. A check that cannot run on a
test (an imported output has no samples and no logs) says why in the test's
``unchecked``.

Where a check's data come from:

- fio's rows: the run's results (of a run on several places: their aggregate);
- the device's counters and the host's CPU: the samples stored with the round
  (analysis/host_series.py), read over the test's timed seconds placed on their clock
  (analysis/test_windows.py, analysis/device_window.py); a round sampled on several
  hosts at once, or not at all, has none;
- fio's job CPU and its times: the round's raw output (fio/job_times.py);
- the per-second rates: fio's logs stored with the round (analysis/stored_bursts.py);
- a cache in front of the volume: its place's record (a lab guest's disk: QEMU's cache
  mode), else the run's settings, ``options["cache_mode"]`` (:func:`front_cache`);
- what the place's medium can do, and what was written on its volume before (the runs
  stored on it): :class:`~volbench.analysis.validity_facts.Known`, from the view (a
  catalogue product's stated latency; the store).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from volbench.analysis import (
    validity_cache,
    validity_mixed,
    validity_shared,
    validity_starved,
    validity_unwritten,
)
from volbench.analysis.device_window import DeviceCount, FioRate, device_count, inside
from volbench.analysis.host_series import RoundHost, round_hosts
from volbench.analysis.limit_evidence import stored_test
from volbench.analysis.stored_bursts import test_series
from volbench.analysis.test_windows import Window, timed_window
from volbench.analysis.validity import Checked, Mark, Validity
from volbench.analysis.validity_facts import FrontCache, Known, TestFacts
from volbench.analysis.written_ranges import written_before
from volbench.fio.job_times import JobTimes, job_times
from volbench.model import RunRecord, StoredResult
from volbench.timeline import RoundTimes

Check = Callable[[TestFacts], Checked]
"""A check: a pure function of one test's facts."""

CHECKS: tuple[Check, ...] = (
    validity_cache.check,
    validity_unwritten.check,
    validity_shared.check,
    validity_mixed.check,
    validity_starved.check,
)
"""Every check, in the order their marks are listed."""

IMPORTED = "import"
"""The plan of a run imported from fio's output (plans/imported/importing.py)."""
CACHE_MODE = "cache_mode"
"""The run's settings key recording a cache in front of its volume (:func:`front_cache`)."""

NOTHING_KNOWN = Known()
"""What a view knows of the place when it knows nothing."""


@dataclass
class _Decoded:
    """The job times of one run's raw outputs, decoded as asked: ``outputs`` and
    ``rounds`` are held, so their ids (the key) stay theirs while this lives."""

    outputs: tuple[str, ...]
    rounds: tuple[RoundTimes, ...]
    by_round: dict[int, str]
    times: dict[int, JobTimes] = field(default_factory=dict)


_DECODED: dict[tuple[int, int], _Decoded] = {}


def round_times(run: RunRecord, round_no: int) -> JobTimes:
    """:func:`job_times` of round ``round_no``'s raw output of ``run`` (empty when none is
    stored; its jobs' CPU too: the limit verdicts'), decoded once per output however
    many views ask: the validity marks and the limits sheet each read every round's
    (an IOPS cell's output is 80-150 kB, a 20,000-job output 90 MB). Kept while
    ``run`` lives (a copy of it by :func:`dataclasses.replace` shares its outputs)."""
    key = (id(run.raw_outputs), id(run.rounds))
    found = _DECODED.get(key)
    if found is None:
        by_round = {t.round: raw for t, raw in zip(run.rounds, run.raw_outputs, strict=False)}
        found = _DECODED[key] = _Decoded(run.raw_outputs, run.rounds, by_round)
        weakref.finalize(run, _DECODED.pop, key, None)
    if round_no not in found.times:
        found.times[round_no] = job_times(found.by_round.get(round_no, ""))
    return found.times[round_no]


def front_cache(run: RunRecord) -> FrontCache | None:
    """The cache in front of the run's volume: as its place records it (a lab guest's
    disk: QEMU's cache mode, :attr:`volbench.model.TargetInfo.host_cache`; of a run on
    several places, the first whose cache holds its image), else as its settings record
    it under ``options["cache_mode"]``: QEMU's cache mode of the disk fio measured
    (``"writeback"``, ``"writethrough"``, ``"unsafe"``, ``"none"``, ``"directsync"``), or an
    object ``{"mode": ..., "what": ..., "bytes": ...}`` naming the cache and its size
    (bytes; for QEMU's modes that use it, the host's page cache: its memory). None when
    the run records none."""
    targets = [p.target for p in run.settings.places if p.target is not None] or [run.target]
    held = [t.host_cache for t in targets if t.host_cache and t.host_cache.size_bytes]
    if held:
        return FrontCache(held[0].what, held[0].mode, held[0].size_bytes)
    recorded: Any = run.settings.options.get(CACHE_MODE)
    if isinstance(recorded, str):
        recorded = {"mode": recorded}
    if not isinstance(recorded, Mapping) or not isinstance(recorded.get("mode"), str):
        return None
    mode = recorded["mode"]
    size = recorded.get("bytes")
    what = recorded.get("what")
    if not isinstance(what, str):
        what = f"QEMU's cache={mode} on the disk: the host's page cache"
    return FrontCache(
        what,
        mode,
        size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None,
    )


def _results(run: RunRecord) -> dict[tuple[int, str], list[StoredResult]]:
    """The run's own rows by (round, test) (of a run on places: their aggregate)."""
    rows = run.aggregate if run.settings.places else run.results
    found: dict[tuple[int, str], list[StoredResult]] = {}
    for row in rows:
        found.setdefault((row.round, row.test), []).append(row)
    return found


def _rate(test: str, rows: Sequence[StoredResult], window: Window) -> FioRate:
    runtime = max(r.runtime_ms for r in rows) / 1000 or 1.0
    read = sum(r.io_bytes for r in rows if r.direction == "read")
    written = sum(r.io_bytes for r in rows if r.direction == "write")
    ios = sum(r.iops * r.runtime_ms / 1000 for r in rows)
    return FioRate(test, window, read / runtime, written / runtime, ios / runtime)


def _windows(
    run: RunRecord, tests: Mapping[tuple[int, str], list[StoredResult]]
) -> tuple[dict[tuple[int, str], Window], dict[int, JobTimes]]:
    """Each test's timed part on the samples' clock, where it can be placed."""
    ended = {t.round: t.ended_at for t in run.rounds}
    names: dict[int, list[str]] = {}
    for round_no, test in tests:
        names.setdefault(round_no, []).append(test)
    times = {r: round_times(run, r) for r in names}
    found = {}
    for (round_no, test), rows in tests.items():
        runtime = max(r.runtime_ms for r in rows) / 1000
        ramp = rows[0].workload.ramp_time_s or 0.0
        alone = len(names[round_no]) == 1
        window = timed_window(test, runtime, ramp, times[round_no], alone, ended.get(round_no))
        if window is not None:
            found[(round_no, test)] = window
    return found, times


def _device(
    key: tuple[int, str],
    host: RoundHost | None,
    windows: Mapping[tuple[int, str], Window],
    tests: Mapping[tuple[int, str], list[StoredResult]],
    round_tests: Sequence[str],
    imported: bool,
) -> tuple[DeviceCount | None, str | None]:
    """The device count of test ``key`` (one of its round's ``round_tests``), or why
    there is none."""
    if imported:
        return None, "no device samples: an output imported from fio"
    if host is None or not host.readings:
        return None, "the round was not sampled (VOLBENCH_SAMPLER=off, or on several hosts)"
    if all(s.iops is None for s in host.readings):
        return None, "the round's samples hold no device (a target on no block device)"
    window = windows.get(key)
    if window is None:
        return None, "the test's seconds cannot be placed on the samples' clock"
    own = _rate(key[1], tests[key], window)
    others = [
        _rate(test, tests[(key[0], test)], windows[(key[0], test)])
        for test in round_tests
        if test != key[1] and (key[0], test) in windows
    ]
    found = device_count(host.readings, own, others)
    return (None, found) if isinstance(found, str) else (found, None)


def facts_of_tests(run: RunRecord, known: Known = NOTHING_KNOWN) -> list[TestFacts]:
    """The facts of every test of ``run``, in the order stored (module docstring)."""
    tests = _results(run)
    imported = run.plan == IMPORTED
    hosts = round_hosts(run.series)
    rates = test_series(run.series)
    windows, times = _windows(run, tests)
    cache = front_cache(run)
    written = (
        written_before(known.volume, run.target.capacity_bytes, run.id, {r for r, _ in tests})
        if known.volume is not None
        else {}
    )
    by_round: dict[int, list[str]] = {}
    for round_no, name in tests:
        by_round.setdefault(round_no, []).append(name)
    found = []
    for key, rows in tests.items():
        round_no, name = key
        host = hosts.get(round_no)
        device, note = _device(key, host, windows, tests, by_round[round_no], imported)
        window = windows.get(key)
        readings = host.readings if host else ()
        host_note = None
        if window is not None and readings:  # its own whole seconds: no start, exit or ramp
            readings = tuple(s for _, _, s in inside(readings, window))
            if not readings:
                host_note = (
                    f"the once-a-second samples hold no whole second of its"
                    f" {window.seconds:,.1f} s timed part (less {window.margin_s:g} s at"
                    f" either end: {window.how})"
                )
        round_times = times.get(round_no)
        cpu = round_times.cpu_pct.get(name, ()) if round_times else ()
        series = rates.get(key, [])
        found.append(
            TestFacts(
                round=round_no,
                test=name,
                rows=tuple(rows),
                workload=rows[0].workload,
                target=run.target,
                measured=stored_test(rows, cpu),
                memory_bytes=run.host.memory_bytes or None,
                imported=imported,
                device=device,
                device_note=note,
                host=readings,
                host_note=host_note,
                sampled=bool(host and host.readings),
                cpu_quota_cores=host.cpu_quota_cores if host else None,
                throttled_pct=host.throttled_pct if host else None,
                rates=tuple(series),
                rates_note=None if series else _no_rates(imported),
                front_cache=cache,
                known=known,
                written=written.get(round_no),
            )
        )
    return found


def _no_rates(imported: bool) -> str:
    if imported:
        return "no per-second log: an output imported from fio"
    return "no per-second log stored with the test"


def validity_of(
    run: RunRecord, known: Known = NOTHING_KNOWN, checks: Sequence[Check] = CHECKS
) -> dict[tuple[int, str], Validity]:
    """Every test's :class:`Validity` by (round, test), each check of ``checks`` run on
    it (see the module docstring)."""
    found = {}
    for facts in facts_of_tests(run, known):
        marks: list[Mark] = []
        unchecked: list[str] = []
        for check in checks:
            result = check(facts)
            marks += result.marks
            unchecked += result.unchecked
        found[(facts.round, facts.test)] = Validity(
            facts.round, facts.test, tuple(marks), tuple(dict.fromkeys(unchecked))
        )
    return found
