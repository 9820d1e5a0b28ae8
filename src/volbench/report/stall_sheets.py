"""The stalls of a stored run: spans of zero completions while a test had I/O
outstanding (:class:`volbench.model.Stall`), times in UTC to within fio's 1 s status
interval, lengths in seconds."""

from __future__ import annotations

from dataclasses import dataclass, fields

from volbench.model import RunRecord, Stall
from volbench.report.rows import Row, documents, number
from volbench.report.sheet import Column, Sheet

STALL_COLUMNS = (
    Column("round", "Round", numeric=True),
    Column("test", "Test"),
    Column("started_at", "Started (UTC)"),
    Column("ended_at", "Ended (UTC)"),
    Column("seconds", "Seconds at 0 IOPS", lambda v: f"{number(v):,.1f}", numeric=True),
    Column("resolved", "I/O resumed", lambda v: "yes" if v else "no (fio ended)"),
)


@dataclass(frozen=True, eq=False)
class StallRow(Row):
    """A stall as a row: the run's id, then the stall's own fields (:class:`Stall`:
    round, test, UTC start and end, seconds at 0 IOPS, resolved...)."""

    run_id: int
    stall: Stall

    def keys_of(self) -> tuple[str, ...]:
        return _STALL_KEYS

    def __getitem__(self, key: str) -> object:
        if key not in _STALL_KEYS:
            raise KeyError(key)
        return self.run_id if key == "run_id" else getattr(self.stall, key)


_STALL_KEYS = ("run_id", *(f.name for f in fields(Stall)))


def stalls_sheet(run: RunRecord) -> Sheet:
    """The stalls of ``run``: spans of zero completions while a test had I/O outstanding."""
    rows = tuple(StallRow(run.id, stall) for stall in run.stalls)
    return Sheet(
        title=f"volbench run {run.id}: stalls (0 IOPS with I/O outstanding)",
        columns=STALL_COLUMNS,
        rows=rows,
        document={"schema": "volbench.stalls/1", "run_id": run.id, "stalls": documents(rows)},
        notes=(f"{len(rows)} stall(s); times to within fio's 1 s status interval",),
        flagged_rows=frozenset(range(len(rows))),
    )
