"""Errors of the real ``volbench`` command: one line, the right exit code, no traceback.

Exit codes (DESIGN.md): 2 bad usage or input (options, targets, the store),
3 the run itself failed (fio missing or failing). A failed run is stored as
``failed`` with what completed before the failure.

The errors that stop volbench before fio starts are independent of each other:
:func:`early_errors` starts them all at once (each is mostly Python start-up)
and the tests below check one each.
"""

from __future__ import annotations

import copy
import shutil
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from cli_harness import (
    QUICK_TESTS,
    Volbench,
    error_line,
    only_error_line,
    run_all,
)

from volbench.errors import FioError
from volbench.fio.runner import SubprocessRunner
from volbench.model import RW, RunStatus, Workload
from volbench.plans.imported.importing import import_file
from volbench.plans.placement.preparation import prepare_target
from volbench.plans.runs.engine import execute
from volbench.plans.runs.execution import PlanSpec, Session
from volbench.plans.runs.reporter import NullReporter
from volbench.store.repository import Store
from volbench.targets.scratch import is_volbench_file

MiB = 1 << 20
FIXTURES = Path(__file__).parents[1] / "fixtures" / "fio"
UNREACHABLE_PG = "postgresql://nobody@127.0.0.1:1/x"
HELP_HINT = "(see python -m volbench run quick --help)"

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


@dataclass
class Case:
    """One command that must fail before fio starts, in its own volbench home."""

    args: tuple[str, ...]
    exit_code: int = 2
    env: Mapping[str, str] | None = None
    quick: bool = False  # `run quick --target HOME/scratch.img` + short-run options first
    volbench: Volbench = field(init=False)
    proc: subprocess.CompletedProcess[str] = field(init=False)

    @property
    def target(self) -> Path:
        return self.volbench.home / "scratch.img"

    def argv(self) -> tuple[str, ...]:
        """The command line; a case's own ``--target`` replaces the scratch file (a
        second ``--target`` would add a second target to measure at once)."""
        if not self.quick:
            return self.args
        args, target = list(self.args), str(self.target)
        if "--target" in args:
            at = args.index("--target")
            target = args[at + 1]
            del args[at : at + 2]
        return self.volbench.quick_args(target, *args)


CASES: dict[str, Case] = {
    "size-zero": Case(("--size", "0"), quick=True),
    "size-abc": Case(("--size", "abc"), quick=True),
    "iodepth-zero": Case(("--iodepth", "0"), quick=True),
    "runtime-zero": Case(("--runtime", "0"), quick=True),
    "label-no-value": Case(("--label", "novalue"), quick=True),
    "unknown-option": Case(("runs", "--no-such-option")),
    "missing-dir": Case(("--target", "{home}/no-such-dir/scratch.img"), quick=True),
    "missing-device": Case(("--target", "/dev/volbench-no-such-device"), quick=True),
    "directory": Case(("--target", "{home}"), quick=True),
    "foreign-file": Case(("--target", "{home}/precious.dat"), quick=True),
    "show-999": Case(("show", "999")),
    "show-latest-empty": Case(("show", "latest")),
    "show-no-store": Case(("show", "latest")),
    "pg-runs": Case(("runs", "--db", UNREACHABLE_PG)),
    "pg-quick": Case(("--db", UNREACHABLE_PG), quick=True),
    "db-missing-dir": Case(("runs",), env={"VOLBENCH_DB": "{home}/missing/store.db"}),
    "fio-missing": Case((), exit_code=3, env={"PATH": "{home}/empty-bin"}, quick=True),
    "import-not-fio": Case(("import", "{home}/notes.txt")),
    "import-broken": Case(("import", "{home}/broken.json")),
    "import-absent": Case(("import", "{home}/absent.json")),
    "export-no-dir": Case(("export", "latest", "-o", "{home}/no-such-dir/run.json")),
}

FOREIGN = b"somebody's data\n" * 4096


