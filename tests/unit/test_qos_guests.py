"""QoS tenants as lab guests, from recorded outputs through the replay runner: the
host and three guests (40/60/80 GiB) verified together, then the host alone and the
guests without limits (alpha). The recordings (tests/fixtures/fio/qos-guests, see
its README) are one ``qos verify --guests --with-host --fit-alpha`` of
tests/integration/test_lab_qos.py: a fio client's output per guest and the host's
own fio output. Every figure checked is recomputed from fio's JSON."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from recorded import FIO_FIXTURES

from volbench.analysis.qos import Rates, Tenant, make_plan
from volbench.analysis.qos_alpha import guest_alpha
from volbench.analysis.qos_document import plan_document
from volbench.analysis.qos_results import PLAN, VerifyOptions, VerifySetup, check_run
from volbench.cli.main import main
from volbench.errors import UsageError
from volbench.fio.runner import ReplayRunner
from volbench.lab.guest import Guest
from volbench.lab.throttle import Bucket, Limits
from volbench.model import Place, PlaceRecord, RunSettings, RunStatus, TargetInfo
from volbench.plans.placement.fleet_preparation import PreparedFleet
from volbench.plans.placement.fleet_spec import Fleet
from volbench.plans.placement.placed import Placement, Resuming
from volbench.plans.placement.preparation import PurgeSettings
from volbench.plans.qos.guest_launch import GuestTenants, tenant_of
from volbench.plans.qos.guests import course, guest_limits, shared_backing
from volbench.plans.qos.places import tenant_places
from volbench.plans.qos.plan_file import read_plan
from volbench.plans.qos.verify import resume as verify_resume
from volbench.plans.runs.engine import drive, open_run
from volbench.plans.runs.execution import Session
from volbench.plans.runs.reporter import NullReporter
from volbench.records import json_object
from volbench.store.repository import Store

RECORDED = FIO_FIXTURES / "qos-guests"
GUESTS = ("g40", "g60", "g80")
HOST_FILE = "/lab/backing/inst/mnt/host/host.dat"


def _iops(name: str) -> float:
    """fio's own IOPS of the recording ``name`` (its one job, either layout)."""
    document = json.loads((RECORDED / f"{name}.json").read_text())
    (job,) = [
        j
        for j in document.get("client_stats", document.get("jobs"))
        if j["jobname"] != "All clients"
    ]
    return float(job["read"]["iops"])


def _guest(name: str, number: int) -> Guest:
    disk = f"/lab/backing/inst/mnt/disks/{name}.img"
    return Guest(
        name, f"127.0.0.{60 + number}", 8765, 8766, "tcg", Limits(), disk, 128 << 20, "6.1", 5.0, 1
    )


