"""What fio reported of one run of a job file: each direction's figures and latency
(json+ percentiles and bins), each job's, the disks' utilisation and the whole
output. Units are in the field names (see :mod:`volbench.model`, which re-exports
these). Frozen dataclasses, pure data, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class LatencyStats:
    """Latency of one direction, in nanoseconds.

    ``kind`` says which fio latency this is: ``lat`` (submission to completion,
    fio's total latency) or ``clat`` (completion latency only). ``bins`` is the
    json+ histogram: bin value in ns -> I/O count; empty when fio gave none.
    ``percentiles_ns`` maps a percentile (e.g. 99.9) to its value in ns.
    """

    kind: str
    min_ns: float
    max_ns: float
    mean_ns: float
    stddev_ns: float
    samples: int  # 0 = unknown (fio 2.1 prints no N)
    percentiles_ns: dict[float, float] = field(default_factory=dict)
    bins: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class IopsSamples:
    """fio's own IOPS samples of one direction: one per ``iopsavgtime`` window
    (500 ms by default); fio's ``iops_min/max/mean/stddev/samples``."""

    min: float
    max: float
    mean: float
    stddev: float
    samples: int


@dataclass(frozen=True)
class DirectionResult:
    """What fio measured in one direction (read, write or trim) of one job."""

    direction: str
    io_bytes: int
    runtime_ms: float
    iops: float
    bw_bytes_per_s: float
    total_ios: int
    latency: LatencyStats | None
    iops_samples: IopsSamples | None = None
    lat_mean_ns: float | None = None
    """fio's mean total latency (``lat_ns``/``lat`` ``mean``: submission to completion)
    in ns, whichever kind ``latency`` holds (Little's law needs it); None when fio gave
    none."""

    @property
    def active(self) -> bool:
        return self.total_ios > 0 or self.io_bytes > 0


@dataclass(frozen=True)
class JobResult:
    """One entry of fio's ``jobs`` (or ``client_stats``) list."""

    name: str
    groupid: int
    directions: dict[str, DirectionResult]
    usr_cpu_pct: float
    sys_cpu_pct: float
    runtime_ms: float
    error: int = 0
    hostname: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    port: int | None = None  # the fio server's port (client/server output)
    elapsed_s: int | None = None  # fio's ``elapsed``: s since fio started, rounded up
    job_start_ms: int | None = None  # fio's ``job_start`` (fio >= 3.36): ms since the epoch


@dataclass(frozen=True)
class DiskUtil:
    """fio's ``disk_util`` entry for one block device."""

    name: str
    util_pct: float
    read_ios: int
    write_ios: int
    hostname: str | None = None


@dataclass(frozen=True)
class FioOutput:
    """Everything volbench reads from one fio JSON output.

    ``jobs`` holds local jobs or, for client/server output, one entry per host
    job (with ``hostname``); ``all_clients`` is fio's own "All clients"
    aggregate when present. ``client_options`` holds the global options fio echoed
    for each server (``HOST:PORT``) when it lists them apart (fio >= 3.39 with several
    servers). Times are fio's: ``timestamp_s``/``timestamp_ms`` when it wrote the output
    (a local run's end; a client/server run's start), ``time`` the same as local text.
    """

    fio_version: str
    timestamp_s: int
    jobs: tuple[JobResult, ...]
    all_clients: tuple[JobResult, ...] = ()
    disk_util: tuple[DiskUtil, ...] = ()
    global_options: dict[str, str] = field(default_factory=dict)
    client_options: dict[str, dict[str, str]] = field(default_factory=dict)
    timestamp_ms: int | None = None
    time: str | None = None

    @property
    def client_server(self) -> bool:
        """A client/server run's output (its jobs name their host): its ``timestamp_s``
        is when it started, not when it ended."""
        return any(job.hostname for job in self.jobs)