@pytest.fixture(scope="module")
def early_errors(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    """Every case of CASES, run concurrently, each in a fresh volbench home."""
    root = tmp_path_factory.mktemp("errors")
    cases = {name: copy.copy(case) for name, case in CASES.items()}
    for name, case in cases.items():
        case.volbench = Volbench(root / name)
        home = str(case.volbench.home)
        case.args = tuple(a.replace("{home}", home) for a in case.args)
        if case.env is not None:
            case.env = {k: v.replace("{home}", home) for k, v in case.env.items()}
    home = {name: case.volbench.home for name, case in cases.items()}
    (home["foreign-file"] / "precious.dat").write_bytes(FOREIGN)
    (home["fio-missing"] / "empty-bin").mkdir()
    (home["import-not-fio"] / "notes.txt").write_text("hello, no JSON here\n")
    (home["import-broken"] / "broken.json").write_text('{"fio version": "fio-3.33", "jobs": [}')
    for name in ("show-999", "show-latest-empty"):  # stores without runs
        Store.open(str(cases[name].volbench.db)).close()
    with Store.open(str(cases["export-no-dir"].volbench.db)) as store:
        import_file(store, FIXTURES / "randread_json.json", {})
    results = run_all([(case.volbench, case.argv(), case.env) for case in cases.values()])
    for case, proc in zip(cases.values(), results, strict=True):
        case.proc = proc
    return cases


def _line(cases: dict[str, Case], name: str) -> str:
    """The case's only stderr line, after checking its exit code."""
    case = cases[name]
    return only_error_line(case.proc, case.exit_code)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("size-zero", "Invalid value for '--size': invalid size '0': it must be positive"),
        ("size-abc", "Invalid value for '--size': invalid size 'abc': use a byte count"),
        ("iodepth-zero", "Invalid value for '--iodepth': 0 is not in the range 1<=x<=32768"),
        ("runtime-zero", "Invalid value for '--runtime': invalid duration '0': it must be"),
        ("label-no-value", "Invalid value for '--label': invalid label 'novalue': use key=value"),
    ],
)
def test_invalid_option_values(early_errors: dict[str, Case], name: str, expected: str) -> None:
    line = _line(early_errors, name)
    assert line.startswith(f"volbench: error: {expected}")
    assert line.endswith(HELP_HINT)
    case = early_errors[name]
    assert not case.target.exists()  # nothing was created before the options were checked
    assert not case.volbench.db.exists()


def test_unknown_option(early_errors: dict[str, Case]) -> None:
    line = _line(early_errors, "unknown-option")
    assert line == (
        "volbench: error: No such option '--no-such-option'. (see python -m volbench runs --help)"
    )


def test_target_in_missing_directory(early_errors: dict[str, Case]) -> None:
    case = early_errors["missing-dir"]
    missing = case.volbench.home / "no-such-dir" / "scratch.img"
    assert _line(early_errors, "missing-dir") == (
        f"volbench: error: cannot create {missing}: directory {missing.parent} does not exist"
    )
    assert not missing.parent.exists()
    assert case.volbench.stored_runs() == []


def test_missing_block_device(early_errors: dict[str, Case]) -> None:
    assert _line(early_errors, "missing-device") == (
        "volbench: error: refusing to write /dev/volbench-no-such-device: it does not exist "
        "(check the device name)"
    )


def test_directory_target(early_errors: dict[str, Case]) -> None:
    home = early_errors["directory"].volbench.home
    assert _line(early_errors, "directory").startswith(
        f"volbench: error: cannot write {home}: it is a directory (give a file path inside it"
    )


def test_foreign_file_is_refused_without_force(early_errors: dict[str, Case]) -> None:
    case = early_errors["foreign-file"]
    target = case.volbench.home / "precious.dat"
    assert _line(early_errors, "foreign-file") == (
        f"volbench: error: refusing to overwrite {target}: volbench did not create it "
        f"(use --force to overwrite it)"
    )
    assert target.read_bytes() == FOREIGN
    assert case.volbench.stored_runs() == []


@needs_fio
def test_foreign_file_is_run_with_force(volbench: Volbench) -> None:
    target = volbench.home / "precious.dat"
    target.write_bytes(FOREIGN)
    proc = volbench.quick(target, "--force")  # default format: the table
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    for name in QUICK_TESTS:
        assert f" {name} " in proc.stdout
    assert f"quick · completed · target {target}" in proc.stdout
    assert is_volbench_file(target)
    assert target.stat().st_size == 32 * MiB
    assert volbench.stored()["status"] == "completed"


def test_unknown_runs(early_errors: dict[str, Case]) -> None:
    db = early_errors["show-999"].volbench.db
    assert _line(early_errors, "show-999") == (
        f"volbench: error: no run 999 in sqlite:///{db} (see volbench runs)"
    )
    db = early_errors["show-latest-empty"].volbench.db
    assert _line(early_errors, "show-latest-empty") == (
        f"volbench: error: no runs in sqlite:///{db} yet"
    )


def test_reading_a_missing_store_creates_none(early_errors: dict[str, Case]) -> None:
    case = early_errors["show-no-store"]
    assert _line(early_errors, "show-no-store") == (
        f"volbench: error: no result store at {case.volbench.db} "
        "(a run creates it; check --db or VOLBENCH_DB)"
    )
    assert list(case.volbench.home.iterdir()) == []


@pytest.mark.parametrize("name", ["pg-runs", "pg-quick"])
def test_unreachable_database(early_errors: dict[str, Case], name: str) -> None:
    assert _line(early_errors, name) == (
        f"volbench: error: cannot open result store {UNREACHABLE_PG}: connection refused "
        f"(set --db or VOLBENCH_DB)"
    )
    case = early_errors[name]
    assert not case.target.exists()
    assert not case.volbench.db.exists()  # --db wins over VOLBENCH_DB


