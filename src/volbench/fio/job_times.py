"""When each job of one fio output ran, and its CPU, read from fio's JSON without
parsing the rest of it (the validity checks place each test on the host sampler's
clock: analysis/test_windows.py).

fio's JSON gives, per job entry (``jobs``, or ``client_stats`` of a client/server run),
``elapsed``: seconds since fio started, rounded up (fio eta.c), and from fio 3.36
``job_start``: when the job started, ms since the epoch (fio stat.c); and for the
whole output ``timestamp_ms``: when fio wrote it, ms since the epoch: a local run's end,
a client/server run's start (the client's clock). ``usr_cpu`` and ``sys_cpu`` are the
job's user and system CPU as a share (%) of its runtime (fio HOWTO, "Interpreting the
output").
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass, field
from typing import Any

from volbench.errors import ParseError
from volbench.fio.document import load

AGGREGATE = "All clients"
"""The job name of fio's aggregate of every client (client/server output)."""


@dataclass(frozen=True)
class JobTimes:
    """The times of one output's jobs, by job name (a test's jobs share its name):
    the longest ``elapsed`` (s) and the earliest ``job_start`` (ms since the epoch, None
    before fio 3.36) of each name, each job's usr + sys CPU (% of one CPU), the output's
    ``timestamp_ms`` (None: not given), whether it is a client/server output and the
    longest ``elapsed`` of all (the last job's end, s after fio started)."""

    elapsed_s: dict[str, float] = field(default_factory=dict)
    start_ms: dict[str, float] = field(default_factory=dict)
    cpu_pct: dict[str, tuple[float, ...]] = field(default_factory=dict)
    timestamp_ms: float | None = None
    client: bool = False
    last_s: float = 0.0


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


_KNOWN: dict[bytes, JobTimes] = {}
"""The times of outputs this process decoded already (:func:`remember`), by digest."""

KNOWN_MAX = 4096
"""How many :data:`_KNOWN` keeps (the oldest go first): a few hundred bytes each."""


def _digest(text: str) -> bytes:
    """A 128-bit BLAKE2b digest of ``text`` (0.16 ms for a 140 kB output, against
    1.2 ms to decode it)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def remember(text: str, doc: dict[str, Any]) -> None:
    """Keep the times of ``text``, which :func:`~volbench.fio.document.load` decoded
    into ``doc`` (the parser, as each round is committed), for :func:`job_times` of the
    same text read back from the store (the run's report, as the run ends)."""
    if len(_KNOWN) >= KNOWN_MAX:
        del _KNOWN[next(iter(_KNOWN))]
    _KNOWN[_digest(text)] = _times_of(doc)


def job_times(text: str) -> JobTimes:
    """The :class:`JobTimes` of fio's JSON ``text`` (empty for text that is not);
    without decoding it again when this process parsed the same text (:func:`remember`)."""
    if _KNOWN:
        found = _KNOWN.get(_digest(text))
        if found is not None:
            return found
    try:
        doc = load(text)
    except ParseError:
        return JobTimes()
    return _times_of(doc)


def _times_of(doc: dict[str, Any]) -> JobTimes:
    """The :class:`JobTimes` of fio's decoded JSON."""
    clients = doc.get("client_stats") or []
    entries = [*(doc.get("jobs") or []), *clients]
    found = JobTimes(timestamp_ms=_number(doc.get("timestamp_ms")), client=bool(clients))
    cpu: dict[str, list[float]] = {}
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("jobname") == AGGREGATE:
            continue
        name = entry.get("jobname")
        if not isinstance(name, str):
            continue
        elapsed, start = _number(entry.get("elapsed")), _number(entry.get("job_start"))
        if elapsed is not None:
            found.elapsed_s[name] = max(elapsed, found.elapsed_s.get(name, 0.0))
        if start:
            found.start_ms[name] = min(start, found.start_ms.get(name, start))
        usr, sys_ = _number(entry.get("usr_cpu")), _number(entry.get("sys_cpu"))
        if usr is not None and sys_ is not None:
            cpu.setdefault(name, []).append(usr + sys_)
    found.cpu_pct.update({name: tuple(values) for name, values in cpu.items()})
    return dataclasses.replace(found, last_s=max(found.elapsed_s.values(), default=0.0))
