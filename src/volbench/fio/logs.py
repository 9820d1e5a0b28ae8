"""fio's per-interval logs (``write_iops_log`` / ``write_bw_log`` / ``write_lat_log``).

Each line is ``time (ms), value, data direction, block size, offset[, priority]``
(fio HOWTO, "Log File Formats"). With ``log_avg_msec`` set, values are averages
over each window: IOPS in I/O per second, bandwidth in KiB/s, latency in ns.
Files are named ``<name>_<kind>.<job number>.log``, one per job (clone); fio's
client writes the logs a server sent back with ``.<host>`` appended.
``write_lat_log`` writes three logs: ``lat`` (total), ``clat`` and ``slat``.

A round's logs are read once, when the round is committed (:func:`read_series`),
and stored with it; the folder is scratch space afterwards.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from volbench.model import LogSeries

DIRECTIONS = {0: "read", 1: "write", 2: "trim"}
KINDS = ("iops", "bw", "lat")
UNITS = {"iops": "IOPS", "bw": "KiB/s", "lat": "ns", "clat": "ns", "slat": "ns"}
"""The unit of each kind of log's values (with ``log_avg_msec``: window averages)."""
_FILE = re.compile(
    r"^(?P<name>.+)_(?P<kind>iops|bw|lat|clat|slat)\.(?P<job>\d+)\.log(?:\.(?P<host>.+))?$"
)


@dataclass(frozen=True)
class LogPoint:
    """One line of a job's log, as :mod:`volbench.analysis.timeseries` adds them up."""

    time_ms: int
    value: float
    direction: str


def _lines(text: str) -> list[tuple[int, int | float, str]]:
    """(time in ms, value as written: an integer stays one, direction) of every fio
    log line of ``text``; other lines, and values that are not finite, are skipped."""
    found = []
    for line in text.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 3:
            continue
        try:
            time_ms, value, ddir = int(fields[0]), _number(fields[1]), int(fields[2])
        except ValueError:
            continue
        found.append((time_ms, value, DIRECTIONS.get(ddir, str(ddir))))
    return found


def _number(text: str) -> int | float:
    """A log value as fio wrote it (an integer, else a finite float); ValueError if none."""
    try:
        return int(text)
    except ValueError:
        value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {text}")
    return value


def find_logs(folder: Path) -> dict[tuple[str, str], list[Path]]:
    """Log files in ``folder`` by (workload name, kind), one path per job."""
    found: dict[tuple[str, str], list[Path]] = {}
    if not folder.is_dir():
        return found
    for path in sorted(folder.iterdir()):
        match = _FILE.match(path.name)
        if match:
            found.setdefault((match["name"], match["kind"]), []).append(path)
    return found


def read_series(folder: Path, round_no: int) -> list[LogSeries]:
    """Every per-second log fio wrote in ``folder`` (one round's), as the series of round
    ``round_no``: one per log file and direction, by name, kind, host, direction and
    job number, the points as fio wrote them. Empty files (fio wrote nothing, e.g.
    ``slat`` of a synchronous engine) give none; a missing folder gives none; a file
    that cannot be read raises OSError."""
    series = []
    for path in folder.iterdir() if folder.is_dir() else ():
        match = _FILE.match(path.name)
        if match is None or not path.is_file():
            continue
        by_direction: dict[str, list[tuple[int, int | float]]] = {}
        for time_ms, value, direction in _lines(path.read_text(errors="replace")):
            by_direction.setdefault(direction, []).append((time_ms, value))
        series += [
            LogSeries(
                round=round_no,
                test=match["name"],
                kind=match["kind"],
                job=int(match["job"]),
                host=match["host"],
                direction=direction,
                points=tuple(points),
            )
            for direction, points in by_direction.items()
        ]
    return sorted(series, key=lambda s: (s.test, s.kind, s.host or "", s.direction, s.job))


def missing_logs(folder: Path, names: Sequence[str]) -> list[str]:
    """The per-second logs (``<name>_iops``, ``<name>_bw``) of the tests ``names`` that
    are missing or empty in ``folder`` (any job's file of the kind): fio writes its
    logs without saying when that fails, e.g. on a full filesystem. A test that ran
    two averaging windows or more (:data:`~volbench.fio.job.LOG_AVG_MSEC`) has at
    least one line in each; a shorter one may have none, so callers pass only those."""
    found = find_logs(folder)
    missing = []
    for name in names:
        for kind in ("iops", "bw"):
            paths = found.get((name, kind), [])
            if not paths or any(_size(path) == 0 for path in paths):
                missing.append(f"{name}_{kind}")
    return missing


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