def test_database_in_missing_directory(early_errors: dict[str, Case]) -> None:
    db = early_errors["db-missing-dir"].volbench.home / "missing" / "store.db"
    assert _line(early_errors, "db-missing-dir") == (
        f"volbench: error: no result store at {db} (a run creates it; check --db or VOLBENCH_DB)"
    )
    assert not db.parent.exists()


def test_fio_missing(early_errors: dict[str, Case]) -> None:
    """PATH without fio: a clear line before anything is created or stored."""
    case = early_errors["fio-missing"]
    assert _line(early_errors, "fio-missing") == (
        "volbench: error: fio is not installed: install it with `apt-get install fio` "
        "or run `make setup`"
    )
    assert not case.target.exists()
    assert not case.volbench.db.exists()


def test_import_errors(early_errors: dict[str, Case]) -> None:
    home = early_errors["import-not-fio"].volbench.home
    assert _line(early_errors, "import-not-fio") == (
        f"volbench: error: cannot import {home}/notes.txt: fio output holds no JSON object "
        f"(first 60 chars: 'hello, no JSON here')"
    )
    home = early_errors["import-broken"].volbench.home
    assert _line(early_errors, "import-broken").startswith(
        f"volbench: error: cannot import {home}/broken.json: fio output is not valid JSON"
    )
    home = early_errors["import-absent"].volbench.home
    assert _line(early_errors, "import-absent") == (
        f"volbench: error: cannot import {home}/absent.json: no such file"
    )
    for name in ("import-not-fio", "import-broken", "import-absent"):
        assert early_errors[name].volbench.stored_runs() == []


def test_export_to_missing_directory(early_errors: dict[str, Case]) -> None:
    home = early_errors["export-no-dir"].volbench.home
    assert _line(early_errors, "export-no-dir") == (
        f"volbench: error: cannot write the output file {home}/no-such-dir/run.json: its"
        f" folder {home}/no-such-dir does not exist (create it first)"
    )


@needs_fio
def test_unknown_ioengine_is_refused_before_anything_runs(volbench: Volbench) -> None:
    proc = volbench.quick(volbench.home / "scratch.img", "--ioengine", "nosuchengine")
    assert "fio has no ioengine 'nosuchengine'" in error_line(proc, 2)
    assert volbench.stored_runs() == []
    assert not (volbench.home / "scratch.img").exists()


@needs_fio
def test_fio_error_fails_the_run_with_fio_exit_code(volbench: Volbench) -> None:
    # fio lists the rdma engine, which fails to start without an RDMA device
    proc = volbench.quick(volbench.home / "scratch.img", "--ioengine", "rdma")
    line = error_line(proc, 3)
    assert line.startswith("volbench: error: fio job randwrite-4k-iops failed with error 1: fio: ")
    assert "rdma init failed" in line  # fio's own stderr line
    document = volbench.stored()
    assert document["status"] == "failed"
    assert line.endswith(
        f"(run {document['id']} stored as failed; `volbench resume {document['id']}` continues it)"
    )
    assert document["error"].startswith("fio job randwrite-4k-iops failed with error 1")
    assert document["results"] == []


@needs_fio
def test_failed_round_keeps_the_rounds_before_it(tmp_path: Path) -> None:
    """A run that fails in its second round is stored as failed with the first round."""
    info = prepare_target(str(tmp_path / "scratch.img"), True, NullReporter(), 32 * MiB)
    good = Workload("good", RW.RANDREAD, size_bytes=32 * MiB, runtime_s=1.0)
    bad = Workload("bad", RW.RANDREAD, size_bytes=32 * MiB, runtime_s=1.0, ioengine="nosuch")
    with Store.open(str(tmp_path / "store.db")) as store:
        session = Session(store, SubprocessRunner(), NullReporter(), tmp_path / "runs")
        with pytest.raises(
            FioError,
            match=r"exit code 1: .*stored as failed; `volbench resume \d+` continues it\)$",
        ):
            execute(session, PlanSpec("two-rounds", ((good,), (bad,))), info, {})
        run = store.get_run("latest")
    assert run.status is RunStatus.FAILED
    assert run.error is not None and run.error.startswith("fio failed with exit code 1")
    assert [(r.round, r.test) for r in run.results] == [(0, "good")]
    assert run.results[0].iops > 0
    assert len(run.raw_outputs) == 1


@pytest.mark.root
def test_block_device_too_small(volbench: Volbench, loop_device: Callable[..., str]) -> None:
    device = loop_device(16)
    proc = volbench(
        "run",
        "quick",
        "--target",
        device,
        "--runtime",
        "1s",
        "--ramp-time",
        "0",
        "--size",
        "32m",
        "--runs-dir",
        str(volbench.runs_dir),
    )
    assert only_error_line(proc, 2) == (
        f"volbench: error: target {device} is too small: 16 MiB, the plan needs 32 MiB"
    )
    assert volbench.stored_runs() == []
