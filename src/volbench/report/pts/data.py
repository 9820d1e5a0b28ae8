"""A stored PTS run read back for its report: options, rounds, steady-state verdicts,
and the json+ latency bins of single cells.

Figures are averages over the steady-state measurement window (the 5 rounds that
passed, or the last 5 when steady state was NOT achieved), per PTS 2.0.2
"Reporting". Every figure is from stored rows (fio's own per-job numbers);
percentiles and histograms are recomputed from the json+ bins in the stored raw
fio output (merged bucket by bucket, never averaged).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from volbench.analysis.percentiles import merge_bins
from volbench.analysis.steady_state import WINDOW_ROUNDS, Verdict
from volbench.fio.parser import parse
from volbench.model import JobResult, RunRecord
from volbench.plans.pts import catalog, state
from volbench.plans.pts.options import PtsSetup
from volbench.plans.pts.test import Cell, StoredRound
from volbench.report.rows import documents
from volbench.report.sheet import Column, Sheet

MB = 1_000_000
US = 1_000


class PtsData:
    """A stored PTS run read back: its options, rounds and steady-state verdicts."""

    def __init__(self, run: RunRecord) -> None:
        self.run = run
        self.setup = run.setup(PtsSetup)
        self.options = self.setup.options
        self.active = self.setup.active_bytes
        self.rounds = state.stored_rounds(run.results, self.options, self.active)
        self._parsed: dict[int, Sequence[JobResult]] = {}

    def history(self, test: str, phase: str | None = None) -> list[StoredRound]:
        return [r for r in self.rounds if r.test == test and (phase is None or r.phase == phase)]

    def verdict(self, test: str) -> Verdict:
        return catalog.by_name(test).verdict(self.history(test))

    def window(self, test: str) -> list[StoredRound]:
        """The rounds the reported figures average over."""
        ss = self.history(test, "ss")
        chosen = self.verdict(test).window_rounds
        return [ss[i] for i in chosen] if chosen else ss[-WINDOW_ROUNDS:]

    def bins(self, round_no: int, cell: str) -> dict[int, int]:
        """json+ latency bins of one cell of one round: merged over its jobs (clones,
        every place) and directions, from that cell's jobs only (a sweep round
        holds dozens of cells: merging them all took most of a report's time). None
        of a run read without its raw outputs (``volbench runs``)."""
        if round_no >= len(self.run.raw_outputs):
            return {}
        if round_no not in self._parsed:
            self._parsed[round_no] = parse(self.run.raw_outputs[round_no]).jobs
        jobs = [j for j in self._parsed[round_no] if j.name == cell]
        return merge_bins(
            *(d.latency.bins for j in jobs for d in j.directions.values() if d.latency)
        )


def average(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def micro_s(value: float | None) -> float | None:
    """A time in ns as µs (None stays None)."""
    return float(value) / US if value is not None else None


def runtime_s(cell: Cell) -> float:
    """The longest fio runtime of a stored cell's rows, seconds."""
    return float(max((r.runtime_ms for r in cell.results), default=0.0)) / 1000


def sheet(
    title: str,
    columns: tuple[Column, ...],
    rows: Sequence[Mapping[str, object]],
    notes: Iterable[str],
) -> Sheet:
    """A PTS table: its JSON document is the title and the rows."""
    return Sheet(
        title, columns, tuple(rows), {"title": title, "rows": documents(rows)}, tuple(notes)
    )


def with_document(table: Sheet, **extra: object) -> Sheet:
    """``table`` with more keys in its JSON document."""
    document = {**table.document, **extra}
    return Sheet(table.title, table.columns, table.rows, document, table.notes)
