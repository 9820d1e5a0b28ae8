"""Run bundles: every plan's recorded run exported, imported into a fresh SQLite and a
fresh PostgreSQL store (and exported from there again), equal to the original but for
its local id; a run imported twice is stored once.

The source store holds one run of each plan, made the way volbench makes them: the
run engine over recorded fio outputs (the quick recording, the PTS recording replayed
by job name as tests/unit/test_pts_report.py does it, and for the other plans the
recorded quick outputs renamed after each job file's sections), each round with fio's
recorded per-second logs (tests/fixtures/fio/logs); plus fio outputs imported
(client/server with places), a QoS verification, a failed run with stalls and series
of several hosts, and an interrupted one.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from recorded import FIO_FIXTURES
from test_pts_report import OPTIONS as PTS_OPTIONS
from test_pts_report import RECORDING as PTS_RECORDING
from test_pts_report import split_throughput

from volbench.analysis.aggregate import group_tests
from volbench.analysis.qos import Rates, Tenant, make_plan
from volbench.analysis.qos_document import plan_document
from volbench.analysis.qos_results import PLAN as QOS_VERIFY
from volbench.analysis.qos_results import VerifyOptions, VerifySetup
from volbench.analysis.workload_profile import characterise
from volbench.cli.main import main
from volbench.errors import UsageError
from volbench.fio.job_source import HostFacts, read_files
from volbench.fio.parser import parse
from volbench.fio.runner import RawRun, ReplayRunner, StatusCallback, StopCheck, job_sections
from volbench.model import RW, LogSeries, RunRecord, RunSettings, RunStatus, Stall, TargetInfo
from volbench.plans import capture, firsttouch, hdtune, iometer, limits, quick, replay, sweep
from volbench.plans.imported.importing import import_file
from volbench.plans.jobs import tests as job_tests
from volbench.plans.placement.preparation import PurgeSettings
from volbench.plans.pts import driver
from volbench.plans.pts.options import build
from volbench.plans.qos import capability as qos_capability
from volbench.plans.qos.verify import OneStep
from volbench.plans.runs.engine import Step, drive, execute, open_run
from volbench.plans.runs.execution import Session
from volbench.plans.runs.reporter import NullReporter
from volbench.records import json_object
from volbench.report.check_sheets import CheckRequest, check_sheet
from volbench.report.export import export
from volbench.report.pts.report import pts_document, pts_sheets
from volbench.report.sheet import Sheet
from volbench.report.validity_sheets import Verdicts
from volbench.specs import catalogue
from volbench.store import bundle
from volbench.store.repository import Store
from volbench.trace import codec
from volbench.views import VIEWS, report_document, report_for
from volbench.volume_writes import with_history

MiB = 1 << 20
TARGET = TargetInfo("/dev/recorded", "block", 64 * MiB)
LABELS = {"product": "ucloud-rssd", "size_gib": "500"}
QUICK = FIO_FIXTURES / "quick" / "round-000.json"
BLKPARSE = FIO_FIXTURES.parent / "blkparse" / "mixed.txt"


class RecordedRunner(ReplayRunner):
    """Replays recorded fio outputs and leaves fio's recorded per-second logs beside
    each, named after the job file's sections. ``renamed``: every job file gets the
    recorded quick jobs in turn, renamed after its sections (plans without their own
    recording)."""

    def __init__(self, directory: Path, renamed: bool = False) -> None:
        super().__init__(directory)
        self._renamed = renamed
        self._template = json.loads(QUICK.read_text())
        self._turn = 0

    def run(
        self,
        job_text: str,
        workdir: Path,
        on_status: StatusCallback | None = None,
        should_stop: StopCheck | None = None,
    ) -> RawRun:
        sections = job_sections(job_text)
        if self._renamed:
            workdir.mkdir(parents=True, exist_ok=True)
            (workdir / "job.fio").write_text(job_text)
            jobs = []
            for name in sections:
                job = self._template["jobs"][self._turn % len(self._template["jobs"])]
                jobs.append({**job, "jobname": name})
                self._turn += 1
            output = json.dumps({**self._template, "jobs": jobs}, indent=2) + "\n"
            raw = RawRun(output, 0, "", False, ("recorded",))
        else:
            raw = super().run(job_text, workdir, on_status, should_stop)
        for name in sections[:2]:
            for log in (FIO_FIXTURES / "logs").glob("randread-4k_*.log"):
                shutil.copy(log, workdir / log.name.replace("randread-4k", name, 1))
        return raw


def _session(store: Store, tmp: Path, runner: ReplayRunner) -> Session:
    return Session(store, runner, NullReporter(), tmp / "runs")


def _pts_run(store: Store, tmp: Path) -> int:
    folder = tmp / "pts-recording"
    with tarfile.open(PTS_RECORDING) as tar:
        tar.extractall(folder, filter="data")
    split_throughput(folder)
    session = _session(store, tmp, RecordedRunner(folder))
    purging = PurgeSettings(replay=True)
    options = build(**PTS_OPTIONS)  # type: ignore[arg-type]
    outcome = driver.begin(session, options, TARGET, LABELS, None, purging)
    assert outcome.status is RunStatus.COMPLETED
    return outcome.run_id


def _qos_verify_run(store: Store, tmp: Path) -> int:
    """A QoS verification as the plan stores one (its tenants one step of the engine),
    without cgroups: the tenants' outputs are recorded ones."""
    plan = make_plan(Rates(3888, 156), Rates(975, 48), [Tenant("a", 40), Tenant("b", 80)])
    options = VerifyOptions(rw=RW.RANDREAD, bs_bytes=4096, tolerance_pct=10.0, quiet=("a",))
    setup = VerifySetup(plan_document(plan), options)
    settings = RunSettings(ioengine="io_uring", options=json_object(setup))
    session = _session(store, tmp, RecordedRunner(QUICK.parent, renamed=True))
    run_id, workdir = open_run(session, QOS_VERIFY, TARGET, LABELS, settings)
    tenants = tuple(quick.workloads(quick.QuickOptions())[:2])
    tenants = tuple(dataclasses.replace(w, name=n) for w, n in zip(tenants, "ab", strict=True))
    drive(session, run_id, OneStep(Step(tenants, together=True)), TARGET, "io_uring", workdir)
    return run_id


