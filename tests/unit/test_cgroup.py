"""The cgroup module on a fake hierarchy (a folder): what it writes, and cleanup."""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from volbench.analysis.qos import Rates, Tenant, make_plan
from volbench.errors import TargetError
from volbench.plans.qos.setup import host_group, plan_id, tenant_limits
from volbench.store import owner as owners
from volbench.targets import cgroup
from volbench.targets.cgroup import Hierarchy, Limits


def _v1(tmp_path: Path) -> Hierarchy:
    (tmp_path / "blkio.throttle.read_iops_device").write_text("")
    return Hierarchy(tmp_path, 1)


def test_v1_throttle_lines_keyed_by_device(tmp_path: Path) -> None:
    hierarchy = _v1(tmp_path)
    limits = Limits("a", 600, 150, 1_000_000, 200_000, 500, 5000)
    written = cgroup.apply(hierarchy, "7:3", [limits], "p1", owned=False)
    folder = tmp_path / "volbench-a"
    assert (folder / "blkio.throttle.read_iops_device").read_text() == "7:3 600\n"
    assert (folder / "blkio.throttle.write_iops_device").read_text() == "7:3 150\n"
    assert (folder / "blkio.throttle.read_bps_device").read_text() == "7:3 1000000\n"
    assert (folder / "blkio.throttle.write_bps_device").read_text() == "7:3 200000\n"
    assert not (folder / "blkio.weight").exists()  # no CFQ/BFQ: not offered, not written
    assert written[-1].value.startswith("not available")
    assert len(written) == 5


def test_v1_zero_bandwidth_means_no_bps_rule(tmp_path: Path) -> None:
    cgroup.apply(_v1(tmp_path), "7:3", [Limits("a", 600, 600, 0, 0, 500, 5000)], "p1", owned=False)
    assert not (tmp_path / "volbench-a" / "blkio.throttle.read_bps_device").exists()


def test_v2_io_max_and_weight(tmp_path: Path) -> None:
    hierarchy = Hierarchy(tmp_path, 2)
    cgroup.apply(hierarchy, "8:0", [Limits("a", 100, 20, 0, 1000, 500, 5000)], "p1", owned=False)
    assert (tmp_path / "cgroup.subtree_control").read_text() == "+io\n"
    assert (tmp_path / "volbench-a" / "io.max").read_text() == (
        "8:0 riops=100 wiops=20 rbps=max wbps=1000\n"
    )
    assert not (tmp_path / "volbench-a" / "io.weight").exists()  # a folder offers none


def test_failure_removes_every_cgroup_it_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hierarchy = _v1(tmp_path)
    monkeypatch.setattr(cgroup, "_lines", lambda *_: [])  # a folder cannot rmdir with files
    (tmp_path / "volbench-b").mkdir()  # left by someone: apply must refuse, remove its own
    with pytest.raises(TargetError, match="volbench qos clear"):
        cgroup.apply(
            hierarchy,
            "7:3",
            [Limits("a", 1, 1, 0, 0, 10, 1), Limits("b", 1, 1, 0, 0, 10, 1)],
            "p1",
            owned=True,
        )
    assert not (tmp_path / "volbench-a").exists()
    assert (tmp_path / "volbench-b").exists()


def test_ours_and_remove_touch_only_volbench_cgroups(tmp_path: Path) -> None:
    hierarchy = _v1(tmp_path)
    limits = [Limits("a", 1, 1, 0, 0, 10, 1, "p1-a"), Limits("b", 1, 1, 0, 0, 10, 1, "p2-b")]
    cgroup.apply(hierarchy, "7:3", limits[:1], "p1", owned=False)
    cgroup.apply(hierarchy, "7:3", limits[1:], "p2", owned=False)
    (tmp_path / "volbench-foreign").mkdir()  # named like ours, not made by volbench
    (tmp_path / "other").mkdir()
    assert cgroup.plan_of(tmp_path / "volbench-p1-a") == "p1"
    assert cgroup.plan_of(tmp_path / "volbench-foreign") is None
    assert cgroup.ours(hierarchy, "p2") == [tmp_path / "volbench-p2-b"]
    assert cgroup.ours(hierarchy) == [tmp_path / "volbench-p1-a", tmp_path / "volbench-p2-b"]
    for path in cgroup.ours(hierarchy):  # a folder keeps the files written; cgroupfs not
        for file in path.iterdir():
            file.unlink()
    removed = cgroup.remove(cgroup.ours(hierarchy))
    assert removed == [str(tmp_path / "volbench-p1-a"), str(tmp_path / "volbench-p2-b")]
    assert (tmp_path / "other").exists() and (tmp_path / "volbench-foreign").exists()
    with pytest.raises(ValueError, match="not a volbench cgroup"):
        cgroup.remove([tmp_path / "other"])


