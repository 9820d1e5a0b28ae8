"""The per-second logs of runs stored before schema version 5, read from the folders
fio left them in: migration 5 stores them as series (:mod:`volbench.store.series`).

A run records its folder (``settings.logs_dir``, named by time and a random token:
no other run's); runs made before that used ``<data dir>/runs/<run id>``, a folder
that a run of another database, or a deleted run of the same id, may have used too.
Round N's logs are in ``round-NNN`` (a QoS verify run's: in its tenant's folder,
named after the test stored in round N). A round's logs are stored only when they
plausibly are that round's; when in doubt they are left out:

- only logs named after a test stored in that round (``TEST``, or ``TEST@N`` for a
  place of a run on several places);
- when the round's folder holds fio's output (``fio-output.json``), it must be the
  output stored with the round;
- in the old layout, the run must have been made on this host, and every log file
  taken must have been written between the run's start and the round's commit
  (stored times are to the second: 2 s either side).

A run whose folder is gone keeps no series.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import platformdirs
import sqlalchemy as sa
from sqlalchemy.engine import Connection

from volbench.fio.logs import read_series
from volbench.model import LogSeries
from volbench.store.series import series_rows

OUTPUT_FILE = "fio-output.json"
"""fio's output of a round, kept beside its logs since volbench 0.1 kept round times."""

SLACK_S = 2.0

# The tables as version 5 reads and writes them (later versions may change them).
_RUNS = sa.table(
    "runs",
    sa.column("id", sa.Integer),
    sa.column("started_at", sa.String),
    sa.column("host", sa.JSON),
    sa.column("settings", sa.JSON),
)
_ROUNDS = sa.table(
    "rounds",
    sa.column("run_id", sa.Integer),
    sa.column("round", sa.Integer),
    sa.column("raw_json", sa.Text),
    sa.column("committed_at", sa.String),
)
_RESULTS = sa.table(
    "results", sa.column("run_id", sa.Integer), sa.column("round"), sa.column("test")
)
_SERIES = sa.table(
    "series",
    *(
        sa.column(name)
        for name in ("run_id", "round", "test", "kind", "host", "direction", "samples")
    ),
    sa.column("data", sa.LargeBinary),
)


def old_runs_root() -> Path:
    """Where runs made before ``logs_dir`` was recorded kept their folders: ``runs`` in
    volbench's data directory (as :func:`volbench.store.database.default_data_dir`)."""
    return Path(platformdirs.user_data_dir("volbench")) / "runs"


def fill_series(conn: Connection, old_root: Path | None = None) -> int:
    """Store the series of every stored round whose logs are still on disk and
    plausibly its own (see the module docstring); return how many series."""
    root = old_root if old_root is not None else old_runs_root()
    stored = 0
    for run in conn.execute(sa.select(_RUNS)).all():
        settings = run.settings if isinstance(run.settings, Mapping) else {}
        recorded = settings.get("logs_dir")
        own = isinstance(recorded, str)
        folder = Path(recorded) if isinstance(recorded, str) else root / str(run.id)
        if not folder.is_dir():
            continue
        if not own and (run.host or {}).get("hostname") != socket.gethostname():
            continue
        tests: dict[int, set[str]] = {}
        for row in conn.execute(
            sa.select(_RESULTS.c.round, _RESULTS.c.test).where(_RESULTS.c.run_id == run.id)
        ):
            tests.setdefault(row.round, set()).add(row.test)
        rounds = conn.execute(sa.select(_ROUNDS).where(_ROUNDS.c.run_id == run.id)).all()
        for round_ in rounds:
            found = _round_series(
                folder, round_, tests.get(round_.round, set()), None if own else run.started_at
            )
            if found:
                conn.execute(sa.insert(_SERIES), series_rows(run.id, found))
                stored += len(found)
    return stored


def _round_series(
    folder: Path, round_: Any, tests: set[str], started_at: str | None
) -> list[LogSeries]:
    """The series of one stored round from its folder, or none when they may not be its
    own. ``started_at``: the run's start, to check the files' times (old layout)."""
    for place in _round_folders(folder, round_.round, tests):
        kept = place / OUTPUT_FILE
        if kept.is_file() and _read(kept) != round_.raw_json:
            continue  # another round's (or run's) output: its logs too
        found = [s for s in _series(place, round_.round) if _named(s.test, tests)]
        if not found:
            continue
        if started_at is not None and not _written_during(
            place, found, started_at, round_.committed_at
        ):
            return []
        return found
    return []


def _round_folders(folder: Path, round_no: int, tests: Iterable[str]) -> list[Path]:
    """Where round ``round_no``'s logs may be: ``round-NNN``, else (QoS verify) a
    folder named after one of its tests."""
    places = [folder / f"round-{round_no:03d}"]
    places += [folder / t for t in sorted(tests) if t not in ("", ".", "..") and "/" not in t]
    return [p for p in places if p.is_dir()]


def _series(place: Path, round_no: int) -> list[LogSeries]:
    try:
        return read_series(place, round_no)
    except OSError:  # unreadable: left out, as a folder that is gone
        return []


def _read(path: Path) -> str | None:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return None


def _named(log_name: str, tests: set[str]) -> bool:
    """A log of one of ``tests``: the test's name, or ``TEST@N`` (place N's share)."""
    return log_name in tests or log_name.rpartition("@")[0] in tests


def _written_during(
    place: Path, found: list[LogSeries], started_at: str, committed_at: str
) -> bool:
    """Every log file of ``found`` was last written between the run's start and the
    round's commit (:data:`SLACK_S` either side); False when a time is unreadable."""
    try:
        start = datetime.fromisoformat(started_at).timestamp() - SLACK_S
        end = datetime.fromisoformat(committed_at).timestamp() + SLACK_S
    except (TypeError, ValueError):
        return False
    names = {f"{s.test}_{s.kind}.{s.job}.log" + (f".{s.host}" if s.host else "") for s in found}
    for name in names:
        try:
            written = (place / name).stat().st_mtime
        except OSError:
            return False
        if not start <= written <= end:
            return False
    return True
