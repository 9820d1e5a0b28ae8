"""User, file and fio text reaches the terminal literally: rich markup in it is neither
interpreted (``k=[bold]x`` stays ``k=[bold]x``) nor an error (``[/]`` used to raise
rich.errors.MarkupError after the run was stored), and its control characters are
shown as escapes, never obeyed, at the terminal and in the Markdown, CSV and HTML
exports (JSON keeps them exact, escaped by JSON itself)."""

from __future__ import annotations

import io
import json

import pytest
from recorded import fixture_text
from rich.console import Console

from volbench.analysis.aggregate import group_tests
from volbench.cli import console
from volbench.fio.live import LiveSample
from volbench.fio.parser import parse
from volbench.model import RW, Workload
from volbench.report.export import export
from volbench.report.html import render_sheet
from volbench.report.sheet import Column, Sheet
from volbench.visible_text import visible, visible_lines

HOSTILE = ("k=[/]", "note=[/oops]", "[/red]x.json", "k=[bold]x", "[link=file:///etc]y", ":smile:")


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> dict[str, io.StringIO]:
    """Both consoles of the CLI, writing to strings (with the CLI's own settings)."""
    buffers = {"stdout": io.StringIO(), "stderr": io.StringIO()}
    for name, buffer in buffers.items():
        terminal: Console = getattr(console, name)
        # rich's `file` property stores `_file`; undoing a set of `file` would pin
        # the console to the stream of this test's capture: swap `_file` itself
        monkeypatch.setattr(terminal, "_file", buffer)
        monkeypatch.setattr(terminal, "width", 200)
    return buffers


def _sheet(texts: tuple[str, ...]) -> Sheet:
    rows = tuple({"label": text} for text in texts)
    return Sheet(
        title=f"run {texts[0]}",
        columns=(Column("label", f"header {texts[1]}"),),
        rows=rows,
        document={},
        notes=tuple(f"note {text}" for text in texts),
    )


def test_sheet_cells_titles_and_notes_are_literal(captured: dict[str, io.StringIO]) -> None:
    console.show(_sheet(HOSTILE), "table")
    out = captured["stdout"].getvalue()
    assert f"run {HOSTILE[0]}" in out and f"header {HOSTILE[1]}" in out
    for text in HOSTILE:
        assert text in out
        assert f"note {text}" in out


def test_stderr_lines_and_notes_are_literal(captured: dict[str, io.StringIO]) -> None:
    reporter = console.ProgressReporter()
    for text in HOSTILE:
        console.stderr.print(f"run 1 labels: {text}")
        reporter.note(f"warning: {text}")
    err = captured["stderr"].getvalue()
    for text in HOSTILE:
        assert f"run 1 labels: {text}" in err
        assert f"warning: {text}" in err


def test_progress_descriptions_are_literal(captured: dict[str, io.StringIO]) -> None:
    reporter = console.ProgressReporter()
    try:
        reporter.preparing(f"filling {HOSTILE[2]}", 100)
        reporter.prepared(100)
        workload = Workload(HOSTILE[0], RW.RANDREAD, bs_bytes=4096, runtime_s=1)
        reporter.round_started(0, [workload], 1.0)
        reporter.sample(LiveSample(HOSTILE[1], 1000.0, 4096000.0, 50_000.0, 1.0))
    finally:
        reporter.close()  # the last frame, as the terminal was left
    err = captured["stderr"].getvalue()
    assert f"filling {HOSTILE[2]}" in err
    assert HOSTILE[1] in err


def test_a_long_sheet_is_printed_as_plain_aligned_columns() -> None:
    """Over :data:`console.PLAIN_ROWS` rows, a sheet is aligned text (rich takes 0.65 ms
    a row): the title, the headers, each row's cells in its columns, numbers to the
    right, a flagged row marked; cells are printed as they are (no markup)."""
    rows = tuple({"test": f"[b]job-{i}", "iops": 1000 * i} for i in range(3))
    sheet = Sheet(
        "long",
        (Column("test", "Test"), Column("iops", "IOPS", numeric=True)),
        rows,
        {},
        flagged_rows=frozenset({1}),
    )
    lines = console.plain_table(sheet).splitlines()
    assert lines[0] == "long"
    assert lines[1] == "  Test      IOPS"
    assert lines[2:] == ["  [b]job-0     0", "! [b]job-1  1000", "  [b]job-2  2000"]


def test_a_finished_round_shows_fios_result_not_its_last_status(
    captured: dict[str, io.StringIO],
) -> None:
    """The last status fio printed (34,845 IOPS a second before the end of a 6 s test)
    is not its result (51,672 IOPS over the test): a round's finished line shows fio's
    result from the parsed output, as the tables do."""
    test = parse(fixture_text("quick/round-000.json"))
    (result,) = [t for t in group_tests(test) if t.name == "randread-4k-iops"]
    reporter = console.ProgressReporter()
    try:
        workload = Workload(result.name, RW.RANDREAD, bs_bytes=4096, runtime_s=1)
        reporter.round_started(0, [workload], 1.0)
        reporter.sample(LiveSample(result.name, 12_345.0, 50_565_120.0, 50_000.0, 1.0))
        reporter.round_done(0, [result])
    finally:
        reporter.close()
    last = captured["stderr"].getvalue().rstrip().splitlines()[-1]
    assert "round 0 done" in last and f"{result.iops:,.0f} IOPS" in last, last
    assert "12,345" not in last


