"""Whether each figure of a stored run is the volume's, as every view shows it: the
marks of analysis/run_validity.py (the one service) on ``show``'s tables, in ``check``
(a marked figure is not judged), ``explain``'s evidence, the report and JSON.

A command's :class:`Verdicts` is what every view of its runs asks: the service with
what the run's labels say of the place (a catalogue product's stated latency:
:func:`known_of`) and what the command gave of its volume's history.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from volbench.analysis.run_validity import validity_of
from volbench.analysis.validity import Mark, Validity
from volbench.analysis.validity_facts import Known
from volbench.analysis.written_ranges import RunWrites
from volbench.errors import VolbenchError
from volbench.model import RunRecord
from volbench.plans.runs import fill
from volbench.report.limit_sheets import EXPLAIN_COLUMNS
from volbench.report.rows import Row
from volbench.report.sheet import Column, Sheet, fmt_count

SCHEMA = "volbench.validity/1"
VALID = "valid"
"""How a test without a mark reads in a table's mark column."""
Key = tuple[int, str]


def known_of(run: RunRecord) -> Known:
    """What the run's labels say of its place's medium: the product and size they name,
    its stated latency (half the least: :func:`check_sheets.latency_floor_ns`); nothing
    when they name none or the catalogue does not know it."""
    product = run.labels.get("product")
    size = run.labels.get("size_gib") or run.labels.get("size")
    if not product or not size:
        return Known()
    from volbench.report.check_sheets import CheckRequest, latency_floor_ns, subject
    from volbench.specs import run_promise
    from volbench.specs.expectation import expect

    try:
        name, amount = subject(run, CheckRequest(None, None))
        found = _catalogue(_given()).find(name)
        expectation = expect(found, amount, None, run_promise.provisioned(run.labels))
    except VolbenchError:
        return Known()
    floor = latency_floor_ns(expectation)
    if floor is None:
        return Known()
    return Known(floor, f"half the least latency {found.vendor} states for {found.name}")


def _given() -> tuple[str, ...]:
    from volbench.specs import catalogue

    return catalogue.given_files()


@functools.cache
def _catalogue(files: tuple[str, ...]) -> Any:
    from volbench.specs import catalogue

    return catalogue.load(files)


class Verdicts:
    """The validity of every test of the runs one command shows (analysis/run_validity.py;
    not of a run's fill), each run's worked out once however many of the command's views
    ask (the results table, the summary, the charts, ``check``, the marks' sheet), with
    what was written on a run's volume where the command gave it (:meth:`give_volume`,
    which the "blocks never written" check reads). The command makes one and hands it to
    each view of its runs: nothing is kept beyond it."""

    def __init__(self) -> None:
        self._volumes: dict[tuple[object, ...], tuple[RunWrites, ...] | None] = {}
        self._found: dict[tuple[object, ...], dict[Key, Validity]] = {}

    def give_volume(self, run: RunRecord, volume: tuple[RunWrites, ...] | None) -> None:
        """What was written on ``run``'s volume: the runs stored on it up to ``run``
        (:func:`volbench.volume_writes.volume_history`; None: the volume cannot be
        named), for every view of ``run`` after this."""
        key = _key(fill.without(run))
        self._volumes[key] = volume
        self._found.pop(key, None)

    def of(self, run: RunRecord) -> dict[Key, Validity]:
        """Every test's validity of ``run`` (not its fill's: it measures nothing asked
        for), by (round, test)."""
        run = fill.without(run)
        key = _key(run)
        found = self._found.get(key)
        if found is None:
            known = known_of(run)
            if key in self._volumes:
                known = dataclasses.replace(known, volume=self._volumes[key], volume_known=True)
            found = self._found[key] = validity_of(run, known)
        return found


def given(verdicts: Verdicts | None) -> Verdicts:
    """``verdicts``, or, where a view is called alone (no command gave it one), a
    :class:`Verdicts` of its own: nothing known of the volumes' history."""
    return verdicts if verdicts is not None else Verdicts()


def _key(run: RunRecord) -> tuple[object, ...]:
    return (run.uuid, run.id, run.status, len(run.results), len(run.series), len(run.raw_outputs))


def mark_document(mark: Mark) -> dict[str, object]:
    """A mark as JSON: its kind, problem, evidence, advice, figures and parts."""
    return {
        "kind": mark.kind.value,
        "problem": mark.problem,
        "evidence": list(mark.evidence),
        "advice": mark.advice,
        "figures": dict(mark.figures),
        "parts": [dataclasses.asdict(p) for p in mark.parts],
    }


def validity_documents(found: Mapping[Key, Validity]) -> list[dict[str, object]]:
    """Every test's verdict as JSON (schema :data:`SCHEMA`): valid, its marks, and what
    could not be checked."""
    return [
        {
            "round": v.round,
            "test": v.test,
            "valid": v.valid,
            "marks": [mark_document(m) for m in v.marks],
            "unchecked": list(v.unchecked),
        }
        for v in found.values()
    ]


