"""volbench's result model: frozen dataclasses, pure data, no I/O.

Units are in the field names: ``_bytes``, ``_ns``, ``_ms``, ``_s``, ``_pct``,
``_per_s``. Bandwidth is always bytes per second; the presentation layer turns
it into MB/s (10^6) and MiB/s (2^20). fio's output records, where a run ran and a
run over time are in :mod:`volbench.fio_results`, :mod:`volbench.testbed` and
:mod:`volbench.timeline`, re-exported here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

from volbench.fio_results import DirectionResult as DirectionResult
from volbench.fio_results import DiskUtil as DiskUtil
from volbench.fio_results import FioOutput as FioOutput
from volbench.fio_results import IopsSamples as IopsSamples
from volbench.fio_results import JobResult as JobResult
from volbench.fio_results import LatencyStats as LatencyStats
from volbench.records import json_object, structure
from volbench.testbed import HostCache as HostCache
from volbench.testbed import HostInfo as HostInfo
from volbench.testbed import HostProbe as HostProbe
from volbench.testbed import NamedTarget as NamedTarget
from volbench.testbed import Place as Place
from volbench.testbed import PlaceRecord as PlaceRecord
from volbench.testbed import TargetIdentity as TargetIdentity
from volbench.testbed import TargetInfo as TargetInfo
from volbench.timeline import HostSample as HostSample
from volbench.timeline import LogSeries as LogSeries
from volbench.timeline import RoundTimes as RoundTimes
from volbench.timeline import Stall as Stall
from volbench.timeline import TracePart as TracePart

T = TypeVar("T")


class RW(StrEnum):
    """fio's ``rw=`` access patterns that volbench drives."""

    READ = "read"
    WRITE = "write"
    RANDREAD = "randread"
    RANDWRITE = "randwrite"
    RW = "rw"
    RANDRW = "randrw"

    @property
    def is_random(self) -> bool:
        return self.value.startswith("rand")

    @property
    def writes(self) -> bool:
        return self not in (RW.READ, RW.RANDREAD)

    @property
    def reads(self) -> bool:
        return self not in (RW.WRITE, RW.RANDWRITE)