def test_a_cgroup_that_cannot_be_marked_is_not_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_: object) -> None:
        raise OSError(95, "Operation not supported")

    monkeypatch.setattr(cgroup.os, "setxattr", refuse)
    with pytest.raises(TargetError, match=r"cannot mark cgroup .*volbench-a as volbench's"):
        cgroup.apply(_v1(tmp_path), "7:3", [Limits("a", 1, 1, 0, 0, 10, 1)], "p1", owned=False)
    assert not (tmp_path / "volbench-a").exists()


def test_find_hierarchy_prefers_v2_io_then_v1_blkio(tmp_path: Path) -> None:
    unified, blkio = tmp_path / "unified", tmp_path / "blkio"
    unified.mkdir()
    blkio.mkdir()
    (unified / "cgroup.controllers").write_text("cpu memory\n")
    (blkio / "blkio.throttle.read_iops_device").write_text("")
    mounts = (
        f"cgroup2 {unified} cgroup2 rw,relatime 0 0\ncgroup {blkio} cgroup rw,relatime,blkio 0 0\n"
    )
    assert cgroup.find_hierarchy(mounts) == Hierarchy(blkio, 1)
    (unified / "cgroup.controllers").write_text("cpu io memory\n")
    assert cgroup.find_hierarchy(mounts) == Hierarchy(unified, 2)
    with pytest.raises(TargetError, match="no cgroup I/O controller"):
        cgroup.find_hierarchy("proc /proc proc rw 0 0\n")


def test_remove_idle_reports_busy_cgroups_and_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    busy, idle = tmp_path / "volbench-busy", tmp_path / "volbench-idle"
    busy.mkdir()
    idle.mkdir()
    (busy / "cgroup.procs").write_text("1\n")  # a folder with a file: rmdir fails (ENOTEMPTY)
    real_rmdir = Path.rmdir

    def rmdir(path: Path) -> None:
        if path == busy:
            raise OSError(16, "Device or resource busy")  # what cgroupfs says (EBUSY)
        real_rmdir(path)

    monkeypatch.setattr(Path, "rmdir", rmdir)
    assert cgroup.remove_idle([busy, idle]) == ([str(idle)], [str(busy)])
    with pytest.raises(TargetError, match="still has processes"):
        cgroup.remove([busy], settle_s=0.2)


