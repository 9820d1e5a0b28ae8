"""Where a test's timed seconds lie on the host sampler's clock (Unix seconds), so the
device's counters can be read over the very seconds fio counted.

fio counts a test's I/O over its timed part only: after ``ramp_time`` (fio HOWTO,
"ramp_time": "fio will run the specified workload for this amount of time before
logging any performance numbers") and for ``runtime_ms``; the host sampler
(targets/sampler.py) counts the device's from before fio starts to after it ends. The
timed part's end, by what the output gives (fio/job_times.py), each with how far it
may be off (``margin_s``):

1. ``job_start`` (fio 3.36 and later): the job's start in ms since the epoch; the timed
   part begins ``ramp_time`` later and lasts ``runtime_ms``; off by :data:`CLOSE_S`;
2. a local output's ``timestamp_ms``: when fio wrote it, right after its last job
   ended: the end of the round's one test (:data:`CLOSE_S`), or of a test of several
   run one after another in the process, its ``elapsed`` seconds (rounded up, fio eta.c)
   before the last one's end (:data:`ROUNDED_S`);
3. a client/server output's ``timestamp_ms``: when the client started (its clock, this
   machine's, as the samples of every host are put on: targets/remote_sampler.py);
   the test ended its ``elapsed`` seconds later (:data:`REMOTE_S`);
4. the round's stored end (``RoundTimes.ended_at``, to the second) for its one test
   (:data:`ROUNDED_S`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from volbench.analysis.timeseries import EPOCH_MS
from volbench.fio.job import LOG_AVG_MSEC
from volbench.fio.job_times import JobTimes

CLOSE_S = 0.25
"""How far a time fio gives in ms may be from the timed part's end (the output is
written after the last I/O is reaped and the stats summed: a few ms on this machine)."""
ROUNDED_S = 1.0
"""How far a time fio rounds up to the second may be off."""
REMOTE_S = 1.5
"""How far a client/server test's end may be off (fio's elapsed rounded up, and the
connection's start)."""


@dataclass(frozen=True)
class Window:
    """A test's timed part on the Unix clock: from ``start_s`` to ``end_s``, each off by
    up to ``margin_s``; ``how`` names the time it rests on."""

    start_s: float
    end_s: float
    margin_s: float
    how: str

    @property
    def seconds(self) -> float:
        return self.end_s - self.start_s

    def overlap(self, start_s: float, end_s: float) -> float:
        """Seconds of ``start_s``..``end_s`` within this window."""
        return max(0.0, min(end_s, self.end_s) - max(start_s, self.start_s))


def _ended(iso: str | None) -> float | None:
    if not iso:
        return None
    try:
        return dt.datetime.fromisoformat(iso).timestamp()
    except ValueError:
        return None


def timed_window(
    test: str,
    runtime_s: float,
    ramp_s: float,
    times: JobTimes,
    alone: bool,
    ended_at: str | None = None,
) -> Window | None:
    """The timed part of ``test`` lasting ``runtime_s`` after ``ramp_s`` of ramp (``alone``:
    its round's only test), from its round's fio output ``times`` (or its stored end
    ``ended_at``); None when nothing places it (module docstring)."""
    if runtime_s <= 0:
        return None
    start_ms = times.start_ms.get(test)
    if start_ms is not None:
        start = start_ms / 1000 + ramp_s
        return Window(start, start + runtime_s, CLOSE_S, "fio's job_start")
    stamp = times.timestamp_ms
    end: float | None = None
    if stamp is not None and not times.client:
        if alone:
            end, margin, how = stamp / 1000, CLOSE_S, "fio's end of the round (timestamp_ms)"
        elif test in times.elapsed_s:
            end = stamp / 1000 - (times.last_s - times.elapsed_s[test])
            margin, how = ROUNDED_S, "fio's end of the round less the jobs' elapsed"
    elif stamp is not None and test in times.elapsed_s:
        end = stamp / 1000 + times.elapsed_s[test]
        margin, how = REMOTE_S, "fio's client start plus the jobs' elapsed"
    if end is None and alone and (stored := _ended(ended_at)) is not None:
        end, margin, how = stored + 0.5, ROUNDED_S, "the round's stored end"
    if end is None:
        return None
    return Window(end - runtime_s, end, margin, how)


def io_span(
    logged_ms: tuple[float, float] | None, lead_s: float, seconds: float, times: JobTimes
) -> tuple[float, float] | None:
    """When a round's fio process did I/O (s, Unix clock; one clock for the rounds of a
    run on one place), from its first request (the first test's ramp, ``lead_s``,
    included) to its last, ``seconds`` of it (its tests' ramps and runtimes); None when
    nothing places it:

    1. its per-second logs on the Unix-epoch clock (``logged_ms``: the first and last
       window's end, fio ``log_unix_epoch``, a run on places): the first window's start
       less ``lead_s`` to the last window's end;
    2. ``job_start`` (fio 3.36 and later), ``seconds`` from it;
    3. a local output's ``timestamp_ms`` (when fio wrote it, right after the last I/O:
       :data:`CLOSE_S`), ``seconds`` before it.
    """
    if logged_ms is not None and logged_ms[0] >= EPOCH_MS:
        first, last = logged_ms
        return (first - LOG_AVG_MSEC) / 1000 - lead_s, last / 1000
    if times.start_ms:
        start = min(times.start_ms.values()) / 1000
        return start, start + seconds
    if times.timestamp_ms is not None and not times.client:
        end = times.timestamp_ms / 1000
        return end - seconds, end
    return None
