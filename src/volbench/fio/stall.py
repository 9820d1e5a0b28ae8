"""Stall detection: seconds with zero I/O completions while a job has I/O outstanding.

fio prints a status document every second (``--status-interval=1``), but from a
checkpoint in each job's I/O loop: a job blocked waiting for completions does not
reach it, so on a stalled device the documents stop coming. (fio 3.33, loop device
throttled to 512 B/s by a blkio cgroup, 4 KiB reads: documents 8 s apart, each
after one completion.) The watch therefore has two inputs, both with wall-clock
times in seconds:

- :meth:`StallWatch.status`, each document: a job has made *progress* when its
  I/Os issued (``total_ios``) plus completed (latency samples ``N``) changed; with a
  bounded queue depth, issuing more needs completions. A job is *running* once it
  has issued I/O while its ``job_runtime`` advances (a finished job's stays put; a
  stonewalled job that has not started has issued nothing), until another job
  starts: volbench's jobs are stonewalled, one name runs at a time (sections of
  one name, clones and targets, are added up).
- :meth:`StallWatch.tick`, every fraction of a second: a running job's silence
  counts as zero completions (its I/O loop is blocked). Before fio's first
  document, the round's first job counts as running since fio started.

A stall opens when a running job shows no progress for ``seconds`` (plus the
job's think time, when it idles by design) and closes at the first document that
shows progress again, or when fio ends (then ``resolved`` is False). Times are
known to within fio's status interval (1 s).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from volbench.fio.live import JobTotals, job_totals
from volbench.model import Stall

DEFAULT_SECONDS = 5.0
"""Consecutive seconds of zero completions that make a stall (issue 6)."""
JITTER_S = 0.1
"""fio's 1 s status timer drifts by milliseconds: 5 intervals may add up to 4.99 s."""


@dataclass(frozen=True)
class StallPolicy:
    """What a run does about stalls: how long makes one, and whether it ends the run."""

    seconds: float = DEFAULT_SECONDS
    abort: bool = False


@dataclass
class _Job:
    progress: int
    runtime_ms: int
    since_s: float
    offset_s: float | None
    running: bool
    open: bool = False
    seen_s: float = 0.0
    guessed: bool = False  # put here by a silence, not seen in a document yet
    moved_from: str | None = None  # the job the silence was first put on


def utc_text(moment_s: float) -> str:
    """A wall-clock time (seconds since the epoch) as stored: ISO 8601 UTC, to the second."""
    return datetime.fromtimestamp(moment_s, UTC).isoformat(timespec="seconds")


def stall_reason(stall: Stall) -> str:
    """The one line a run stopped by a stall is stored with."""
    clock = datetime.fromisoformat(stall.started_at).strftime("%H:%M:%S")
    return f"stalled: 0 IOPS for {stall.seconds:.0f} s at {clock} UTC on {stall.test}"


