"""Hostile option values (issue 22), each through the real entry point: one line on
stderr, exit code 2, no traceback, an answer in well under a second, and no ``nan``
or ``Infinity`` printed by a command that succeeds."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from volbench.cli.main import main
from volbench.cli.options import parse_count_list, parse_duration, parse_number
from volbench.errors import UsageError
from volbench.fio.bounds import MAX_IODEPTH, MAX_LIST_VALUES, MAX_NUMJOBS
from volbench.units import MAX_SIZE, parse_size


def _main(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[int, str, str, float]:
    """The real command in this process: (exit code, stdout, stderr, seconds)."""
    monkeypatch.setattr("sys.argv", ["volbench", *argv])
    started = time.perf_counter()
    code = 0
    try:
        main()
    except SystemExit as ended:
        code = int(ended.code or 0)
    seconds = time.perf_counter() - started
    captured = capsys.readouterr()
    return code, captured.out, captured.err, seconds


def _refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str
) -> str:
    code, out, err, seconds = _main(monkeypatch, capsys, *argv)
    assert code == 2, (code, out, err)
    assert err.startswith("volbench: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and seconds < 5, seconds
    return err


@pytest.fixture
def target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A file target not made yet (a dry run creates nothing), and a store of its own."""
    monkeypatch.setenv("VOLBENCH_DB", str(tmp_path / "store.db"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return str(tmp_path / "target.img")


def test_a_5000_digit_block_size(
    target: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was a ValueError traceback in units.py (int() of more than 4,300 digits)."""
    err = _refused(
        monkeypatch,
        capsys,
        "run",
        "sweep",
        "--dry-run",
        "--target",
        target,
        "--size",
        "8m",
        "--bs",
        "9" * 5000,
    )
    assert "invalid size '9999" in err and "at most 40 digits" in err and len(err) < 300


@pytest.mark.parametrize(
    ("plan", "args", "message"),
    [
        ("sweep", ("--bs", "4g"), "at most 2,147,479,552 bytes"),  # beyond one read
        # was 5.2 GB and no answer in 60 s: the range is refused before it is expanded
        ("sweep", ("--iodepth", "1..30000000"), "each value from 1 to 32,768"),
        (
            "sweep",
            ("--iodepth", "1..256", "--numjobs", "1..20"),
            "5,120 points (--iodepth x --numjobs): at most 4,096",
        ),
        ("iometer", ("--workers", "1..99999999"), "each value from 1 to 4,096"),  # MemoryError
        ("iometer", ("--workers", "1..4096"), f"more than {MAX_LIST_VALUES} values"),
    ],
)
def test_grids_beyond_the_limits_are_refused_before_they_are_expanded(
    target: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    plan: str,
    args: tuple[str, ...],
    message: str,
) -> None:
    err = _refused(
        monkeypatch, capsys, "run", plan, "--dry-run", "--target", target, "--size", "8m", *args
    )
    assert message in err


def test_provisioned_iops_1e400(
    target: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Was an OverflowError traceback in specs/limits.py."""
    err = _refused(
        monkeypatch,
        capsys,
        "spec",
        "expect",
        "aws-gp3",
        "--size",
        "100",
        "--provisioned-iops",
        "1e400",
    )
    assert "invalid number '1e400'" in err


def test_cost_over_1e308_months_is_refused_not_infinity(
    target: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Printed `Infinity`."""
    err = _refused(monkeypatch, capsys, "cost", "aws-gp3", "--size", "100", "--months", "1e308")
    assert "invalid number '1e308': it must be from 0 to 1e+12" in err
    code, out, _, _ = _main(
        monkeypatch,
        capsys,
        "cost",
        "aws-gp3",
        "--size",
        "65536",
        "--months",
        "1e12",
        "--format",
        "json",
    )
    assert code == 0 and "Infinity" not in out and "NaN" not in out


@pytest.mark.parametrize("value", ["nan", "inf", "1e400"])
def test_qos_fit_host_used_nan(
    target: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    """`--host-used nan` gave alpha nan (click's FloatRange takes nan and inf)."""
    err = _refused(
        monkeypatch,
        capsys,
        "qos",
        "fit",
        "--capability",
        "3888",
        "--host-used",
        value,
        "--measured",
        "a=118",
    )
    assert "must be numbers" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--latency-target", "1.2.3ms"), "invalid latency target '1.2.3ms'"),
        (("--latency-target", "9" * 400 + "ms"), "invalid latency target"),
        (("--runtime", "9" * 30), "at most 366 days"),
        (("--ramp-time", "1e400"), "invalid duration '1e400'"),
        (("--hourly-cost", "9" * 30), "at most 1e+09"),
        (("--product", "aws-gp3", "--label", "size_gib=nan"), "label size_gib='nan' is not a"),
        (("--product", "aws-gp3", "--label", "size_gib=1e308"), "at most 1e+12"),
    ],
)
def test_other_hostile_run_options(
    target: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    message: str,
) -> None:
    err = _refused(
        monkeypatch, capsys, "run", "sweep", "--dry-run", "--target", target, "--size", "8m", *args
    )
    assert message in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--capability", "iops=" + "9" * 50, "--tenant", "a:1"), "invalid IOPS"),
        (("--capability", "iops=1000", "--tenant", "a:" + "9" * 45), "at most 40 digits"),
        (("--capability", "iops=1000", "--tenant", "a:1", "--volume-size", "nan"), "volume size"),
        (("--capability", "iops=1000", "--tenant", "a:1", "--alpha", "nan"), "alpha must be"),
    ],
)
def test_qos_plan_figures_are_finite(
    target: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    message: str,
) -> None:
    assert message in _refused(monkeypatch, capsys, "qos", "plan", *args)


def test_the_parsers_state_their_limits() -> None:
    assert parse_size(str(MAX_SIZE)) == MAX_SIZE
    assert parse_count_list("1-32768", MAX_IODEPTH)[-1] == MAX_IODEPTH == 32768
    assert parse_count_list("4096", MAX_NUMJOBS) == (4096,)
    assert parse_duration("366d".replace("366d", "8784h")) == 366 * 86400
    assert parse_number("2e3") == 2000.0
    for text in ("nan", "inf", "-1", "1e16", "0x10", "1_000", ""):
        with pytest.raises(UsageError):
            parse_number(text)
