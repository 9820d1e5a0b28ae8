"""``volbench qos apply|clear|verify`` on loop devices with real cgroups and real fio.

The tenants here have names no other test uses (``qos-t40`` ...), so their
cgroups ``volbench-p<plan id>-qos-t40`` ... are this module's alone: other tests on
this host create ``volbench-*`` cgroups of their own at the same time, and those are
never looked at (except by ``qos clear --all``, which removes only idle cgroups
volbench marked). The ``own_cgroups`` fixture removes this module's cgroups even
when a test fails; the tests also check that volbench itself removed them.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_harness import Volbench, error_line, finish, fio_jobs, fio_json, run_all

from volbench.errors import TargetError
from volbench.plans.qos.plan_file import read_plan
from volbench.plans.qos.setup import plan_id
from volbench.targets import cgroup

TENANTS = ("--tenant", "qos-t40:40", "--tenant", "qos-t60:60", "--tenant", "qos-t80:80")
NAMES = ("qos-t40", "qos-t60", "qos-t80")
OTHER_NAMES = ("qos-web", "qos-api", "qos-db")
PLAN_IDS: set[str] = set()
"""Ids of the plans this module made (their host cgroups are ``volbench-p<id>-host``)."""
Loop = Callable[..., str]


def _left_behind(names: tuple[str, ...] = (*NAMES, *OTHER_NAMES)) -> list[Path]:
    """The cgroups of tenants ``names`` (this module's) that exist now, and the host's of
    --with-host."""
    try:
        hierarchy = cgroup.find_hierarchy()
    except TargetError:
        return []
    found = {p for n in names for p in hierarchy.root.glob(f"volbench-*-{n}")}
    found |= {hierarchy.path(f"p{plan}-host") for plan in PLAN_IDS}
    return sorted(p for p in found if p.exists())


@pytest.fixture
def own_cgroups() -> Iterator[None]:
    """Skips without root or cgroup I/O control; removes the test's cgroups at the end."""
    with owned((*NAMES, *OTHER_NAMES)):
        yield


@contextlib.contextmanager
def owned(names: tuple[str, ...]) -> Iterator[None]:
    """The cgroups of tenants ``names``: none before (else a skip: another test's), and
    none after (their processes, this test's fio, killed). Each module's tenants have
    names of its own, so that tests running at once on other workers never share one."""
    if os.geteuid() != 0:
        pytest.skip("cgroups need root")
    try:
        cgroup.find_hierarchy()
    except TargetError as exc:
        pytest.skip(str(exc))
    if _left_behind(names):
        pytest.skip(f"{_left_behind(names)[0]} exists already: not this test's to remove")
    try:
        yield
    finally:
        for path in _left_behind(names):
            with contextlib.suppress(OSError):  # processes this test started (fio)
                for pid in (path / "cgroup.procs").read_text().split():
                    os.kill(int(pid), signal.SIGKILL)
            for _ in range(50):
                with contextlib.suppress(OSError):
                    path.rmdir()
                if not path.exists():
                    break
                time.sleep(0.1)


def _devnum(device: str) -> str:
    st = os.stat(device)
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


def _plan(volbench: Volbench, tmp_path: Path, *args: str) -> Path:
    proc = volbench("qos", "plan", *args, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    path = tmp_path / f"plan-{len(list(tmp_path.glob('plan*.json')))}.json"
    path.write_text(proc.stdout)
    PLAN_IDS.add(plan_id(read_plan(str(path))))
    return path


@pytest.mark.usefixtures("own_cgroups")
def test_verify_three_tenants_and_host_within_10_pct(
    volbench: Volbench, loop_device: Loop, tmp_path: Path
) -> None:
    device = loop_device(64)
    plan = _plan(
        volbench,
        tmp_path,
        "--capability",
        "iops=3000,bps=100m",
        "--host-reserve",
        "iops=300,bps=10m",
        *TENANTS,
        "--volume-size",
        "246",
    )
    proc = volbench(
        "qos",
        "verify",
        str(plan),
        "--device",
        device,
        "--duration",
        "2s",
        "--with-host",
        "--quiet",
        "qos-t40",
        "--runs-dir",
        str(volbench.runs_dir),
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout  # the tenants' figures
    assert _left_behind() == []  # volbench removed its cgroups itself
    document = json.loads(proc.stdout)
    tenants = {t["tenant"]: t for t in document["tenants"]}
    assert set(tenants) == {*NAMES, "host"}
    planned = {n: 2700 * int(n[-2:]) / 180 for n in NAMES} | {"host": 300}
    for name, iops in planned.items():
        assert tenants[name]["planned_iops"] == pytest.approx(iops)
        assert abs(tenants[name]["achieved_iops"] - iops) <= 0.1 * iops, tenants[name]
    assert document["jain_index"] > 0.99
    assert document["isolated"] is True  # the quiet tenant got its plan beside noisy ones
    roles = {n: t["role"] for n, t in tenants.items()}
    assert roles == {"qos-t40": "quiet", "qos-t60": "noisy", "qos-t80": "noisy", "host": "host"}
    # every achieved figure is fio's own: each tenant's stored raw output says the same
    stored = volbench.stored(str(document["run_id"]))
    assert stored["plan"] == "qos-verify" and stored["status"] == "completed"
    fio_iops = {}
    for raw in stored["fio_outputs"]:
        (job,) = fio_jobs(fio_json(raw))
        fio_iops[job["jobname"]] = job["read"]["iops"]
        row = tenants[job["jobname"]]  # fio's IOPS samples over time, as fio gave them
        assert (row["iops_min"], row["iops_max"]) == (
            job["read"]["iops_min"],
            job["read"]["iops_max"],
        )
        assert row["iops_samples"] == job["read"]["iops_samples"] >= 1
    assert fio_iops == {n: pytest.approx(t["achieved_iops"]) for n, t in tenants.items()}
    assert stored["settings"]["device"] == _devnum(device)
    written = stored["settings"]["written"]  # "not available" rows name the file alone
    host_files = [w["file"] for w in written if w["tenant"] == "host" and "/" in w["file"]]
    host_group = f"volbench-p{plan_id(read_plan(str(plan)))}-host"
    assert host_files and all(f"{host_group}/" in f for f in host_files)
    run_id = str(document["run_id"])
    shown, fit, predicted = run_all(
        [
            (volbench, ("show", run_id, "--format", "json"), None),
            (volbench, ("qos", "fit", run_id, "--format", "json"), None),
            (
                volbench,
                (
                    "qos",
                    "predict",
                    "--capability",
                    "iops=3000",
                    "--host-used",
                    "iops=300",
                    "--alpha",
                    "0",
                    *TENANTS,
                    "--run",
                    run_id,
                    "--format",
                    "json",
                ),
                None,
            ),
        ]
    )
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["tenants"] == document["tenants"]  # stored = printed
    assert fit.returncode == 0, fit.stderr
    (group,) = json.loads(fit.stdout)["groups"]
    achieved = sum(tenants[n]["achieved_iops"] for n in NAMES)
    host = tenants["host"]["achieved_iops"]
    assert group["tenants"] == 3 and group["direction"] == "read"
    assert group["alpha"] == pytest.approx(1 - achieved / (3000 - host))
    assert abs(group["alpha"]) < 0.1  # no virtualisation here: the limits are all that binds
    assert group["capped"] == [int(run_id)]  # so fit says alpha measured the plan
    assert "alpha measures the plan" in json.loads(fit.stdout)["warnings"][0]
    assert predicted.returncode == 0, predicted.stderr
    rows = {r["tenant"]: r for r in json.loads(predicted.stdout)["tenants"]}
    assert rows["qos-t40"]["measured_iops"] == pytest.approx(tenants["qos-t40"]["achieved_iops"])
    assert abs(rows["qos-t40"]["error_pct"]) < 10


@pytest.mark.usefixtures("own_cgroups")
def test_apply_writes_limits_keyed_by_device_and_clear_removes_them(
    volbench: Volbench, loop_device: Loop, tmp_path: Path
) -> None:
    device = loop_device(32)
    plan = _plan(
        volbench, tmp_path, "--capability", "iops=1800,bps=90m", *TENANTS, "--nominal-sizes"
    )
    proc = volbench("qos", "apply", str(plan), "--device", device, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    hierarchy = cgroup.find_hierarchy()
    devnum = _devnum(device)
    group = f"p{plan_id(read_plan(str(plan)))}"
    assert document["device"] == devnum
    if hierarchy.version == 1:
        limit = hierarchy.path(f"{group}-qos-t40") / "blkio.throttle.read_iops_device"
        assert limit.read_text().split() == [devnum, "400"]  # 1800 x 40/180
        bps = hierarchy.path(f"{group}-qos-t80") / "blkio.throttle.write_bps_device"
        assert bps.read_text().split() == [devnum, str(round(90 * 2**20 * 80 / 180))]
    again = volbench("qos", "apply", str(plan), "--device", device)
    assert "volbench qos clear" in error_line(again, 2)
    # the plan's cgroups only: other work on this host may have volbench cgroups too
    cleared = volbench("qos", "clear", str(plan), "--format", "json")
    assert cleared.returncode == 0, cleared.stderr
    removed = json.loads(cleared.stdout)["removed"]
    assert sorted(Path(p).name for p in removed) == [f"volbench-{group}-{n}" for n in NAMES]
    assert _left_behind() == []


@pytest.mark.usefixtures("own_cgroups")
def test_plans_sharing_a_tenant_name_apply_side_by_side_and_clear_all_spares_foreign_cgroups(
    volbench: Volbench, loop_device: Loop, tmp_path: Path
) -> None:
    """Two plans with a tenant ``qos-web`` each get their own cgroups (named after the
    plan); ``qos clear --all`` removes volbench's marked cgroups and leaves a
    ``volbench-`` cgroup volbench did not make."""
    device = loop_device(32)
    web_api = _plan(
        volbench,
        tmp_path,
        "--capability",
        "iops=1000",
        "--nominal-sizes",
        "--tenant",
        "qos-web:40",
        "--tenant",
        "qos-api:60",
    )
    web_db = _plan(
        volbench,
        tmp_path,
        "--capability",
        "iops=1000",
        "--nominal-sizes",
        "--tenant",
        "qos-web:40",
        "--tenant",
        "qos-db:60",
    )
    hierarchy = cgroup.find_hierarchy()
    foreign = hierarchy.root / f"volbench-foreign-{os.getpid()}"
    foreign.mkdir()  # a real cgroup, unmarked: somebody else's
    try:
        for plan in (web_api, web_db):
            proc = volbench("qos", "apply", str(plan), "--device", device, "--format", "json")
            assert proc.returncode == 0, proc.stderr
        made = _left_behind()
        assert len(made) == 4 and len({p.name for p in made}) == 4
        assert sum(p.name.endswith("-qos-web") for p in made) == 2
        cleared = volbench("qos", "clear", "--all", "--format", "json")
        assert cleared.returncode == 0, cleared.stderr
        removed = {Path(p) for p in json.loads(cleared.stdout)["removed"]}
        assert set(made) <= removed and foreign not in removed
        assert foreign.is_dir()
        assert _left_behind() == []
    finally:
        foreign.rmdir()


@pytest.mark.usefixtures("own_cgroups")
def test_bad_devices_and_plans_leave_no_cgroup(
    volbench: Volbench, loop_device: Loop, tmp_path: Path
) -> None:
    device = loop_device(32)
    plan = _plan(volbench, tmp_path, "--capability", "iops=1000", *TENANTS)  # 180 GiB
    file_target = tmp_path / "disk.img"
    file_target.write_bytes(b"\0" * 4096)
    (tmp_path / "bad.json").write_text('{"schema": "something else"}')
    not_block, bad_plan, missing, verify_big, apply_big, measure_big = run_all(
        [
            (volbench, ("qos", "verify", str(plan), "--device", str(file_target)), None),
            (volbench, ("qos", "apply", str(tmp_path / "bad.json"), "--device", "x"), None),
            (volbench, ("qos", "apply", str(tmp_path / "none.json"), "--device", "x"), None),
            (volbench, ("qos", "verify", str(plan), "--device", device), None),
            (volbench, ("qos", "apply", str(plan), "--device", device), None),
            (volbench, ("qos", "plan", "--measure", device, *TENANTS), None),
        ]
    )
    for big in (verify_big, apply_big, measure_big):  # 180 GiB of tenants on 32 MiB
        assert f"(180 GiB) do not fit on {device} (0.03125 GiB)" in error_line(big, 2)
        assert "--nominal-sizes" in error_line(big, 2)
    assert volbench.stored_runs() == []  # nothing measured, nothing verified
    assert "not a block device" in error_line(not_block, 2)
    assert "not a volbench QoS plan" in error_line(bad_plan, 2)
    assert "cannot read QoS plan" in error_line(missing, 2)
    assert _left_behind() == []


def test_not_root_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(TargetError, match="needs root"):
        cgroup.require_root()


def test_plan_measures_capability_with_fio(volbench: Volbench, loop_device: Loop) -> None:
    device = loop_device(32)
    proc = volbench(
        "qos",
        "plan",
        "--measure",
        device,
        "--measure-time",
        "1s",
        "--tenant",
        "a:8m",
        "--tenant",
        "b:24m",
        "--runs-dir",
        str(volbench.runs_dir),
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["volume_gib"] == 32 / 1024  # V = the measured device's capacity
    assert document["nominal_sizes"] is False
    stored = volbench.stored(str(document["capability_run"]))
    assert stored["plan"] == "qos-capability"
    jobs = {j["jobname"]: j for raw in stored["fio_outputs"] for j in fio_jobs(fio_json(raw))}
    capability = document["capability"]  # reads and writes: an empty device may be written
    assert capability["riops"] == pytest.approx(jobs["capability-iops"]["read"]["iops"])
    assert capability["rbps"] == pytest.approx(jobs["capability-bandwidth"]["read"]["bw_bytes"])
    assert capability["wiops"] == pytest.approx(jobs["capability-write-iops"]["write"]["iops"])
    wbps = jobs["capability-write-bandwidth"]["write"]["bw_bytes"]
    assert capability["wbps"] == pytest.approx(wbps)
    assert document["tenants"][1]["read_iops"] == pytest.approx(capability["riops"] * 0.75)
    assert document["tenants"][1]["write_iops"] == pytest.approx(capability["wiops"] * 0.75)
    assert document["writes_not_measured"] == ""


@pytest.mark.usefixtures("own_cgroups")
def test_failed_fio_is_exit_3_stored_failed_and_leaves_no_cgroup(
    volbench: Volbench, loop_device: Loop, tmp_path: Path
) -> None:
    device = loop_device(32)
    plan = _plan(volbench, tmp_path, "--capability", "iops=1000", *TENANTS, "--nominal-sizes")
    # fio lists the rdma engine, which fails to start without an RDMA device
    proc = volbench(
        "qos",
        "verify",
        str(plan),
        "--device",
        device,
        "--duration",
        "1s",
        "--ioengine",
        "rdma",
        "--runs-dir",
        str(volbench.runs_dir),
    )
    line = error_line(proc, 3)
    assert "stored as failed" in line
    assert _left_behind() == []
    assert volbench.stored()["status"] == "failed"


def _verify_under_way(
    volbench: Volbench, loop_device: Loop, tmp_path: Path
) -> tuple[subprocess.Popen[str], set[int]]:
    """A verification of three tenants on a new loop device, once every tenant's fio
    runs in its cgroup: the volbench process and those fio's ids."""
    device = loop_device(32)
    plan = _plan(volbench, tmp_path, "--capability", "iops=1000", *TENANTS, "--volume-size", "246")
    proc = volbench.start(
        "qos",
        "verify",
        str(plan),
        "--device",
        device,
        "--duration",
        "3s",
        "--runs-dir",
        str(volbench.runs_dir),
    )
    fio_pids: set[int] = set()
    deadline = time.monotonic() + 30
    while len(fio_pids) < len(NAMES) and time.monotonic() < deadline:  # every fio started
        assert proc.poll() is None, proc.communicate()
        fio_pids = {
            int(pid) for path in _left_behind() for pid in _read(path / "cgroup.procs").split()
        }
        time.sleep(0.1)
    assert len(fio_pids) >= len(NAMES)
    return proc, fio_pids


@pytest.mark.usefixtures("own_cgroups")
def test_sigterm_during_verify_cleans_up_exits_143_and_resumes(
    volbench: Volbench, loop_device: Loop, tmp_path: Path
) -> None:
    proc, fio_pids = _verify_under_way(volbench, loop_device, tmp_path)
    os.kill(proc.pid, signal.SIGTERM)  # the volbench this test started
    done = finish(proc, 30)
    assert done.returncode == 143, done.stderr
    assert "terminated by SIGTERM" in done.stderr and "Traceback" not in done.stderr
    assert _left_behind() == []  # no cgroup of this plan left
    running = [p for p in fio_pids if "fio" in _read(Path(f"/proc/{p}/comm"))]
    assert running == []  # every fio of this verify has ended
    stored = volbench.stored()
    assert stored["plan"] == "qos-verify" and stored["status"] == "interrupted"

    # the same run goes on: its tenants run again together, in their cgroups
    resumed = volbench("resume", "latest", "--runs-dir", str(volbench.runs_dir))
    assert resumed.returncode == 0, resumed.stderr
    assert "its tenants run again together" in resumed.stderr
    assert _left_behind() == []
    document = volbench.stored()
    assert document["id"] == stored["id"] and document["status"] == "completed"
    assert sorted({r["test"] for r in document["results"]}) == sorted(NAMES)
    assert len(document["fio_outputs"]) == len(NAMES)
    again = volbench("resume", "latest")
    assert "is completed: nothing to resume" in error_line(again, 2)


@pytest.mark.usefixtures("own_cgroups")
def test_sigkill_during_verify_leaves_cgroups_that_resume_clears(
    volbench: Volbench, loop_device: Loop, tmp_path: Path
) -> None:
    """SIGKILL gives verify no chance to remove its cgroups; ``resume`` removes the
    idle ones of its own plan (says so) and runs the tenants again, leaving none."""
    proc, fio_pids = _verify_under_way(volbench, loop_device, tmp_path)
    proc.kill()  # the volbench this test started
    finish(proc, 30)
    for pid in fio_pids:  # the fio it started, if they outlived it
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while any(_read(p / "cgroup.procs").strip() for p in _left_behind()):
        assert time.monotonic() < deadline, "fio did not end"
        time.sleep(0.1)
    left = _left_behind()
    assert left != []  # left by the kill
    resumed = volbench("resume", "latest", "--runs-dir", str(volbench.runs_dir))
    assert resumed.returncode == 0, resumed.stderr
    for path in left:
        assert f"removed cgroup {path}, left by volbench pid {proc.pid} on" in resumed.stderr
    assert _left_behind() == []
    assert volbench.stored()["status"] == "completed"


@pytest.mark.usefixtures("own_cgroups")
def test_the_next_verify_removes_what_a_killed_one_left_and_spares_a_live_ones(
    volbench: Volbench, loop_device: Loop, tmp_path: Path
) -> None:
    """A verify killed by SIGKILL leaves its cgroups; the next volbench that makes
    cgroups removes those whose maker has ended (recorded with each: its pid and start
    time), and leaves an idle one whose maker still runs (this test's process)."""
    proc, fio_pids = _verify_under_way(volbench, loop_device, tmp_path)
    left = _left_behind()
    os.kill(proc.pid, signal.SIGKILL)  # the volbench this test started, by its pid
    finish(proc, 30)
    for pid in fio_pids:  # the fio it started, if they outlived it
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while any(_read(p / "cgroup.procs").strip() for p in left):
        assert time.monotonic() < deadline, "fio did not end"
        time.sleep(0.1)
    assert [p for p in left if p.is_dir()] == left  # SIGKILL: nothing removed them
    hierarchy = cgroup.find_hierarchy()
    live = cgroup.Limits("qos-db", 1, 1, 0, 0, 10, 1, f"p{os.getpid()}-qos-db")
    device = loop_device(32)
    cgroup.apply(hierarchy, _devnum(device), [live], "live", owned=True)  # this process's
    try:
        plan = _plan(volbench, tmp_path, "--capability", "iops=1000", *TENANTS, "--nominal-sizes")
        runs = ("--runs-dir", str(volbench.runs_dir))
        again = volbench("qos", "verify", str(plan), "--device", device, "--duration", "1s", *runs)
        assert again.returncode in (0, 1), again.stderr  # it ran: its figures are not asked
        for path in left:
            assert f"removed cgroup {path}, left by volbench pid {proc.pid} on" in again.stderr
        assert not any(p.exists() for p in left)
        assert hierarchy.path(live.cgroup).is_dir()  # its maker lives: not touched
        assert str(hierarchy.path(live.cgroup)) not in again.stderr
    finally:
        cgroup.remove([hierarchy.path(live.cgroup)])
    assert _left_behind() == []


def _read(path: Path) -> str:
    """A /proc or cgroup file's text; "" once it is gone."""
    try:
        return path.read_text()
    except OSError:
        return ""


def test_plan_measures_reads_only_on_a_device_with_data(
    volbench: Volbench, loop_device: Loop, mkfs_ext4: Callable[[Path], None]
) -> None:
    device = loop_device(32, setup=mkfs_ext4)
    proc = volbench(
        "qos",
        "plan",
        "--measure",
        device,
        "--measure-time",
        "1s",
        "--tenant",
        "a:8m",
        "--runs-dir",
        str(volbench.runs_dir),
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert document["capability"]["riops"] > 0 and document["capability"]["wiops"] == 0
    assert "ext4" in document["writes_not_measured"]  # the safety rules' reason
    stored = volbench.stored(str(document["capability_run"]))
    jobs = {j["jobname"] for raw in stored["fio_outputs"] for j in fio_jobs(fio_json(raw))}
    assert jobs == {"capability-iops", "capability-bandwidth"}  # nothing written