class RunStatus(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


BUFFERED_PREFIX = "buffered."
"""Test names of buffered (page-cache) twins of direct workloads start with this."""


def split_cache_mode(test: str) -> tuple[str, str]:
    """A stored test name -> (cache mode "direct" | "buffered", the name without it)."""
    if test.startswith(BUFFERED_PREFIX):
        return "buffered", test[len(BUFFERED_PREFIX) :]
    return "direct", test


DIRECTIONS: tuple[str, ...] = ("read", "write", "trim", "mixed")
"""fio's directions; ``mixed`` appears with ``unified_rw_reporting``."""


@dataclass(frozen=True)
class Workload:
    """One fio job: what to do to the target, and for how long.

    ``bssplit`` is a tuple of (block size in bytes, percent) pairs; when given it
    replaces ``bs_bytes``. ``rwmixread_pct`` applies to ``rw``/``randrw`` only.
    ``size_bytes`` and ``offset_bytes`` bound the active range on the target
    (``None`` size = the whole target from the offset). ``rate_iops`` and
    ``rate_bytes_per_s`` are per job, as in fio.
    """

    name: str
    rw: RW
    bs_bytes: int = 4096
    bssplit: tuple[tuple[int, int], ...] = ()
    rwmixread_pct: int | None = None
    iodepth: int = 1
    numjobs: int = 1
    direct: bool = True
    ioengine: str | None = None
    size_bytes: int | None = None
    offset_bytes: int = 0
    runtime_s: float | None = 60.0
    ramp_time_s: float = 0.0
    time_based: bool = True
    random_distribution: str | None = None
    rate_iops: int | None = None
    rate_bytes_per_s: int | None = None
    refill_buffers: bool = True
    cpus_allowed: str | None = None  # fio cpus_allowed, e.g. "1" or "0-3"
    random_pct: int | None = None  # fio percentage_random, for randread/randwrite/randrw
    align_bytes: int | None = None  # fio blockalign (IOMeter's "align I/Os on")
    thinktime_s: float | None = None  # fio thinktime: idle this long ...
    thinktime_iotime_s: float | None = None  # ... after this much I/O time (fio 3.28+)
    write_bssplit: tuple[tuple[int, int], ...] = ()  # writes' own bssplit (fio bssplit=R,W)
    write_random_pct: int | None = None  # writes' own percentage_random (fio: R,W)
    read_iolog: str | None = None  # fio read_iolog: replay this iolog instead
    replay_speed_pct: int | None = None  # fio replay_time_scale: 200 = twice the rate
    replay_no_stall: bool = False  # fio replay_no_stall: the iolog as fast as possible
    job_text: str | None = None
    """A test of a user's job file (``volbench run job``): its jobs as fio runs them
    (:mod:`volbench.fio.job_group`), instead of the options above, which then describe
    them (:func:`volbench.plans.jobs.tests.summary`)."""

    @property
    def outstanding_io(self) -> int:
        """Configured outstanding I/Os: iodepth x numjobs."""
        return self.iodepth * self.numjobs

    @property
    def duration_s(self) -> float:
        """Planned wall time of this job in seconds (ramp + runtime)."""
        return self.ramp_time_s + (self.runtime_s or 0.0)


@dataclass(frozen=True)
class TestResult:
    """One test of a plan (one stonewall group of fio jobs), merged across jobs.

    IOPS and bandwidth are summed over the group's jobs; latency percentiles are
    recomputed from the merged json+ bins (never averaged).
    """

    name: str
    directions: dict[str, DirectionResult]
    usr_cpu_pct: float
    sys_cpu_pct: float
    runtime_ms: float
    jobs: int
    error: int = 0
    hostname: str | None = None  # the place (see :class:`Place`) of a per-place result

    @property
    def iops(self) -> float:
        return sum(d.iops for d in self.directions.values())

    @property
    def bw_bytes_per_s(self) -> float:
        return sum(d.bw_bytes_per_s for d in self.directions.values())


@dataclass(frozen=True)
class RunSettings:
    """How a run was set up, as recorded with it (the store's ``runs.settings`` JSON).

    The fields every plan may have are typed here. ``options`` holds the plan's own
    recorded options, JSON-ready, each under a key of its own (``quick``, ``sweep``,
    ``pts`` ...); :meth:`options_as` and :func:`volbench.records.section` read them
    back as the plan's typed record, checking every value.
    """

    ioengine: str | None = None
    """The ioengine fio used (several, comma-separated, for an imported output)."""
    logs_dir: str | None = None
    """The run's scratch folder of fio's files (what it keeps is in the store)."""
    planned: tuple[Workload, ...] | None = None
    """The tests in run order, one fio process each (None: not recorded, e.g. PTS)."""
    adaptive: bool = False
    """More tests are chosen from the results (a find-max sweep)."""
    non_compliant_reasons: tuple[str, ...] = ()
    """Why the run departs from its standard (PTS), one sentence each."""
    places: tuple[PlaceRecord, ...] = ()
    """The targets measured at once (empty: one target, the run's own)."""
    hosts: tuple[HostProbe, ...] = ()
    """The ``fio --server`` hosts of those places, as they answered."""
    keep_going: bool = False
    """A lost host ends its share, not the run."""
    solo: bool = False
    """Each place was also measured alone."""
    named: tuple[NamedTarget, ...] = ()
    """The files and devices a user's job file names (``volbench run job``), each
    checked before every round and held while the run goes on (empty: the run's
    target, or its places)."""
    options: Mapping[str, Any] = field(default_factory=dict)

    def options_as(self, kind: type[T], what: str = "settings") -> T:
        """All the plan's own options as one ``kind`` record (one field per key);
        :class:`volbench.records.RecordError` naming ``what`` when they do not fit."""
        return structure(dict(self.options), kind, what)

    def record(self) -> dict[str, Any]:
        """The JSON object the store keeps and documents show: the plan's options and
        every typed field (the same keys for every run)."""
        typed = json_object(dataclasses.replace(self, options={}))
        del typed["options"]
        return {**self.options, **typed}

    @classmethod
    def from_record(cls, record: Mapping[str, Any], what: str = "settings") -> RunSettings:
        """The stored JSON object back; :class:`volbench.records.RecordError` naming
        ``what`` when a typed field does not fit."""
        known = _SETTINGS_FIELDS & set(record)
        typed = structure({k: record[k] for k in known}, cls, what)
        return dataclasses.replace(
            typed, options={k: v for k, v in record.items() if k not in known}
        )


@dataclass(frozen=True)
class RunRecord:
    """A stored run as read back from the store."""

    id: int
    plan: str
    status: RunStatus
    started_at: str
    ended_at: str | None
    target: TargetInfo
    host: HostInfo
    labels: dict[str, str]
    settings: RunSettings
    error: str | None = None
    non_compliant: bool = False
    results: tuple[StoredResult, ...] = ()
    raw_outputs: tuple[str, ...] = ()
    stalls: tuple[Stall, ...] = ()
    rounds: tuple[RoundTimes, ...] = ()
    series: tuple[LogSeries, ...] = ()
    trace: tuple[TracePart, ...] = ()
    """A capture run's block I/O trace, as stored (with the raw outputs)."""
    uuid: str = ""
    """The run's identity in every store (``id`` is one store's number): a run moved
    between stores in a bundle keeps it, so importing it twice adds it once."""

    @property
    def aggregate(self) -> tuple[StoredResult, ...]:
        """The run's own results, one row per round, test and direction: on several
        targets at once their aggregate, without each place's share (rows whose
        :attr:`StoredResult.place` is set). Checks and fingerprints read these."""
        return tuple(r for r in self.results if r.place is None)

    def setup(self, kind: type[T]) -> T:
        """The run's plan options as its plan's ``kind`` record (:meth:`RunSettings.options_as`);
        :class:`volbench.records.RecordError` naming the run when they do not fit."""
        return self.settings.options_as(kind, f"run {self.id}: its stored settings")

    def logs_dir(self, runs_dir: Path) -> Path:
        """The scratch folder of this run's fio files (job files, logs as fio writes
        them; what a run keeps is in the store): as recorded in its settings
        (``logs_dir``), else where runs recorded before that were (``runs_dir/ID``)."""
        recorded = self.settings.logs_dir
        return Path(recorded) if recorded is not None else runs_dir / str(self.id)


_SETTINGS_FIELDS = frozenset(f.name for f in dataclasses.fields(RunSettings)) - {"options"}


@dataclass(frozen=True)
class StoredWorkload:
    """A test's workload as stored with its results: the :class:`Workload` volbench
    asked fio for (every field), or what an imported fio output states (None: not
    stated). ``places``: on how many targets at once the test ran (its aggregate's
    outstanding I/O is iodepth x numjobs x places)."""

    name: str | None = None
    rw: str | None = None
    bs_bytes: int | None = None
    bssplit: tuple[tuple[int, int], ...] = ()
    rwmixread_pct: int | None = None
    iodepth: int | None = None
    numjobs: int | None = None
    direct: bool | None = None
    ioengine: str | None = None
    size_bytes: int | None = None
    offset_bytes: int | None = None
    runtime_s: float | None = None
    ramp_time_s: float | None = None
    time_based: bool | None = None
    random_distribution: str | None = None
    rate_iops: int | None = None
    rate_bytes_per_s: int | None = None
    refill_buffers: bool | None = None
    cpus_allowed: str | None = None
    random_pct: int | None = None
    align_bytes: int | None = None
    thinktime_s: float | None = None
    thinktime_iotime_s: float | None = None
    write_bssplit: tuple[tuple[int, int], ...] = ()
    write_random_pct: int | None = None
    read_iolog: str | None = None
    replay_speed_pct: int | None = None
    replay_no_stall: bool | None = None
    places: int = 1

    @classmethod
    def of(cls, workload: Workload, places: int = 1) -> StoredWorkload:
        """The record of a workload volbench ran (on ``places`` targets at once); a job
        file's jobs (``job_text``) are in the run's settings, not in every result row."""
        values = {f.name: getattr(workload, f.name) for f in dataclasses.fields(workload)}
        del values["job_text"]
        return cls(**{**values, "rw": workload.rw.value, "places": places})

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> StoredWorkload:
        """The stored JSON record back (keys it does not know are left out; a value of
        the wrong type reads as not stated)."""
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            value = record.get(f.name)
            if f.name in ("bssplit", "write_bssplit"):
                pairs = value if isinstance(value, list | tuple) else ()
                values[f.name] = tuple(
                    (int(p[0]), int(p[1]))
                    for p in pairs
                    if isinstance(p, list | tuple) and len(p) == 2
                )
            elif f.name == "places":
                values[f.name] = value if isinstance(value, int) and value > 0 else 1
            elif value is None or isinstance(value, _RECORD_TYPES[f.name]):
                values[f.name] = value
        return cls(**values)

    def record(self) -> dict[str, Any]:
        """JSON-ready data (what the store keeps and exports show)."""
        record = dataclasses.asdict(self)
        record["bssplit"] = [list(pair) for pair in self.bssplit]
        record["write_bssplit"] = [list(pair) for pair in self.write_bssplit]
        return record


_RECORD_TYPES: dict[str, type | tuple[type, ...]] = {
    "name": str,
    "rw": str,
    "bs_bytes": int,
    "rwmixread_pct": int,
    "iodepth": int,
    "numjobs": int,
    "direct": bool,
    "ioengine": str,
    "size_bytes": int,
    "offset_bytes": int,
    "runtime_s": (int, float),
    "ramp_time_s": (int, float),
    "time_based": bool,
    "random_distribution": str,
    "rate_iops": int,
    "rate_bytes_per_s": int,
    "refill_buffers": bool,
    "cpus_allowed": str,
    "random_pct": int,
    "align_bytes": int,
    "thinktime_s": (int, float),
    "thinktime_iotime_s": (int, float),
    "write_random_pct": int,
    "read_iolog": str,
    "replay_speed_pct": int,
    "replay_no_stall": bool,
}
"""The JSON types each stored workload field may have."""


@dataclass(frozen=True)
class StoredResult:
    """One normalised result row: one test, one direction."""

    round: int
    test: str
    direction: str
    workload: StoredWorkload
    iops: float
    bw_bytes_per_s: float
    io_bytes: int
    runtime_ms: float
    lat_kind: str | None
    lat_mean_ns: float | None
    lat_min_ns: float | None
    lat_max_ns: float | None
    lat_stddev_ns: float | None
    lat_p50_ns: float | None
    lat_p90_ns: float | None
    lat_p99_ns: float | None
    lat_p999_ns: float | None
    lat_p9999_ns: float | None
    usr_cpu_pct: float
    sys_cpu_pct: float
    jobs: int
    hostname: str | None = None  # fio's host, or the place of a multi-target run's share
    lat_total_mean_ns: float | None = None
    """fio's mean total latency (submission to completion) in ns, whichever kind
    ``lat_kind`` is: what Little's law needs (None when fio gave none)."""
    error: int | None = None
    """fio's ``error`` of the test's jobs (an errno of the machine fio ran on: 84 is
    EILSEQ on Linux, 42 on Windows), the first nonzero one: the job stopped there and
    its figures are what it measured until then. 0: none; None: not recorded (rows
    stored before the store kept it, schema version 9)."""

    @property
    def place(self) -> str | None:
        """The place (label) whose share of a multi-target round this row is; None for
        the run's own result (one target, or the aggregate of every place)."""
        return self.hostname

    @property
    def total_latency_ns(self) -> float | None:
        """Mean total latency (ns): stored beside the reported kind, or the reported mean
        when that is the total (rows stored before the column existed)."""
        if self.lat_total_mean_ns is not None:
            return self.lat_total_mean_ns
        return self.lat_mean_ns if self.lat_kind == "lat" else None

    @property
    def outstanding_io(self) -> int:
        """Configured outstanding I/Os behind the row: iodepth x numjobs, times the
        places an aggregate ran on (its workload's ``places``, 1 when not recorded)."""
        per_place = (self.workload.iodepth or 1) * (self.workload.numjobs or 1)
        return per_place * (self.workload.places if self.place is None else 1)
