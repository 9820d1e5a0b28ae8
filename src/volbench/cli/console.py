"""Terminal output: sheets as rich tables, and a rich progress Reporter.

Everything printed here is literal text: run labels, file names, targets, fio job
names and error messages come from users and files, so rich's markup (``[bold]``,
``[/]``) and emoji codes (``:smile:``) are switched off on both consoles and in
every progress column. Styles are given as ``style=`` arguments, never in the text.
Both consoles show the control characters of what they print as escapes
(:func:`volbench.visible_text.visible_lines`, ``ESC`` as ``\\x1b``): the only codes
that reach the terminal are the styles and cursor moves rich itself adds.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from volbench import output_file
from volbench.errors import UsageError
from volbench.fio.live import LiveSample
from volbench.model import TestResult, Workload
from volbench.report.export import export
from volbench.report.sheet import Sheet, fmt_count, fmt_latency
from volbench.visible_text import visible, visible_lines


class VisibleConsole(Console):
    """A rich console whose text shows its control characters as escapes, line breaks
    kept: every string as rich reads it (before rich drops some of them, BEL or CR),
    and every segment of text as it is written out, which also holds the text rich
    objects were given directly (a progress column's); rich's own control segments,
    the cursor moves of a live display, pass as they are."""

    def render_str(self, text: str, **options: Any) -> Text:
        return super().render_str(visible_lines(text), **options)

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            segment if segment.control else Segment(visible_lines(segment.text), segment.style)
            for segment in buffer
        )


# Tables are wide; when stdout is a file or pipe, do not wrap them at 80 columns.
stdout = VisibleConsole(
    highlight=False, markup=False, emoji=False, width=None if sys.stdout.isatty() else 200
)
stderr = VisibleConsole(stderr=True, highlight=False, markup=False, emoji=False, soft_wrap=True)


class _LiteralColumn(TextColumn):
    """A progress column whose text (a job or file name) is shown literally: no markup,
    its control characters as escapes (rich would drop some of them, BEL or CR)."""

    def render(self, task: Task) -> Text:
        text = visible(self.text_format.format(task=task))
        return Text(text, style=self.style, justify=self.justify)


def _text_column(template: str) -> TextColumn:
    """A progress column whose text (a job or file name) is shown literally."""
    return _LiteralColumn(template, markup=False)


def show(sheet: Sheet, fmt: str) -> None:
    """Print ``sheet`` in ``fmt``: a rich table, or an exporter's bytes verbatim."""
    if fmt != "table":
        sys.stdout.buffer.write(export(sheet, fmt))
        sys.stdout.flush()
        return
    if len(sheet.rows) > PLAIN_ROWS:
        sys.stdout.write(plain_table(sheet))
        sys.stdout.flush()
    else:
        table = Table(title=visible(sheet.title), title_justify="left")
        for column in sheet.columns:
            table.add_column(visible(column.header), justify="right" if column.numeric else "left")
        for index, cells in enumerate(sheet.cells()):
            table.add_row(*cells, style="bold yellow" if index in sheet.flagged_rows else None)
        stdout.print(table)
    for note in sheet.notes:
        stdout.print(visible(note), style="dim")


PLAIN_ROWS = 2_000
"""Sheets longer than this are printed as plain aligned columns: rich draws a table at
about 0.65 ms a row (22 s for the 20,000 tests of a large import, BENCHMARKS.md)."""


def plain_table(sheet: Sheet) -> str:
    """``sheet`` as aligned text columns under its title, a flagged row marked ``!``."""
    rows = [tuple(visible(c.header) for c in sheet.columns), *sheet.cells()]
    widths = [max(len(row[i]) for row in rows) for i in range(len(sheet.columns))]

    def line(cells: Sequence[str], mark: str) -> str:
        aligned = (
            cell.rjust(width) if column.numeric else cell.ljust(width)
            for cell, width, column in zip(cells, widths, sheet.columns, strict=True)
        )
        return f"{mark} {'  '.join(aligned).rstrip()}\n"

    flagged = sheet.flagged_rows
    body = "".join(line(cells, "!" if i in flagged else " ") for i, cells in enumerate(rows[1:]))
    return f"{visible(sheet.title)}\n{line(rows[0], ' ')}{body}"


def show_report(
    sheets: Sequence[Sheet], document: Mapping[str, Any], fmt: str, output: str | None = None
) -> None:
    """Several sheets in ``fmt``: tables one after another, json as one document,
    csv and markdown one after another; to stdout or the file ``output``."""
    if fmt == "table":
        if output is not None:
            raise UsageError("--output needs --format json, csv or markdown")
        for sheet in sheets:
            show(sheet, "table")
        return
    if fmt == "json":
        data = export(Sheet("report", (), (), document), "json")
    else:
        data = b"\n".join(export(sheet, fmt) for sheet in sheets)
    write_output(data, output)


def write_output(data: bytes, path: str | None) -> None:
    """The one place volbench writes an exported file (or stdout for ``-``/None)."""
    if path in (None, "-"):
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    assert path is not None
    output_file.write_bytes(path, data, "the output file")
    click.echo(visible(f"wrote {path} ({len(data):,} bytes)"), err=True)


class ProgressReporter:
    """Shows preparation and each round with a bar, live figures and ETA (on stderr)."""

    def __init__(self) -> None:
        self._progress = Progress(
            _text_column("{task.description}"),
            BarColumn(),
            TextColumn("{task.percentage:>3.0f}%"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            _text_column("{task.fields[live]}"),
            console=stderr,
            transient=False,
            # off a terminal rich draws nothing between start and stop, yet its refresh
            # thread would build the bar's table ten times a second
            auto_refresh=_redrawn(),
        )
        self._task: TaskID | None = None
        self._bytes: int | None = None  # a round that ends at a size: its bytes, the bar's
        self._name = ""
        self._started = 0.0
        self._step: tuple[TaskID, int] | None = None  # a step's bar, and its tests
        self._prep: Progress | None = None
        self._prep_task: TaskID | None = None

    def preparing(self, message: str, total_bytes: int) -> None:
        self._prep = Progress(
            _text_column("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TimeRemainingColumn(),
            console=stderr,
            auto_refresh=_redrawn(),
        )
        self._prep.start()
        self._prep_task = self._prep.add_task(message, total=total_bytes)

    def prepared(self, done_bytes: int) -> None:
        if self._prep is not None and self._prep_task is not None:
            self._prep.update(self._prep_task, completed=done_bytes)
            task = self._prep.tasks[0]
            if task.total is not None and done_bytes >= task.total:
                self._prep.stop()
                self._prep = None

    def round_started(self, round_no: int, workloads: Sequence[Workload], planned_s: float) -> None:
        if self._prep is not None:
            self._prep.stop()
            self._prep = None
        if self._step is not None:  # one test of a step: the step's bar goes on
            self._name = workloads[0].name
            return
        self._progress.start()
        self._started = time.monotonic()
        self._name = ", ".join(w.name for w in workloads[:2]) + (" ..." if workloads[2:] else "")
        self._bytes = _planned_bytes(workloads)
        self._task = self._progress.add_task(
            f"round {round_no}: {workloads[0].name}", total=self._bytes or planned_s, live=""
        )

    def sample(self, sample: LiveSample) -> None:
        if self._task is None:
            return
        live = _figures(sample.iops, sample.bw_bytes_per_s, sample.lat_mean_ns)
        done = sample.io_bytes if self._bytes else time.monotonic() - self._started
        self._progress.update(self._task, description=sample.job, completed=done, live=live)

    def step_started(self, label: str, workloads: Sequence[Workload], planned_s: float) -> None:
        if self._prep is not None:
            self._prep.stop()
            self._prep = None
        self._progress.start()
        self._started = time.monotonic()
        self._task = self._progress.add_task(label, total=planned_s, live="")
        self._step = (self._task, len(workloads))

    def step_done(self, label: str) -> None:
        if self._step is None:
            return
        task, count = self._step
        total = self._progress.tasks[-1].total
        done = f"{label}: {count} tests done"  # the last test's live figures are not the step's
        self._progress.update(task, completed=total, description=done, live="")
        self._progress.stop()  # leaves the step's finished bar printed, once
        self._progress.remove_task(task)
        self._step = None
        self._task = None

    def round_done(self, round_no: int, tests: Sequence[TestResult]) -> None:
        if self._step is not None:  # the step's bar is printed when the step is done
            return
        if self._task is not None:
            total = self._progress.tasks[-1].total
            done = f"round {round_no} done: {self._name}"
            self._progress.update(self._task, completed=total, description=done)
            if tests:  # fio's result, not its last status
                self._progress.update(self._task, live=_final(tests))
        self._progress.stop()  # leaves the round's finished bar printed, once
        if self._task is not None:  # not drawn again with the next round's bar
            self._progress.remove_task(self._task)
        self._task = None

    def note(self, message: str) -> None:
        stderr.print(message, style="bold yellow" if message.startswith("warning:") else "dim")

    def close(self) -> None:
        """Stop every live display (also after an error), restoring the cursor."""
        if self._prep is not None:
            self._prep.stop()
            self._prep = None
        self._progress.stop()


def _redrawn() -> bool:
    """Whether the live bars are drawn as they go (stderr a terminal rich draws on):
    elsewhere rich prints each bar once, as it stops."""
    return stderr.is_jupyter or (stderr.is_terminal and not stderr.is_dumb_terminal)


def _planned_bytes(workloads: Sequence[Workload]) -> int | None:
    """The bytes a round's tests end at, when each ends at its size, once through (not
    time-based: a fill, a first-touch pass); None when time ends any of them."""
    if not workloads or any(w.time_based or w.size_bytes is None for w in workloads):
        return None
    return sum((w.size_bytes or 0) * w.numjobs for w in workloads)


def _figures(iops: float, bw_bytes_per_s: float, lat_mean_ns: float | None) -> str:
    """The figures a round's line shows: IOPS, MB/s, mean latency."""
    lat = fmt_latency(lat_mean_ns) if lat_mean_ns is not None else "-"
    return f"{fmt_count(iops)} IOPS  {bw_bytes_per_s / 1e6:,.1f} MB/s  {lat}"


def _final(tests: Sequence[TestResult]) -> str:
    """A finished round's figures from fio's result: IOPS and bytes/s summed over its
    tests' directions, the mean latency (of the kind fio gave) weighted by IOPS."""
    directions = [d for t in tests for d in t.directions.values() if d.iops > 0]
    timed = [(d.iops, d.latency.mean_ns) for d in directions if d.latency is not None]
    weight = sum(iops for iops, _ in timed)
    lat = sum(iops * ns for iops, ns in timed) / weight if weight > 0 else None
    return _figures(sum(d.iops for d in directions), sum(d.bw_bytes_per_s for d in directions), lat)
