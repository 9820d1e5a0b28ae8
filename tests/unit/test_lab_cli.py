"""``volbench lab`` through the real entry point: bad input is one line and exit
code 2 before anything boots; ``lab list`` of an empty lab; a product's limits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from volbench.cli.main import main


def run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[int, str, str]:
    """The real command in this process: (exit code, stdout, stderr)."""
    monkeypatch.setattr("sys.argv", ["volbench", *argv])
    code = 0
    try:
        main()
    except SystemExit as ended:
        code = int(ended.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(autouse=True)
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VOLBENCH_LAB_DIR", str(tmp_path / "lab"))
    monkeypatch.setenv("VOLBENCH_DB", str(tmp_path / "volbench.db"))  # never the user's store
    return tmp_path / "lab"


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (("lab", "up", "Bad!"), "invalid guest name"),
        (("lab", "up", "x", "--product", "nope"), "unknown product"),
        (("lab", "up", "x", "--product", "aws-gp2", "--iops-total", "5"), "not both"),
        (("lab", "up", "x", "--product", "aws-io1", "--size", "100g"), "provisioned-iops"),
        (("lab", "up", "x", "--size", "100"), "at least 64 MiB"),
        (("lab", "up", "x", "--iops-total", "5", "--burst-iops", "10"), "go together"),
        (("lab", "up", "x", "--kernel", "/nonexistent/vmlinuz"), "no such file"),
        (("lab", "down"), "a guest NAME or --all"),
        (("lab", "down", "nope"), "no lab guest nope"),
        (("lab", "limit", "nope", "--iops-total", "5"), "lab up nope"),
        (("run", "quick", "--hosts", "lab://nope", "--size", "64m"), "lab up nope"),
        (("run", "quick", "--hosts", "lab://a/b", "--size", "64m"), "use lab://NAME"),
    ],
)
def test_bad_input_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    lab: Path,
    argv: tuple[str, ...],
    says: str,
) -> None:
    code, out, err = run(monkeypatch, capsys, *argv)
    assert code == 2, (code, out, err)
    line = err.strip()  # a run's progress display may leave a blank line first
    assert line.startswith("volbench: error: ") and "\n" not in line, err
    assert says in err
    assert not (lab / "guests").exists() or not any((lab / "guests").iterdir())


def test_list_of_an_empty_lab(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(monkeypatch, capsys, "lab", "list", "--format", "json")
    assert code == 0, err
    assert json.loads(out) == {"schema": "volbench.lab/1", "guests": []}
    code, out, err = run(monkeypatch, capsys, "lab", "down", "--all")
    assert (code, out.strip()) == (0, "stopped and removed: no guest")
