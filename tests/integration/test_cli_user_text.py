"""Text from users and files is printed literally by the real command: rich markup in
a label or a file name neither crashes volbench after the run is stored (it used to
end with rich.errors.MarkupError, exit 1) nor is swallowed (``k=[bold]x`` showed as
``k=x``)."""

from __future__ import annotations

import shutil
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