def mark_text(validity: Validity | None) -> str | None:
    """A table cell: the kinds of its marks ("cache, starved"), :data:`VALID`, or None
    (not known)."""
    if validity is None:
        return None
    return ", ".join(k.value for k in validity.kinds) or VALID


class Rows:
    """Finds the validity of a table's rows: by (round, test), else a test's last round,
    else a pair of tests by their common stem (CrystalDiskMark's line ``SEQ1M-Q8T1`` of
    ``SEQ1M-Q8T1-read`` and ``-write``, carrying both's marks)."""

    def __init__(self, found: Mapping[Key, Validity]) -> None:
        self.found = found
        self.latest: dict[str, Validity] = {}
        self.stems: dict[str, list[Validity]] = {}
        for (_, name), validity in sorted(found.items()):
            self.latest[name] = validity
        for name, validity in self.latest.items():
            stem, dash, _ = name.rpartition("-")
            if dash:
                self.stems.setdefault(stem, []).append(validity)

    def of(self, row: Mapping[str, object]) -> Validity | None:
        """The validity of a table row that names its test (None: it names none)."""
        test = row.get("test")
        if not isinstance(test, str):
            return None
        round_no = row.get("round")
        if isinstance(round_no, int) and (round_no, test) in self.found:
            return self.found[(round_no, test)]
        if test in self.latest:
            return self.latest[test]
        return _together(test, self.stems.get(test, []))

    def of_tests(self, tests: Sequence[str]) -> Validity | None:
        """The validity of a row whose figures rest on the stored ``tests`` (their last
        rounds): every mark of each (None: none of them is known)."""
        known = [self.latest[t] for t in tests if t in self.latest]
        return known[0] if len(known) == 1 else _together(", ".join(tests), known)


def _together(name: str, found: Sequence[Validity]) -> Validity | None:
    """One verdict of a figure resting on several tests' (``found``), named ``name``:
    each one's marks, and what could not be checked on any."""
    if not found:
        return None
    return Validity(
        found[0].round,
        name,
        tuple(m for v in found for m in v.marks),
        tuple(dict.fromkeys(u for v in found for u in v.unchecked)),
    )


MARK_COLUMN = Column("validity", "Valid?")
MARK_NOTE = (
    "Valid?: whether the figure is the volume's, or marked: a cache answered, another"
    " process shared the device, a mixed average, fio short of CPU"
)


def with_marks(sheet: Sheet, found: Mapping[Key, Validity]) -> Sheet:
    """``sheet`` with a column naming each row's marks (rows that name a test, or the
    tests the sheet says they rest on: ``sheet.row_tests``), its marked rows flagged and
    what the column means in its notes; unchanged when no row it names is marked. Every
    table of a run gets its ``Valid?`` column here, a plan's own sheet too."""
    rows_of = Rows(found)
    verdicts = (
        [rows_of.of_tests(tests) for tests in sheet.row_tests]
        if sheet.row_tests
        else [rows_of.of(row) for row in sheet.rows]
    )
    if all(v is None or v.valid for v in verdicts):
        return sheet
    rows = tuple(
        {**row, "validity": mark_text(v)} for row, v in zip(sheet.rows, verdicts, strict=True)
    )
    marked = frozenset(i for i, v in enumerate(verdicts) if v is not None and not v.valid)
    notes = (*sheet.notes, MARK_NOTE)
    return dataclasses.replace(
        sheet,
        columns=(*sheet.columns, MARK_COLUMN),
        rows=rows,
        notes=notes,
        flagged_rows=sheet.flagged_rows | marked,
    )


@dataclass(frozen=True, eq=False)
class MarkRow(Row):
    """A mark of a test as a table row: the test's round, name and fio's figure (IOPS of
    its directions added), the mark's kind, problem and advice."""

    round: int
    test: str
    iops: float | None
    mark: str
    problem: str
    advice: str


@dataclass(frozen=True, eq=False)
class EvidenceLine(Row):
    """A line of ``explain``'s marks: a sentence of a mark (its problem, each piece of
    evidence, what to do), the test's round, name, IOPS and the mark's kind on its
    first line only (``""`` below it)."""

    round: int | str
    test: str
    iops: float | str | None
    mark: str
    evidence: str


MARK_COLUMNS = (
    Column("round", "Round", numeric=True),
    Column("test", "Test"),
    Column("iops", "IOPS", fmt_count, numeric=True),
    Column("mark", "Mark"),
    Column("problem", "Problem"),
    Column("advice", "What to do"),
)
EVIDENCE_COLUMNS = (
    *EXPLAIN_COLUMNS[:3],  # round, test and IOPS on a test's first line, as explain's
    Column("mark", "Mark"),
    Column("evidence", "Problem, evidence, what to do"),
)