def _failed_run(store: Store) -> int:
    """A run stopped by a stall, with series of two hosts (integer and float values)."""
    raw = QUICK.read_text()
    run_id = store.create_run(
        "quick", TARGET, {"hostname": "h"}, LABELS, RunSettings(ioengine="libaio")
    )
    series = [
        LogSeries(0, "randread-4k@1", "iops", 1, "10.0.0.2", "read", ((1000, 500), (2000, 0))),
        LogSeries(0, "randread-4k@2", "lat", 1, "10.0.0.3", "read", ((1000, 81000.5),)),
    ]
    store.add_round(run_id, 0, raw, group_tests(parse(raw)), {}, series=series)
    stall = Stall(
        0, "randread-4k", "2024-05-01T12:00:00+00:00", "2024-05-01T12:00:09+00:00", 9.0, False, 4.5
    )
    store.add_stalls(run_id, [stall])
    store.finish_run(run_id, RunStatus.FAILED, "fio stalled: no I/O completed for 9 s")
    return run_id


def _interrupted_run(store: Store) -> int:
    run_id = store.create_run(
        "sweep", TARGET, {}, {"note": "ctrl-c"}, RunSettings(), non_compliant=True
    )
    store.finish_run(run_id, RunStatus.INTERRUPTED, "interrupted: `volbench resume` continues it")
    return run_id


def _build(store: Store, tmp: Path) -> dict[str, int]:
    renamed = RecordedRunner(QUICK.parent, renamed=True)
    plans = {
        "quick": (quick.plan(quick.QuickOptions()), RecordedRunner(QUICK.parent)),
        "sweep": (sweep.plan(sweep.SweepOptions(RW.RANDREAD, 4096, (1, 4), (1, 2))), renamed),
        "iometer": (
            iometer.plan(iometer.IometerOptions(iometer.choose(["8k-random-read"]), (1, 2))),
            renamed,
        ),
        "scan": (hdtune.scan_plan(hdtune.ScanOptions(64 * MiB, zones=4)), renamed),
        "filebench": (hdtune.filebench_plan(hdtune.FilebenchOptions()), renamed),
        "firsttouch": (firsttouch.plan(firsttouch.FirstTouchOptions(16 * MiB)), renamed),
        "qos-capability": (qos_capability.plan(1.0, writes=True), renamed),
        "limits": (limits.plan(limits.LimitsOptions(budget_s=60, runtime_s=2)), renamed),
    }
    ids = {}
    for name, (plan, runner) in plans.items():
        outcome = execute(_session(store, tmp, runner), plan, TARGET, LABELS)
        assert outcome.status is RunStatus.COMPLETED, name
        ids[name] = outcome.run_id
    ids["pts"] = _pts_run(store, tmp)
    ids["qos-verify"] = _qos_verify_run(store, tmp)
    for name, fixture in (
        ("import", "client_server_jsonplus.txt"),
        ("fio2", "fio2_randread_4jobs.json"),
    ):
        ids[name] = import_file(store, FIO_FIXTURES / fixture, LABELS)
    ids["capture"], ids["replay"] = _workload_runs(store, tmp, renamed)
    ids["job"] = _job_run(store, tmp, renamed)
    ids["failed"] = _failed_run(store)
    ids["interrupted"] = _interrupted_run(store)
    return ids