def test_host_and_guests_together_then_alpha(tmp_path: Path) -> None:
    folder = tmp_path / "recorded"
    shutil.copytree(RECORDED, folder)
    (folder / "plan.json").unlink()  # the plan, not a recording
    plan = read_plan(str(RECORDED / "plan.json"))
    options = VerifyOptions(6.0, iodepth=8, with_host=True, guests=True, fit_alpha=True)
    guests = {name: _guest(name, n) for n, name in enumerate(GUESTS, start=1)}
    target = TargetInfo(HOST_FILE, "file", 128 << 20)
    lifted: list[int] = []
    with Store.open(f"sqlite:///{tmp_path / 'volbench.db'}") as store:
        session = Session(store, ReplayRunner(folder), NullReporter(), tmp_path / "runs")
        setup = VerifySetup(qos_plan=plan_document(plan), verify=options)
        settings = RunSettings(ioengine="libaio", options=json_object(setup))
        run_id, workdir = open_run(session, PLAN, target, {}, settings)

        def lift() -> None:  # the guests' limits go before their unlimited round
            lifted.append(len(store.get_run(str(run_id)).raw_outputs))

        steps = course(plan, options, lift)
        tenants = GuestTenants(guests, None, None, options)
        outcome = drive(session, run_id, steps, target, "libaio", workdir, round_runner=tenants)
        run = store.get_run(str(run_id))
    assert outcome.status is RunStatus.COMPLETED
    assert lifted == [5]  # after the 4 tenants together and the host alone
    rounds = [r.test for r in sorted(run.results, key=lambda r: r.round)]
    assert rounds == [*GUESTS, "host", "alone.host", *(f"free.{n}" for n in (*GUESTS, "host"))]
    # each guest's job file names its disk in the guest, the host's the backing file
    for name in GUESTS:
        assert "filename=/dev/vda" in (workdir / name / "job-0.fio").read_text()
    assert f"filename={HOST_FILE}" in (workdir / "host" / "job.fio").read_text()

    checks = {c.tenant: c for c in check_run(run).checks}
    planned = {"g40": 1200 * 40 / 180, "g60": 1200 * 60 / 180, "g80": 1200 * 80 / 180}
    for number, name in enumerate((*GUESTS, "host")):
        assert checks[name].achieved_iops == pytest.approx(_iops(f"{number}-{name}"))
        assert checks[name].planned_iops == pytest.approx(planned.get(name, 300.0))
        assert checks[name].ok  # within 10 % (the recording: 255/267, 398/400, 528/533, 301/300)

    alpha = guest_alpha(run)
    assert alpha is not None
    capability, used = _iops("4-alone.host"), _iops("8-free.host")
    free = [_iops(f"{n}-free.{g}") for n, g in enumerate(GUESTS, start=5)]
    assert alpha.capability_iops == pytest.approx(capability)
    assert alpha.host_used_iops == pytest.approx(used)
    assert alpha.alpha == pytest.approx(1 - sum(free) / (capability - used))
    assert 0.3 < alpha.alpha < 0.6  # 1 - 4,541 / (8,419 - 301) = 0.441 on a busy machine
    assert alpha.line().startswith("alpha = 1 - (g40 1,255 + g60 1,762 + g80 1,524)")


def test_a_verification_without_alpha_is_one_step() -> None:
    plan = make_plan(Rates.both(1500, 0), Rates.both(300, 0), [Tenant("g40", 40)])
    steps = course(plan, VerifyOptions(guests=True), lambda: None)
    (step,) = steps.steps
    assert [w.name for w in step.workloads] == ["g40"] and step.together


def test_a_quiet_guest_asks_for_its_plan_only_while_the_others_push() -> None:
    plan = read_plan(str(RECORDED / "plan.json"))
    options = VerifyOptions(guests=True, fit_alpha=True, with_host=True, quiet=("g60",))
    verified, alone, free = course(plan, options, lambda: None).steps
    assert {w.name: w.rate_iops for w in verified.workloads} == {
        "g40": None,
        "g60": 400,
        "g80": None,
        "host": None,
    }
    assert [w.name for w in alone.workloads] == ["alone.host"]
    assert all(w.rate_iops is None for w in free.workloads)  # unlimited: what each gets


def test_planned_limits_per_direction_as_a_throttle_group() -> None:
    rates = Rates(read_iops=400.4, write_iops=0, read_bps=0, write_bps=2_000_000)
    plan = make_plan(rates, Rates(), [Tenant("g40", 40), Tenant("g80", 80)])
    limits = guest_limits(plan.allocations[1])
    assert limits == Limits(iops_read=Bucket(267), bps_write=Bucket(1_333_333))
    assert limits.properties() == {"iops-read": 267, "bps-write": 1_333_333}


def test_tenants_of_the_alpha_rounds() -> None:
    assert [tenant_of(t) for t in ("g40", "free.g40", "alone.host", "free.host")] == [
        "g40",
        "g40",
        "host",
        "host",
    ]


