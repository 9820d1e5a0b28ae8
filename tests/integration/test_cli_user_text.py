"""Text from users and files is printed literally by the real command: rich markup in
a label or a file name neither crashes volbench after the run is stored (it used to
end with rich.errors.MarkupError, exit 1) nor is swallowed (``k=[bold]x`` showed as
``k=x``), and its control characters are shown as escapes, never obeyed."""

from __future__ import annotations

import json
import shutil
import unicodedata
from pathlib import Path

import pytest
from cli_harness import Volbench, run_all

FIXTURES = Path(__file__).parents[1] / "fixtures" / "fio"


def test_markup_in_labels_and_file_names_is_printed_literally(volbench: Volbench) -> None:
    hostile = volbench.home / "[/red]x.json"  # a file red]x.json in a folder named [
    hostile.parent.mkdir()
    shutil.copy(FIXTURES / "randread_json.json", hostile)
    imported = volbench("import", str(hostile), "--label", "k=[bold]x")
    assert imported.returncode == 0, imported.stderr
    assert f"imported {hostile} as run 1" in imported.stderr
    assert "k=[bold]x" in imported.stdout
    labelled, listed, shown = run_all(
        [
            (volbench, ("label", "1", "note=[/oops]"), None),
            (volbench, ("runs",), None),
            (volbench, ("show", "1"), None),
        ]
    )
    for proc in (labelled, listed, shown):
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
    assert "run 1 labels: k=[bold]x note=[/oops]" in labelled.stderr
    assert "k=[bold]x" in listed.stdout
    assert "k=[bold]x" in shown.stdout


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_a_run_labelled_with_markup_ends_well(volbench: Volbench) -> None:
    proc = volbench.quick(volbench.home / "scratch.img", "--label", "k=[/]")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "k=[/]" in proc.stdout
    assert volbench.stored()["labels"] == {"k": "[/]"}


JOB = "job\x1b[2J\x1b]0;pwned\x07\x9b31m"
"""A fio job name that clears the screen (CSI), sets the terminal's title (OSC) and
starts a C1 CSI."""
SHOWN = "job\\x1b[2J\\x1b]0;pwned\\x07\\x9b31m"


def test_escape_sequences_in_job_and_file_names_are_shown_not_obeyed(
    volbench: Volbench,
) -> None:
    """Regression (issue 31, item 5): `volbench show latest | cat -v` showed ``^[[2J``:
    job and file names from an imported fio output reached the terminal and the
    Markdown and CSV exports raw. Now each control character is shown as its escape
    (JSON keeps the name exact, escaped by JSON)."""
    document = json.loads((FIXTURES / "randread_json.json").read_text())
    for job in document["jobs"]:
        job["jobname"] = JOB
        job["job options"]["filename"] = "/tmp/f\x1b[31mred"
    source = volbench.home / "out\x1b[5mput.json"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(json.dumps(document))
    imported = volbench("import", str(source))
    assert imported.returncode == 0, imported.stderr
    assert "out\\x1b[5mput.json as run 1" in imported.stderr
    commands = [("show", "latest"), ("runs",), ("explain", "latest")]
    commands += [("show", "latest", "--format", f) for f in ("markdown", "csv")]
    commands += [("export", "latest", "--format", f) for f in ("markdown", "csv")]
    for args, proc in zip(commands, run_all([(volbench, c, None) for c in commands]), strict=True):
        assert proc.returncode == 0, proc.stderr
        printed = proc.stdout + proc.stderr
        assert not [c for c in printed if c not in "\n" and unicodedata.category(c) == "Cc"]
        assert SHOWN in printed, (args, printed)
    assert "/tmp/f\\x1b[31mred" in volbench("runs").stdout
    shown = json.loads(volbench("show", "latest", "--format", "json").stdout)
    assert {row["test"] for row in shown["results"]} == {JOB}  # JSON: exact
    assert shown["target"]["path"] == "/tmp/f\x1b[31mred"