JOB_FILE = """\
[global]
ioengine=libaio
direct=1
runtime=1
time_based
[seq]
rw=read
bs=1m
[rand]
new_group
rw=randread
[write]
stonewall
rw=randwrite
"""


def _job_run(store: Store, tmp: Path, runner: RecordedRunner) -> int:
    """A job file's run (its jobs on the run's target): two rounds, the first of two
    tests fio runs at once (``new_group``). volbench's reading is not held against
    fio's here (no fio in unit tests: tests/unit/test_job_file.py does that on fio's
    recorded word)."""
    (tmp / "bundle.fio").write_text(JOB_FILE)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(
            job_tests,
            "read_checked",
            lambda paths, cwd, env, host: read_files(paths, env, host, cwd),
        )
        made = job_tests.plan(["bundle.fio"], tmp, {}, replaced=True, host=HostFacts(4096, 1, 1))
    outcome = execute(_session(store, tmp, runner), made.spec, TARGET, LABELS, made.engines)
    assert outcome.status is RunStatus.COMPLETED
    return outcome.run_id


def _workload_runs(store: Store, tmp: Path, runner: RecordedRunner) -> tuple[int, int]:
    """A captured workload (imported from blkparse output: its trace in two parts) and
    its exact replay."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(codec, "PART_IOS", 4)
        stored = capture.import_blkparse(store, BLKPARSE, LABELS, "mixed")
    trace = capture.load_trace(store, store.get_run(stored.run_id))
    options = replay.ReplayOptions("mixed", stored.run_id)
    plan = replay.exact_plan(trace, characterise(trace), options, TARGET, tmp / "iolog")
    outcome = execute(_session(store, tmp, runner), plan, TARGET, LABELS)
    return stored.run_id, outcome.run_id


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, dict[str, int]]]:
    """The store every test exports from, and its runs' ids by plan."""
    tmp = tmp_path_factory.mktemp("source")
    with Store.open(str(tmp / "source.db")) as store:
        yield store, _build(store, tmp)


def _every_run(source: tuple[Store, dict[str, int]]) -> list[RunRecord]:
    store, ids = source
    return [store.get_run(run_id) for run_id in ids.values()]


def test_the_source_has_what_a_bundle_must_carry(source: tuple[Store, dict[str, int]]) -> None:
    store, ids = source
    runs = {name: store.get_run(run_id) for name, run_id in ids.items()}
    missing = set(VIEWS) - {r.plan for r in runs.values()}
    assert not missing, (
        f"plans {sorted(missing)} have no run here: add a recorded run of each to _build"
        " (and anything such runs store outside the run's tables to the bundle)"
    )
    quiet = ("import", "fio2", "interrupted", "capture")
    assert all(r.series for n, r in runs.items() if n not in quiet)
    assert len(runs["capture"].trace) == 2
    assert runs["failed"].stalls and runs["failed"].status is RunStatus.FAILED
    assert runs["interrupted"].non_compliant and runs["interrupted"].status is RunStatus.INTERRUPTED
    assert runs["import"].settings.places and any(r.place for r in runs["import"].results)
    assert len(runs["pts"].raw_outputs) > 40
    assert len({r.uuid for r in runs.values()}) == len(runs)