def test_guests_not_on_one_backing_device_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOLBENCH_LAB_DIR", str(tmp_path / "lab"))  # no backing device made
    with pytest.raises(UsageError, match=r"not on one backing device.*--backing B"):
        shared_backing([_guest("g40", 1), _guest("g60", 2)])


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (("qos", "apply", "PLAN"), "--device DEV (cgroups on it) or --guests"),
        (("qos", "apply", "PLAN", "--guests", "--device", "/dev/null"), "not both"),
        (("qos", "apply", "PLAN", "--guests"), "no lab guest g40"),
        (("qos", "verify", "PLAN"), "--device DEV (tenants in cgroups), --guests (lab guests) or"),
        (("qos", "verify", "PLAN", "--hosts", "h", "--guests"), "no --device, --guests"),
        (("qos", "verify", "PLAN", "--device", "/dev/null", "--replay", "."), "(--hosts) only"),
        (("qos", "verify", "PLAN", "--fit-alpha", "--device", "/dev/null"), "give --guests too"),
        (("qos", "verify", "PLAN", "--guests", "--dry-run"), "no --device, --dry-run"),
        (("qos", "verify", "PLAN", "--guests"), "no lab guest g40"),
    ],
)
def test_bad_input_is_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: tuple[str, ...],
    says: str,
) -> None:
    monkeypatch.setenv("VOLBENCH_LAB_DIR", str(tmp_path / "lab"))
    monkeypatch.setenv("VOLBENCH_DB", str(tmp_path / "volbench.db"))
    plan = str(RECORDED / "plan.json")
    monkeypatch.setattr("sys.argv", ["volbench", *(plan if a == "PLAN" else a for a in argv)])
    with pytest.raises(SystemExit) as ended:
        main()
    err = capsys.readouterr().err.strip()
    assert ended.value.code == 2, err
    assert err.startswith("volbench: error: ") and "\n" not in err, err
    assert says in err


def _placed(*hosts: str) -> Placement:
    places = tuple(Place(h, "/data/t") for h in hosts)
    infos = [TargetInfo(p.label, "remote", 1 << 30) for p in places]
    return Placement(infos[0], PreparedFleet(Fleet(places, size_bytes=1 << 30), infos, []))


@pytest.mark.parametrize(
    ("placement", "options", "says"),
    [
        (_placed("a", "b"), VerifyOptions(), "3 tenants (g40, g60, g80): give each a place"),
        (_placed("a", "b", "b"), VerifyOptions(), "on a host of its own, in that order"),
        (_placed("a", "b", "c"), VerifyOptions(with_host=True), "--with-host runs on this"),
        (_placed("a", "b", "c"), VerifyOptions(quiet=("g99",)), "--quiet g99: the plan has no"),
    ],
)
def test_tenants_on_places_are_one_each_on_hosts_of_their_own(
    placement: Placement, options: VerifyOptions, says: str
) -> None:
    plan = read_plan(str(RECORDED / "plan.json"))
    with pytest.raises(UsageError, match=re.escape(says)):
        tenant_places(plan, placement, options)
    assert tenant_places(plan, _placed("a", "b", "c"), VerifyOptions()).fleet.places[2].host == "c"


def test_a_verification_on_places_is_not_resumed(tmp_path: Path) -> None:
    """Its limits were given back when it stopped: it is started again, not resumed (nor
    taken for a verification on this machine's device, whose cgroups it never had)."""
    plan = read_plan(str(RECORDED / "plan.json"))
    setup = VerifySetup(qos_plan=plan_document(plan), verify=VerifyOptions())
    places = tuple(PlaceRecord(f"{h}:/t", h, "/t", kind="loopback") for h in ("a", "b", "c"))
    settings = RunSettings(ioengine="libaio", options=json_object(setup), places=places)
    with Store.open(f"sqlite:///{tmp_path / 'volbench.db'}") as store:
        runner = ReplayRunner(RECORDED)  # nothing runs: it is refused first
        session = Session(store, runner, NullReporter(), tmp_path / "runs")
        target = TargetInfo("a:/t, b:/t, c:/t", "fleet", 1 << 30)
        run_id, _ = open_run(session, PLAN, target, {}, settings)
        with pytest.raises(UsageError, match=r"verified places on hosts.*qos verify --hosts"):
            verify_resume(session, store.get_run(str(run_id)), Resuming(PurgeSettings()))
