"""fio's per-interval logs (``write_iops_log`` / ``write_bw_log`` / ``write_lat_log``).

Each line is ``time (ms), value, data direction, block size, offset[, priority]``
(fio HOWTO, "Log File Formats"). With ``log_avg_msec`` set, values are averages
over each window: IOPS in I/O per second, bandwidth in KiB/s, latency in ns.
Files are named ``<name>_<kind>.<job number>.log``, one per job (clone); fio's
client writes the logs a server sent back with ``.<host>`` appended.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

DIRECTIONS = {0: "read", 1: "write", 2: "trim"}
KINDS = ("iops", "bw", "lat")
_FILE = re.compile(
    r"^(?P<name>.+)_(?P<kind>iops|bw|lat|clat|slat)\.(?P<job>\d+)\.log(?:\.(?P<host>.+))?$"
)


@dataclass(frozen=True)
class LogPoint:
    time_ms: int
    value: float
    direction: str


def parse_log(text: str) -> list[LogPoint]:
    """The points of one log file; lines that are not fio log lines are skipped."""
    points = []
    for line in text.splitlines():
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 3:
            continue
        try:
            time_ms, value, ddir = int(fields[0]), float(fields[1]), int(fields[2])
        except ValueError:
            continue
        points.append(LogPoint(time_ms, value, DIRECTIONS.get(ddir, str(ddir))))
    return points


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


def read_logs(paths: Sequence[Path]) -> list[list[LogPoint]]:
    """The points of each job's log."""
    return [parse_log(p.read_text(errors="replace")) for p in paths]


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