ESCAPES = {
    "clear\x1b[2J": "clear\\x1b[2J",  # CSI: clears the screen
    "title\x1b]0;pwned\x07": "title\\x1b]0;pwned\\x07",  # OSC: sets the window's title
    "c1\x9b31m": "c1\\x9b31m",  # C1 CSI, one character
    "bidi\u202etxt.exe": "bidi\\u202etxt.exe",  # right-to-left override
    "two\nlines\rback": "two\\nlines\\rback",
}
"""Text from outside (fio job and file names) and how volbench prints it."""


def raw_controls(text: str) -> list[str]:
    """The control characters of ``text`` other than line breaks (printed raw)."""
    return [c for c in text if c != "\n" and (ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0)]


def test_control_characters_are_shown_not_obeyed(captured: dict[str, io.StringIO]) -> None:
    """Regression (issue 31, item 5): a job name holding ``ESC [ 2 J`` cleared the
    terminal of whoever ran ``volbench show``; now every control character shows as its
    escape, in rich tables, plain tables, titles, notes, messages and progress lines."""
    texts = tuple(ESCAPES)
    console.show(_sheet(texts), "table")
    plain = console.plain_table(_sheet(texts))
    reporter = console.ProgressReporter()
    try:
        reporter.round_started(0, [Workload(texts[0], RW.RANDREAD, bs_bytes=4096)], 1.0)
        reporter.round_done(0, [])  # its last frame: "round 0 done: NAME"
        reporter.round_started(1, [Workload(texts[3], RW.RANDREAD, bs_bytes=4096)], 1.0)
        reporter.sample(LiveSample(texts[1], 1000.0, 4096000.0, 50_000.0, 1.0))
    finally:
        reporter.close()  # its last frame: fio's job name of the last sample
    console.stderr.print(f"imported {texts[2]} as run 1")
    out, err = captured["stdout"].getvalue(), captured["stderr"].getvalue()
    assert raw_controls(out + plain + err) == []
    for shown in ESCAPES.values():
        assert f"┃ {shown}" in out or f"│ {shown}" in out  # the cell (or the header)
        assert f"note {shown}\n" in out
        assert f"  {shown}" in plain
    assert f"run {ESCAPES[texts[0]]}" in out and f"run {ESCAPES[texts[0]]}\n" in plain
    assert f"round 0 done: {ESCAPES[texts[0]]} " in err
    assert f"{ESCAPES[texts[1]]} " in err and f"imported {ESCAPES[texts[2]]} as run 1" in err


def test_exports_show_control_characters_and_json_keeps_them() -> None:
    texts = tuple(ESCAPES)
    sheet = Sheet(
        f"run {texts[0]}",
        (Column("test", "Test"),),
        tuple({"test": text, "files": [text]} for text in texts),
        {"jobs": list(texts)},
        notes=(f"target {texts[1]}",),
    )
    markdown = export(sheet, "markdown").decode()
    table = export(sheet, "csv").decode()
    page = render_sheet(sheet)
    for text in (markdown, table, page):
        assert raw_controls(text) == [], text
    for original, shown in ESCAPES.items():
        assert f"| {shown} |" in markdown
        assert f"\n{shown}," in table
        assert f"<td>{shown}</td>" in page
        assert json.dumps([original]).replace('"', '""') in table  # JSON, escaped by json
    assert f"## run {ESCAPES[texts[0]]}" in markdown and f"<h3>run {ESCAPES[texts[0]]}" in page
    assert f"- target {ESCAPES[texts[1]]}" in markdown and f"target {ESCAPES[texts[1]]}" in page
    assert json.loads(export(sheet, "json"))["jobs"] == list(texts)  # exact


def test_visible_text() -> None:
    assert visible("plain µs · text") == "plain µs · text"
    assert visible("a\x00b\x7fc\x85d\u2028e\ud800") == "a\\x00b\\x7fc\\x85d\\u2028e\\ud800"
    assert visible_lines("one\x1b[2J\ntwo\t") == "one\\x1b[2J\ntwo\\t"


def test_a_round_that_ends_at_its_size_counts_fios_bytes(
    captured: dict[str, io.StringIO],
) -> None:
    """A fill (``--fill``: once through 64 MiB, not time-based) has no planned time:
    its bar counts fio's bytes, 16 of 64 MiB a quarter of the way."""
    reporter = console.ProgressReporter()
    try:
        fill = Workload("fill", RW.WRITE, size_bytes=64 << 20, runtime_s=None, time_based=False)
        reporter.round_started(0, [fill], 0.0)
        reporter.sample(LiveSample("fill", 128.0, 16_777_216.0, 50_000.0, 1.0, 16 << 20))
    finally:
        reporter.close()
    last = captured["stderr"].getvalue().rstrip().splitlines()[-1]
    assert " 25%" in last, last
