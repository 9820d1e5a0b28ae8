"""A run's record over time: when each round ran, its stalls, fio's per-second
series, the host samples taken while it ran and a capture's trace parts. Frozen
dataclasses, pure data, no I/O (re-exported by :mod:`volbench.model`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RoundTimes:
    """When one committed round ran: ISO 8601 UTC to the second. ``started_at`` is when
    volbench started fio, ``ended_at`` fio's own end time (its output's timestamp);
    None for rounds stored before volbench kept them, or imported."""

    round: int
    started_at: str | None
    ended_at: str | None
    committed_at: str


@dataclass(frozen=True)
class TracePart:
    """One stored part of a capture run's block I/O trace (:mod:`volbench.trace.codec`):
    its first request's issue time in ns, how many requests it holds, the packed data."""

    first_ns: int
    ios: int
    data: bytes


@dataclass(frozen=True)
class Stall:
    """A span of ``seconds`` with zero I/O completions while test ``test`` of round
    ``round`` was running with I/O outstanding (fio's status documents, 1 s apart).

    ``started_at``/``ended_at`` are ISO-8601 UTC wall-clock times: the last status
    that showed progress (or fio's start) and the first that showed it again (or
    when fio ended). ``resolved`` is False when fio ended, or was stopped, while
    still stalled. ``test_offset_s`` is where the stall began in seconds since the
    test started (fio's ``job_runtime``), for marking charts; None when unknown.
    """

    round: int
    test: str
    started_at: str
    ended_at: str
    seconds: float
    resolved: bool
    test_offset_s: float | None = None


@dataclass(frozen=True)
class LogSeries:
    """One of fio's per-second logs of a committed round, one direction of it.

    ``points`` are (time in ms, value) as fio wrote them (fio HOWTO, "Log File
    Formats"), in the file's order; each value is the average over fio's
    ``log_avg_msec`` window ending at that time, in the unit of ``kind``: ``iops``
    I/O per second, ``bw`` KiB/s, ``lat`` / ``clat`` / ``slat`` (total, completion,
    submission latency) ns. Times are ms since the job started, or Unix-epoch ms
    (fio ``log_unix_epoch``: runs on several places at once, one clock for all).
    ``test`` is the log's name: the test's (``TEST@N`` for place N of a run on
    several places); ``job`` fio's number of the job (one log per job and clone);
    ``host`` the host fio's client received the log from (client/server runs).
    """

    round: int
    test: str
    kind: str
    job: int
    host: str | None
    direction: str
    points: tuple[tuple[int, int | float], ...]


@dataclass(frozen=True)
class HostSample:
    """One second of the host and device, from two readings ``interval`` apart.

    ``time_s`` is the clock at the second reading (Unix seconds by default);
    ``cpu_busy_pct`` each CPU's busy share (%); the device fields are None without a
    device: busy share (%), requests in flight at the second reading, reads plus
    writes completed per second, and requests in flight on average over the second
    (``queue_length``), bytes read and written per second (``read_bytes_per_s``,
    ``write_bytes_per_s``: a device's completions count merged and split requests,
    its bytes do not); PSI avg10 (%) None where the kernel has no PSI.
    The ``fio_`` fields are None when no child process (fio) ran through the second:
    CPU cores its processes used, its busiest thread's share of a core (%: a job, or
    a kernel worker of io_uring), and how many
    of its threads waited for a CPU on average (run-queue time / elapsed).
    """

    time_s: float
    cpu_busy_pct: tuple[float, ...]
    device_busy_pct: float | None = None
    in_flight: int | None = None
    iops: float | None = None
    memory_some_pct: float | None = None
    memory_full_pct: float | None = None
    io_some_pct: float | None = None
    io_full_pct: float | None = None
    fio_cpu_cores: float | None = None
    fio_busiest_pct: float | None = None
    fio_wait_threads: float | None = None
    queue_length: float | None = None
    read_bytes_per_s: float | None = None
    write_bytes_per_s: float | None = None

    @property
    def fio_wait_share(self) -> float | None:
        """Share of fio's runnable time spent waiting for a CPU (0..1)."""
        if self.fio_cpu_cores is None or self.fio_wait_threads is None:
            return None
        runnable = self.fio_cpu_cores + self.fio_wait_threads
        return self.fio_wait_threads / runnable if runnable > 0 else 0.0