@dataclass
class StallWatch:
    """Watches one fio process (one round); see the module docstring.

    ``first_job`` is the job fio starts with; ``think_s`` maps a job to the idle
    time it has by design (fio ``thinktime``), added to ``seconds`` for that job.
    ``planned_s`` maps each job, in fio's order, to its planned ramp + runtime: a
    silence that goes past the running job's planned end is put on the next job
    (it started and blocked before it could print a document).
    """

    round_no: int
    started_s: float
    first_job: str
    seconds: float = DEFAULT_SECONDS
    think_s: Mapping[str, float] = field(default_factory=dict)
    planned_s: Mapping[str, float] = field(default_factory=dict)
    stalls: list[Stall] = field(default_factory=list)
    _jobs: dict[str, _Job] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._jobs[self.first_job] = _Job(
            0, 0, self.started_s, 0.0, running=True, seen_s=self.started_s, guessed=True
        )
        self._documents = 0

    def status(self, now_s: float, document: Mapping[str, Any]) -> list[Stall]:
        """Take one status document received at ``now_s``; return the stalls that opened
        (a document after a long silence opens and closes one at once)."""
        opened = self.tick(now_s)  # the silence before this document counts
        self._documents += 1
        if self._documents == 1:  # fio got to its first checkpoint: the start was progress
            self._close(self.first_job, now_s, resolved=True)
            self._jobs.clear()
        found = job_totals(document)
        self._undo_wrong_guesses(found, now_s)
        started = []
        for name, totals in found.items():
            progress = totals.ios + totals.lat_n
            job = self._jobs.get(name)
            if job is None or progress != job.progress or totals.runtime_ms < job.runtime_ms:
                if job is not None:
                    self._close(name, now_s, resolved=True)
                if progress > 0 and (
                    job is None or not job.running or totals.runtime_ms < job.runtime_ms
                ):
                    started.append(name)
                # a stonewalled job's job_runtime counts before it starts: not its offset
                offset = 0.0 if name in started and job is not None else totals.runtime_ms / 1000
                self._jobs[name] = _Job(
                    progress, totals.runtime_ms, now_s, offset, progress > 0, seen_s=now_s
                )
                continue
            if totals.runtime_ms == job.runtime_ms and job.running:  # ended in between
                self._close(name, now_s, resolved=True)
                job.running = False
            job.runtime_ms = totals.runtime_ms
            job.seen_s = now_s
        if started:  # stonewalled: a job starts when the one before it has ended
            for name, job in self._jobs.items():
                if name not in started and job.running:
                    self._close(name, now_s, resolved=True)
                    job.running = False
        return opened + self.tick(now_s)

    def tick(self, now_s: float) -> list[Stall]:
        """The stalls that have lasted ``seconds`` by ``now_s`` and were not reported yet
        (open: ``ended_at`` is ``now_s`` so far)."""
        opened = []
        for name, job in list(self._jobs.items()):
            name, job = self._running_now(name, job, now_s)
            limit = self.seconds + self.think_s.get(name, 0.0) - JITTER_S
            if job.running and not job.open and now_s - job.since_s >= limit:
                job.open = True
                opened.append(self._stall(name, job, now_s, resolved=False))
        return opened

    def _running_now(self, name: str, job: _Job, now_s: float) -> tuple[str, _Job]:
        """The job a silence belongs to: ``name``, or the next job once ``name`` is past
        its planned end (the silence then started with that next job). A blocked job
        does not end on time, so a silence moves on once at most."""
        order = list(self.planned_s)
        if not job.running or job.open or job.guessed or name not in order:
            return name, job
        index = order.index(name)
        ran_s = job.runtime_ms / 1000 + now_s - job.seen_s
        if index + 1 >= len(order) or ran_s <= self.planned_s[name] + 1.0:
            return name, job
        following = order[index + 1]
        job.running = False
        moved = _Job(0, 0, job.since_s, 0.0, True, seen_s=job.seen_s, guessed=True)
        moved.moved_from = name
        self._jobs[following] = moved
        return following, moved

    def _undo_wrong_guesses(self, found: Mapping[str, JobTotals], now_s: float) -> None:
        """A job a silence was put on that has still issued nothing: the job before it
        was the one blocked after all (its I/O outlived its runtime)."""
        for name, job in list(self._jobs.items()):
            origin = job.moved_from
            totals = found.get(name)
            if origin is None or totals is None or totals.ios + totals.lat_n > 0:
                continue
            del self._jobs[name]
            before = self._jobs[origin]
            before.running = True
            if job.open:
                self.stalls.append(self._stall(origin, before, now_s, resolved=True))

    def finish(self, now_s: float) -> list[Stall]:
        """fio ended (or was stopped) at ``now_s``: close what is open; every stall seen."""
        for name in list(self._jobs):
            self._close(name, now_s, resolved=False)
        return list(self.stalls)

    def _close(self, name: str, now_s: float, resolved: bool) -> None:
        job = self._jobs.get(name)
        if job is not None and job.open:
            job.open = False
            self.stalls.append(self._stall(name, job, now_s, resolved))

    def _stall(self, name: str, job: _Job, now_s: float, resolved: bool) -> Stall:
        return Stall(
            round=self.round_no,
            test=name,
            started_at=utc_text(job.since_s),
            ended_at=utc_text(now_s),
            seconds=round(now_s - job.since_s, 3),
            resolved=resolved,
            test_offset_s=job.offset_s,
        )