def _iops(run: RunRecord) -> dict[Key, float]:
    found: dict[Key, float] = {}
    rows = run.aggregate if run.settings.places else run.results
    for row in rows:
        found[(row.round, row.test)] = found.get((row.round, row.test), 0.0) + row.iops
    return found


def mark_rows(run: RunRecord, found: Mapping[Key, Validity]) -> list[MarkRow]:
    """One row per mark of every test of ``run``."""
    iops = _iops(run)
    return [
        MarkRow(v.round, v.test, iops.get(key), m.kind.value, m.problem, m.advice)
        for key, v in found.items()
        for m in v.marks
    ]


def evidence_lines(run: RunRecord, found: Mapping[Key, Validity]) -> list[EvidenceLine]:
    """Each mark of every test of ``run`` as lines: its problem, its evidence, what to
    do, the test named on the first."""
    iops = _iops(run)
    lines = []
    for key, v in found.items():
        for m in v.marks:
            said = [m.problem, *m.evidence, f"what to do: {m.advice}"]
            lines.append(EvidenceLine(v.round, v.test, iops.get(key), m.kind.value, said[0]))
            lines += [EvidenceLine("", "", "", "", sentence) for sentence in said[1:]]
    return lines


def _notes(run: RunRecord, found: Mapping[Key, Validity], brief: bool = True) -> list[str]:
    """The sheet's notes: how many tests are marked, what could not be checked and in
    which tests, and where the evidence is. ``brief``: one line per check, its first
    reason (a test's reason holds its own figures) and how many more ``explain`` has;
    else every reason."""
    marked = [v for v in found.values() if not v.valid]
    unchecked: dict[str, dict[str, list[str]]] = {}
    for v in found.values():
        for why in v.unchecked:
            check = why.partition(": ")[0] if brief else why
            unchecked.setdefault(check, {}).setdefault(why, []).append(v.test)
    notes = [f"{len(marked)} of {len(found)} test(s) marked: their figures are not the volume's"]
    for reasons in unchecked.values():
        why = next(iter(reasons))
        tests = list(dict.fromkeys(t for named in reasons.values() for t in named))
        names = ", ".join(tests[:3]) + (f" and {len(tests) - 3} more" if len(tests) > 3 else "")
        others = len(reasons) - 1
        more = f"; {others} more reason(s) in volbench explain {run.id}" if others else ""
        notes.append(f"not checked: {why} ({names}{more})")
    notes.append(f"the evidence of each mark: volbench explain {run.id}")
    return notes


def document(run: RunRecord, found: Mapping[Key, Validity]) -> dict[str, object]:
    return {"schema": SCHEMA, "run": run.id, "tests": validity_documents(found)}


def validity_sheet(run: RunRecord, verdicts: Verdicts | None = None) -> Sheet | None:
    """The marked tests of ``run`` and what to do (``show``, the report); None when no
    test is marked. ``verdicts``: the command's (:class:`Verdicts`)."""
    found = given(verdicts).of(run)
    rows = mark_rows(run, found)
    if not rows:
        return None
    return Sheet(
        f"volbench run {run.id}: figures that are not the volume's",
        MARK_COLUMNS,
        tuple(rows),
        document(run, found),
        tuple(_notes(run, found)),
        frozenset(range(len(rows))),
    )


def evidence_sheet(run: RunRecord, verdicts: Verdicts | None = None) -> Sheet:
    """Every mark of ``run`` with its evidence (``explain``); what was not checked in its
    notes. ``verdicts``: the command's (:class:`Verdicts`)."""
    found = given(verdicts).of(run)
    rows = evidence_lines(run, found)
    notes = _notes(run, found, brief=False)[:-1]
    if not found:
        notes = [f"run {run.id} has no stored test results"]
    return Sheet(
        f"volbench run {run.id}: is each figure the volume's?",
        EVIDENCE_COLUMNS,
        tuple(rows),
        document(run, found),
        tuple(notes),
    )


def marked(run: RunRecord, verdicts: Verdicts | None = None) -> list[Validity]:
    """The tests of ``run`` that carry a mark (``--strict``); ``verdicts``: the
    command's (:class:`Verdicts`)."""
    return [v for v in given(verdicts).of(run).values() if not v.valid]


def strict_message(found: Sequence[Validity]) -> str:
    """Why ``--strict`` fails a run: how many tests are marked, and each one's marks."""
    each = "; ".join(f"{v.test} ({', '.join(k.value for k in v.kinds)})" for v in found[:5])
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    return f"--strict: {len(found)} test(s) marked, their figures not the volume's: {each}{more}"
