"""Rounds that start fio in other ways than one local process, run from recorded
outputs through the replay runner: a round on two hosts (one fio client) and a QoS
verification's tenants (several fio processes at once). Both go through
``session.runner`` like every other round, so no fio, host or cgroup is needed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from recorded import FIO_FIXTURES

from volbench.fio.runner import ReplayRunner
from volbench.model import RW, Place, RunSettings, RunStatus, TargetInfo, Workload
from volbench.plans.placement.fleet import FleetRounds
from volbench.plans.placement.fleet_preparation import fleet_settings, fleet_target
from volbench.plans.placement.fleet_spec import Fleet
from volbench.plans.qos.verify import OneStep, Tenants
from volbench.plans.runs.engine import Step, drive, execute, open_run
from volbench.plans.runs.execution import PlanSpec, Session
from volbench.plans.runs.reporter import NullReporter
from volbench.store.repository import Store
from volbench.targets import cgroup
from volbench.views import summary_for

MiB = 1 << 20


def _session(tmp: Path, recordings: list[Path]) -> tuple[Store, Session]:
    folder = tmp / "recorded"
    folder.mkdir()
    for path in recordings:
        shutil.copy(path, folder / f"{path.stem}.json")
    store = Store.open(f"sqlite:///{tmp / 'volbench.db'}")
    return store, Session(store, ReplayRunner(folder), NullReporter(), tmp / "runs")


def test_a_two_host_round_from_a_recorded_client_output(tmp_path: Path) -> None:
    """Two tests on two hosts with two targets each: every round hands each host its
    own job file (as fio's client is given them) and stores the aggregate as fio's
    sums over the hosts, each place's share under its label."""
    recorded = FIO_FIXTURES / "fleet_client_server_jsonplus.txt"
    store, session = _session(tmp_path, [recorded])
    places = tuple(  # as the recording's job files (tests/fixtures/fio/jobs/fleet-*.fio)
        Place(f"127.0.0.{n}", f"/tmp/volbench-fixtures/fleet-{x}.dat")
        for n, files in ((2, "ab"), (3, "cd"))
        for x in files
    )
    fleet = Fleet(places, size_bytes=16 * MiB)
    infos = [TargetInfo(p.label, "remote", 16 * MiB) for p in places]
    tests = (
        Workload("randread-4k", RW.RANDREAD, iodepth=4, runtime_s=1),
        Workload("randwrite-4k", RW.RANDWRITE, iodepth=2, runtime_s=1),
    )
    with store:
        outcome = execute(
            session,
            PlanSpec("sweep", (tests,)),
            fleet_target(fleet, infos),
            {},
            "libaio",
            round_runner=FleetRounds(fleet),
            places=fleet_settings(fleet, infos, []),
        )
        run = store.get_run(str(outcome.run_id))
    assert run.status is RunStatus.COMPLETED
    document = json.loads(recorded.read_text())
    for round_no, test in enumerate(tests):
        folder = Path(run.settings.logs_dir or "") / f"round-{round_no:03d}"
        jobs = sorted(folder.glob("job-*.fio"))
        assert len(jobs) == 2  # one job file per host
        assert all(f"[{test.name}]" in j.read_text() for j in jobs)
        entries = [e for e in document["client_stats"] if e["jobname"] == test.name]
        direction = "write" if test.rw.writes else "read"
        (aggregate,) = [r for r in run.aggregate if r.test == test.name]
        assert aggregate.iops == pytest.approx(sum(e[direction]["iops"] for e in entries))
        shares = {r.hostname for r in run.results if r.test == test.name and r.place}
        assert shares == {p.label for p in places}
    # the headline (`volbench runs`, a report's first table) is of the aggregate alone
    headline = summary_for(run, check=False)
    assert {row["iops"] for row in headline.table.rows} <= {r.iops for r in run.aggregate}
    assert headline.figures


def test_qos_tenants_together_from_recorded_outputs(tmp_path: Path) -> None:
    """A verification's tenants as one step: each tenant's job file in its folder,
    each tenant's output committed as a round of its own, in tenant order, with fio's
    own figures (no process starts in replay: no cgroup is joined)."""
    names = ("qos-t40", "qos-t60", "qos-t80")
    recorded = [FIO_FIXTURES / "qos" / f"{name}.json" for name in names]
    store, session = _session(tmp_path, recorded)
    target = TargetInfo("/tmp/volbench-fixtures/qos.dat", "file", 8 * MiB)
    hierarchy = cgroup.Hierarchy(tmp_path / "no-cgroups", 2)
    limits = [cgroup.Limits(n, 100, 100, 0, 0, 500, 100) for n in names]
    workloads = tuple(Workload(n, RW.RANDREAD, runtime_s=1) for n in names)
    with store:
        run_id, workdir = open_run(session, "qos-verify", target, {}, RunSettings())
        outcome = drive(
            session,
            run_id,
            OneStep(Step(workloads, together=True)),
            target,
            "psync",
            workdir,
            round_runner=Tenants(hierarchy, limits, 1.0),
        )
        run = store.get_run(str(run_id))
    assert outcome.status is RunStatus.COMPLETED
    assert [r.test for r in sorted(run.results, key=lambda r: r.round)] == list(names)
    for name, path in zip(names, recorded, strict=True):
        assert f"[{name}]" in (workdir / name / "job.fio").read_text()
        (job,) = json.loads(path.read_text())["jobs"]
        (stored,) = [r for r in run.results if r.test == name]
        assert stored.iops == pytest.approx(job["read"]["iops"])