def _document(run: RunRecord, store: Store | None = None) -> bytes:
    """``show --format json`` of a run (with what the runs of ``store`` wrote on its
    volume before it, as ``show`` gives it: the "blocks never written" check)."""
    verdicts = Verdicts()
    if store is not None:
        with_history(store, run, verdicts)
    return export(Sheet("report", (), (), report_for(run, verdicts=verdicts)[1]), "json")


def _check(run: RunRecord) -> bytes:
    """``check --format json`` of a run (against its product label)."""
    try:
        sheet = check_sheet(run, catalogue.load(()), CheckRequest(None, None))
    except UsageError as exc:
        return str(exc).encode()
    return export(sheet, "json")


def _report(run: RunRecord) -> Any:
    """The report's data: each section's header, notes, tables and charts."""
    document = report_document([run])
    return [
        (
            s.title,
            s.header,
            s.notes,
            [(c.id, json.dumps(c.figure, sort_keys=True, default=str)) for c in s.charts],
            [(t.title, t.rows, t.notes, export(t, "json")) for t in s.sheets],
        )
        for s in document.sections
    ]


def _equal_but_id(original: RunRecord, imported: RunRecord) -> None:
    """Everything volbench shows of ``imported`` is what it shows of ``original``
    with the imported run's id."""
    assert imported.uuid == original.uuid
    renamed = dataclasses.replace(original, id=imported.id)
    assert imported == renamed
    assert _document(imported) == _document(renamed)
    assert json.loads(_document(imported))["uuid"] == original.uuid
    assert _check(imported) == _check(renamed)
    assert _report(imported) == _report(renamed)
    if original.plan == driver.NAME:
        assert export(Sheet("pts", (), (), pts_document(imported)), "json") == export(
            Sheet("pts", (), (), pts_document(renamed)), "json"
        )
        assert [export(s, "markdown") for s in pts_sheets(imported)] == [
            export(s, "markdown") for s in pts_sheets(renamed)
        ]


def _without_ids(data: bytes) -> list[dict[str, Any]]:
    document = json.loads(__import__("gzip").decompress(data))
    return [{k: v for k, v in run.items() if k != "id"} for run in document["runs"]]


def test_every_plans_run_travels_through_a_store_and_back(
    source: tuple[Store, dict[str, int]], db_url: str, tmp_path: Path
) -> None:
    """source (SQLite) -> bundle -> a fresh store at ``db_url`` (SQLite or PostgreSQL)
    -> bundle -> a fresh SQLite store: equal at every step but for local ids."""
    originals = _every_run(source)[::-1]  # reversed: the imported runs get other ids
    data = bundle.dump(originals)
    (tmp_path / "runs.vbundle").write_bytes(data)
    with Store.open(db_url) as middle:
        received = bundle.import_bundle(middle, tmp_path / "runs.vbundle", {})
        assert [r.added for r in received] == [True] * len(originals)
        moved = [middle.get_run(r.run_id) for r in received]
        assert [m.id for m in moved] != [o.id for o in originals]
        for original, imported in zip(originals, moved, strict=True):
            _equal_but_id(original, imported)
        again = bundle.dump(moved)
        assert _without_ids(again) == _without_ids(data)
        twice = bundle.import_bundle(middle, tmp_path / "runs.vbundle", {"extra": "x"})
        assert [(r.run_id, r.added) for r in twice] == [(r.run_id, False) for r in received]
        assert [r.had for r in twice] == [(o.status, len(o.rounds)) for o in originals]
        assert len(middle.list_runs()) == len(originals)
        assert all("extra" not in r.labels for r in middle.list_runs())
    (tmp_path / "again.vbundle").write_bytes(again)
    with Store.open(str(tmp_path / "back.db")) as back:
        returned = bundle.import_bundle(back, tmp_path / "again.vbundle", {"moved": "yes"})
        for original, got in zip(originals, returned, strict=True):
            run = back.get_run(got.run_id)
            assert run.labels == {**original.labels, "moved": "yes"}
            _equal_but_id(dataclasses.replace(original, labels=run.labels), run)


def _ids_out(value: Any, run_id: int) -> Any:
    """A show document with the run's id (``run_id``, ``run N``) taken out."""
    if isinstance(value, dict):
        return {
            k: None if k in ("id", "run_id") and v == run_id else _ids_out(v, run_id)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_ids_out(v, run_id) for v in value]
    if isinstance(value, str):
        return re.sub(rf"\brun ?{run_id}\b", "run ID", value)
    return value