def test_remove_waits_for_a_cgroup_whose_last_process_is_being_reaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fio that has just ended keeps its cgroup busy until it is reaped (init reaps a
    job process whose fio was SIGKILLed): ``remove`` tries again for a while."""
    ending = tmp_path / "volbench-ending"
    ending.mkdir()
    tries: list[Path] = []
    real_rmdir = Path.rmdir

    def rmdir(path: Path) -> None:
        tries.append(path)
        if len(tries) < 4:
            raise OSError(16, "Device or resource busy")
        real_rmdir(path)

    monkeypatch.setattr(Path, "rmdir", rmdir)
    assert cgroup.remove([ending]) == [str(ending)]
    assert len(tries) == 4 and not ending.exists()


def test_cgroups_are_named_after_the_plan() -> None:
    first = make_plan((1000, 0), (100, 0), [Tenant("web", 1), Tenant("b", 2)])
    second = make_plan((1000, 0), (100, 0), [Tenant("web", 1), Tenant("c", 2)])
    third = make_plan((2000, 0), (100, 0), [Tenant("web", 1), Tenant("b", 2)])
    ids = {plan_id(first), plan_id(second), plan_id(third)}
    assert len(ids) == 3 and all(len(i) == 8 for i in ids)  # a tenant web of each: no clash
    *tenants, host = tenant_limits(first, with_host=True)
    assert [t.cgroup for t in tenants] == [f"p{plan_id(first)}-web", f"p{plan_id(first)}-b"]
    assert [t.tenant for t in tenants] == ["web", "b"]
    assert (host.tenant, host.cgroup) == ("host", host_group(first))
    assert host.cgroup == f"p{plan_id(first)}-host"
    again = make_plan((1000, 0), (100, 0), [Tenant("web", 1), Tenant("b", 2)])
    assert plan_id(again) == plan_id(first)  # the same plan: `qos clear PLAN` finds it


def test_apply_writes_read_and_write_limits_of_a_seed_plan(tmp_path: Path) -> None:
    # the NetEase QoS test: read C=3888 C0=975, write C=156 C0=48; 40 of 180 GiB
    plan = make_plan(Rates(3888, 156), Rates(975, 48), [Tenant("t40", 40), Tenant("t140", 140)])
    cgroup.apply(_v1(tmp_path), "7:3", tenant_limits(plan), plan_id(plan), owned=False)
    folder = tmp_path / f"volbench-p{plan_id(plan)}-t40"
    assert (folder / "blkio.throttle.read_iops_device").read_text() == "7:3 647\n"  # 2913x40/180
    assert (folder / "blkio.throttle.write_iops_device").read_text() == "7:3 24\n"  # 108x40/180
    v2 = tmp_path / "v2"
    v2.mkdir()
    cgroup.apply(Hierarchy(v2, 2), "8:0", tenant_limits(plan), plan_id(plan), owned=False)
    assert (v2 / f"volbench-p{plan_id(plan)}-t40" / "io.max").read_text() == (
        "8:0 riops=647 wiops=24 rbps=max wbps=max\n"
    )


def test_reclaim_removes_only_cgroups_whose_maker_has_ended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cgroup made for a run records its maker; the next volbench removes it once that
    process has ended (its pid gone, reused by another process, or a zombie), never one
    whose maker lives or that records none (``qos apply``'s)."""
    hierarchy = _v1(tmp_path)
    monkeypatch.setattr(cgroup, "_lines", lambda *_: [])  # a folder cannot rmdir with files
    names = ("live", "reused", "zombie", "applied")
    limits = [Limits(n, 1, 1, 0, 0, 10, 1, f"p1-{n}") for n in names]
    cgroup.apply(hierarchy, "7:3", limits[:3], "p1", owned=True)  # this process: lives
    cgroup.apply(hierarchy, "7:3", limits[3:], "p1", owned=False)
    here = owners.current()
    assert cgroup.owner_of(tmp_path / "volbench-p1-live") == here
    assert cgroup.owner_of(tmp_path / "volbench-p1-applied") is None
    reused = replace(here, start_ticks=here.start_ticks + 1)  # the pid, another process
    os.setxattr(tmp_path / "volbench-p1-reused", cgroup.OWNER, reused.text().encode())
    child = subprocess.Popen(["sleep", "60"])  # alive until killed: "sleep 0" may have
    started = owners._start_ticks(child.pid)  # ended by now (a zombie has no start here)
    child.kill()
    assert started is not None
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # ended, not yet collected
    ended = replace(here, pid=child.pid, start_ticks=started)
    os.setxattr(tmp_path / "volbench-p1-zombie", cgroup.OWNER, ended.text().encode())
    try:
        lines = cgroup.reclaim(hierarchy)
    finally:
        child.wait()
    assert sorted(lines) == [
        f"removed cgroup {tmp_path / f'volbench-p1-{n}'}, left by volbench"
        f" {o.describe()}, which has ended"
        for n, o in (("reused", reused), ("zombie", ended))
    ]
    assert sorted(p.name for p in cgroup.ours(hierarchy)) == [
        "volbench-p1-applied",
        "volbench-p1-live",
    ]
    assert cgroup.reclaim(hierarchy) == []