def _main(
    monkeypatch: pytest.MonkeyPatch, capfdbinary: pytest.CaptureFixture[bytes], *argv: str
) -> tuple[int, bytes, str]:
    """The real command in this process: (exit code, stdout, stderr)."""
    monkeypatch.setattr("sys.argv", ["volbench", *argv])
    code = 0
    try:
        main()
    except SystemExit as ended:
        code = int(ended.code or 0)
    out, err = capfdbinary.readouterr()
    return code, out, err.decode()


def test_export_and_import_commands(
    source: tuple[Store, dict[str, int]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfdbinary: pytest.CaptureFixture[bytes],
) -> None:
    """`export RUN... -o FILE.vbundle`, `import FILE` twice: one line per run, each run
    once; `show --format json` equal but for the id; `export --format json` of one run
    as before, and of several refused; the JSON document is not mistaken for fio's."""
    store, ids = source
    db = store.url.removeprefix("sqlite:///")
    chosen = [ids["pts"], ids["failed"], ids["quick"]]
    out = tmp_path / "three.vbundle"
    code, _, err = _main(
        monkeypatch, capfdbinary, "export", *map(str, chosen), "latest", "-o", str(out), "--db", db
    )
    assert code == 0, err
    lines = err.splitlines()
    exported = [*chosen, ids["interrupted"]]  # latest: the last run made
    assert lines[0].startswith(f"wrote {out} (")  # then what it holds
    assert [line.split(":")[0] for line in lines[1:]] == [f"exported run {i}" for i in exported]
    target = str(tmp_path / "target.db")
    code, _, err = _main(monkeypatch, capfdbinary, "import", str(QUICK), "--db", target)
    assert code == 0 and err == f"imported {QUICK} as run 1\n", err
    code, listing, err = _main(
        monkeypatch, capfdbinary, "import", str(out), "--db", target, "--format", "json"
    )
    assert code == 0, err
    added = err.splitlines()
    assert len(added) == 4 and all(line.startswith("added run ") for line in added), err
    new_ids = [int(line.split()[2].rstrip(":")) for line in added]
    assert new_ids == [2, 3, 4, 5]
    originals = [store.get_run(i) for i in exported]
    for original, line in zip(originals, added, strict=True):
        assert original.uuid in line and f"(exported as run {original.id}; uuid " in line
    assert [r["id"] for r in json.loads(listing)["runs"]] == new_ids
    code, _, err = _main(monkeypatch, capfdbinary, "import", str(out), "--db", target)
    assert code == 0, err
    assert [line.split(",")[0] for line in err.splitlines()] == [
        f"already had run {i}: {r.plan}" for i, r in zip(new_ids, originals, strict=True)
    ]
    assert all(line.endswith("not added again") for line in err.splitlines())
    for original, new_id in zip(originals, new_ids, strict=True):
        _, shown, _ = _main(
            monkeypatch, capfdbinary, "show", str(new_id), "--format", "json", "--db", target
        )
        _, before, _ = _main(
            monkeypatch, capfdbinary, "show", str(original.id), "--format", "json", "--db", db
        )
        imported, there = json.loads(shown), json.loads(before)
        assert imported.pop("id") == new_id and there.pop("id") == original.id
        assert imported["uuid"] == original.uuid
        assert _ids_out(imported, new_id) == _ids_out(there, original.id)
        with Store.open(target) as imported_to:
            expected = _document(dataclasses.replace(original, id=new_id), imported_to)
        assert shown == expected
    code, single, err = _main(monkeypatch, capfdbinary, "export", str(ids["quick"]), "--db", db)
    assert code == 0 and json.loads(single)["schema"] == "volbench.run/1", err
    (tmp_path / "r1.json").write_bytes(single)
    code, _, err = _main(
        monkeypatch, capfdbinary, "import", str(tmp_path / "r1.json"), "--db", target
    )
    assert code == 2 and err.count("\n") == 1 and "volbench.run/1" in err, err
    assert "export RUN... -o FILE.vbundle" in err
    code, _, err = _main(
        monkeypatch, capfdbinary, "export", "1", "2", "--format", "csv", "--db", db
    )
    assert code == 2 and "export several runs as one bundle" in err, err
    with Store.open(target) as moved:
        assert len(moved.list_runs()) == 5
