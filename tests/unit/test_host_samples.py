"""Host samples stored with a round: fio's processes found and measured on a fake /proc
and for real, the cgroup's CPU quota, throttling and block I/O caps on fake cgroup
trees (v1 and v2), and samples, facts and drive readings through the store and back."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from volbench.analysis.host_series import (
    KINDS,
    fact_series,
    health_series,
    hosts_of_rounds,
    is_host,
    round_hosts,
    sample_series,
)
from volbench.analysis.timeseries import round_logs
from volbench.model import HostSample, LogSeries, RunSettings, StoredWorkload, TargetInfo
from volbench.plans.runs.round_watch import enabled, health_values
from volbench.report.run_sheets import run_document
from volbench.store.repository import Store
from volbench.targets import cgroup_limits as cg
from volbench.targets.kernel_counters import (
    TICKS_PER_S,
    DiskStat,
    ProcessTimes,
    descendants,
    parse_process_ticks,
    parse_schedstat,
    process_load,
    queue_length,
)
from volbench.targets.sampler import Sampler
from volbench.targets.smart import DriveHealth, DriveTemperatures

# --- fio's processes


def test_stat_and_schedstat_fields() -> None:
    # proc(5): the command name may hold spaces and ")"; utime and stime are fields 14-15
    stat = "4242 (fio (job 1)) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 5 0 100"
    assert parse_process_ticks(stat) == 300
    assert parse_process_ticks("4242 (fio) S 1 2") is None
    assert parse_schedstat("123456 7890 12\n") == (123456, 7890)
    assert parse_schedstat("") is None


def fake_process(
    root: Path,
    pid: int,
    ticks: int,
    threads: dict[int, tuple[int, int]],
    children: tuple[int, ...] = (),
) -> None:
    base = root / str(pid)
    (base / "task").mkdir(parents=True, exist_ok=True)
    (base / "stat").write_text(f"{pid} (fio) S 1 1 1 0 -1 0 0 0 0 0 {ticks} 0 0 0 20")
    for tid, (run, wait) in threads.items():
        (base / "task" / str(tid)).mkdir(exist_ok=True)
        (base / "task" / str(tid) / "schedstat").write_text(f"{run} {wait} 5\n")
        (base / "task" / str(tid) / "children").write_text(
            " ".join(map(str, children)) if tid == pid else ""
        )


def test_descendants_and_their_load(tmp_path: Path) -> None:
    fake_process(tmp_path, 10, 0, {10: (0, 0)}, children=(20,))
    fake_process(tmp_path, 20, 0, {20: (0, 0), 21: (0, 0)}, children=(30,))
    fake_process(tmp_path, 30, 0, {30: (0, 0)})
    assert sorted(descendants(10, tmp_path)) == [20, 30]
    before = {20: ProcessTimes(0, {20: (0, 0), 21: (0, 0)}), 30: ProcessTimes(0, {30: (0, 0)})}
    after = {
        20: ProcessTimes(TICKS_PER_S, {20: (int(0.9e9), int(0.5e9)), 21: (int(0.1e9), 0)}),
        30: ProcessTimes(TICKS_PER_S // 2, {30: (int(0.5e9), int(0.25e9))}),
        40: ProcessTimes(99, {}),  # started since: not in both readings
    }
    cores, busiest, waiting = process_load(before, after, 1.0) or (0, 0, 0)
    assert cores == pytest.approx(1.5 + 99 / TICKS_PER_S)  # 40 started since: all its time
    assert busiest == pytest.approx(90.0)
    assert waiting == pytest.approx(0.75)
    assert process_load(after, {}, 1.0) is None  # none left


def test_a_child_that_spins_is_measured() -> None:
    spin = "import time\nend = time.time() + 3\nwhile time.time() < end: pass\n"
    sampler = Sampler(parent=os.getpid())
    child = subprocess.Popen([sys.executable, "-c", spin])
    try:
        time.sleep(0.3)  # the child exists at the first reading
        sampler.sample()
        time.sleep(1.0)
        sample = sampler.sample()
    finally:
        child.kill()  # the child this test started
        child.wait()
    assert sample is not None and sample.fio_cpu_cores is not None
    assert sample.fio_cpu_cores + (sample.fio_wait_threads or 0) > 0.5  # running or waiting
    assert 0 <= (sample.fio_busiest_pct or 0) <= 100


def test_mean_queue_length() -> None:
    before = DiskStat(0, 0, 0, 0, 1000)
    after = DiskStat(0, 0, 4, 500, 5000)
    assert queue_length(before, after, 2.0) == pytest.approx(2.0)  # 4000 ms x req / 2000 ms


# --- the cgroup fio runs in

MOUNTS_V1 = """cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0
cgroup /sys/fs/cgroup/cpuacct cgroup rw,relatime,cpuacct 0 0
cgroup /sys/fs/cgroup/blkio cgroup rw,relatime,blkio 0 0
cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0
"""


def test_membership_and_mounts() -> None:
    found = cg.parse_membership("4:memory:/a\n2:cpu,cpuacct:/volbench-x\n0::/user.slice\n")
    assert found == {
        "memory": "/a",
        "cpu": "/volbench-x",
        "cpuacct": "/volbench-x",
        "": "/user.slice",
    }
    mounts = cg.parse_mounts(MOUNTS_V1)
    assert mounts["cpu"] == Path("/sys/fs/cgroup/cpu")
    assert mounts[""] == Path("/sys/fs/cgroup/unified")


def v1_tree(root: Path) -> cg.Hierarchies:
    """A v1 hierarchy: volbench in cpu:/outer/inner and blkio:/outer/inner."""
    for controller in ("cpu", "cpuacct", "blkio"):
        (root / controller / "outer" / "inner").mkdir(parents=True)
    cpu = root / "cpu"
    (cpu / "outer" / "cpu.cfs_quota_us").write_text("50000\n")
    (cpu / "outer" / "cpu.cfs_period_us").write_text("100000\n")
    (cpu / "outer" / "inner" / "cpu.cfs_quota_us").write_text("-1\n")
    (cpu / "outer" / "inner" / "cpu.cfs_period_us").write_text("100000\n")
    (cpu / "outer" / "cpu.stat").write_text("nr_periods 40\nnr_throttled 30\nthrottled_time 9\n")
    (root / "cpuacct" / "outer" / "cpuacct.usage").write_text("2000000000\n")
    blkio = root / "blkio"
    (blkio / "outer" / "blkio.throttle.read_iops_device").write_text("7:3 1000\n8:0 5\n")
    (blkio / "outer" / "inner" / "blkio.throttle.read_iops_device").write_text("7:3 1500\n")
    (blkio / "outer" / "inner" / "blkio.throttle.write_bps_device").write_text("7:3 1048576\n")
    dirs = {c: root / c / "outer" / "inner" for c in ("cpu", "cpuacct", "blkio")}
    return cg.Hierarchies(dirs, {c: root / c for c in ("cpu", "cpuacct", "blkio")})


def test_v1_quota_stat_and_caps_along_the_path(tmp_path: Path) -> None:
    found = v1_tree(tmp_path)
    quota = cg.cpu_quota(found)
    assert quota == cg.CpuQuota(0.5, tmp_path / "cpu" / "outer", 1)  # the ancestor binds
    assert cg.cpu_stat(quota, found) == cg.CpuStat(40, 30, 2_000_000_000)
    caps = cg.io_caps("7:3", found)
    assert caps == cg.IoCaps(read_iops=1000, write_bps=1048576)  # the smaller of the two
    assert not cg.io_caps("9:9", found).any()


def test_v2_quota_and_io_max(tmp_path: Path) -> None:
    group = tmp_path / "unified" / "volbench-t"
    group.mkdir(parents=True)
    (group / "cpu.max").write_text("150000 100000\n")
    (group / "cpu.stat").write_text("usage_usec 300\nnr_periods 10\nnr_throttled 4\n")
    (group / "io.max").write_text("7:3 rbps=max wbps=2097152 riops=800 wiops=max\n")
    (tmp_path / "unified" / "cpu.max").write_text("max 100000\n")
    found = cg.Hierarchies({"": group}, {"": tmp_path / "unified"})
    quota = cg.cpu_quota(found)
    assert quota is not None and quota.cores == 1.5 and quota.version == 2
    assert cg.cpu_stat(quota, found) == cg.CpuStat(10, 4, 300_000)
    assert cg.io_caps("7:3", found) == cg.IoCaps(read_iops=800, write_bps=2097152)


def test_no_quota_anywhere(tmp_path: Path) -> None:
    assert cg.cpu_quota(cg.Hierarchies({}, {})) is None
    this = cg.hierarchies()  # this process's own: readable, whatever it holds
    assert isinstance(this.dirs, dict)


# --- stored with the round and read back


def samples() -> list[HostSample]:
    return [
        HostSample(
            1000.0 + t, (50.0 + t, 70.0), 80.0, 3, 900.0, 1.0, None, 2.0, None, 0.9, 88.0, 0.1, 2.5
        )
        for t in range(3)
    ]


def test_series_round_trip_through_the_store(tmp_path: Path) -> None:
    found = sample_series(4, "randread", samples())
    facts = {"cpu_quota": 0.5, "cg_period": 30, "cg_thrott": 27, "cap_riops": 1000, "x": 1}
    found += fact_series(4, "randread", 1000.0, facts)
    drive = [
        (999.0, {"temp_c": 41.0, "temp_warn": 70.0, "thm_trans": 2.0}),
        (1004.0, {"temp_c": 72.0, "thm_trans": 5.0}),
    ]
    found += health_series(4, "randread", drive)
    assert all(is_host(s) and len(s.kind) <= 10 and s.kind in KINDS for s in found)
    fio_log = LogSeries(4, "randread", "iops", 0, None, "read", ((1000, 5),))
    with Store.open(str(tmp_path / "s.db")) as store:
        target = TargetInfo("/dev/x", "block", 1 << 30)
        run_id = store.create_run("quick", target, {"hostname": "h"}, {}, RunSettings())
        store.add_round(
            run_id, 4, "{}", [], {"randread": StoredWorkload()}, series=[*found, fio_log]
        )
        stored = store.get_run(run_id).series
    host = round_hosts(stored)[4]
    assert [r.cpu_busy_pct for r in host.readings] == [(50.0, 70.0), (51.0, 70.0), (52.0, 70.0)]
    assert host.readings[0] == HostSample(
        time_s=1000.0,
        cpu_busy_pct=(50.0, 70.0),
        device_busy_pct=80.0,
        in_flight=3,
        iops=900.0,
        memory_some_pct=1.0,
        io_some_pct=2.0,
        fio_cpu_cores=0.9,
        fio_busiest_pct=88.0,
        fio_wait_threads=0.1,
        queue_length=2.5,
    )
    assert host.cpu_quota_cores == 0.5
    assert host.throttled_pct == pytest.approx(90.0)
    assert host.facts["cap_riops"] == 1000 and "x" not in host.facts
    assert host.temperatures() == DriveTemperatures(41.0, 72.0, 70.0, None, 3)
    assert list(round_logs(stored)[4]) == [("randread", "iops")]  # fio's logs only


def test_drive_reading_values_and_the_switch() -> None:
    reading = DriveHealth("smartctl", 45.0, warning_c=70.0, passed=True, thermal_transitions=0)
    values = health_values(reading)
    assert values["temp_c"] == 45.0 and values["smart_ok"] == 1.0 and values["pct_used"] is None
    assert enabled({}) and not enabled({"VOLBENCH_SAMPLER": "off"})


def test_a_round_on_two_hosts_is_not_one_hosts_samples() -> None:
    """Two hosts sampled in one round (a run on two ``--hosts``): neither host's CPU
    and disk explain the sum, so the round has no RoundHost; each host keeps its own."""
    one = sample_series(0, "randread", samples())
    two = [dataclasses.replace(s, host="lab://b") for s in sample_series(0, "randread", samples())]
    alone = [dataclasses.replace(s, round=1, host="lab://a") for s in one]
    assert sorted(round_hosts([*one, *two, *alone])) == [1]
    by_host = hosts_of_rounds([*one, *two, *alone])
    assert sorted(by_host) == [(0, ""), (0, "lab://b"), (1, "lab://a")]
    assert by_host[(0, "lab://b")].readings == round_hosts(one)[0].readings


def test_the_run_document_names_the_host_of_each_sample_series(tmp_path: Path) -> None:
    """``host_series`` in the run's JSON says which host each series was sampled on: as
    stored with the samples (None: the machine volbench ran on)."""
    here = sample_series(0, "randread", samples())
    there = [dataclasses.replace(s, host="lab://b") for s in here]
    with Store.open(str(tmp_path / "s.db")) as store:
        target = TargetInfo("/dev/x", "block", 1 << 30)
        run_id = store.create_run("quick", target, {"hostname": "h"}, {}, RunSettings())
        store.add_round(run_id, 0, "{}", [], {"randread": StoredWorkload()}, series=[*here, *there])
        document = run_document(store.get_run(run_id))
    found = document["host_series"]
    assert isinstance(found, list) and len(found) == 2 * len(here)
    assert sorted((s["host"] or "", s["kind"], s["job"]) for s in found) == sorted(
        (s.host or "", s.kind, s.job) for s in [*here, *there]
    )
    cpu = next(s for s in found if s["host"] == "lab://b" and s["kind"] == "cpu" and s["job"] == 1)
    assert cpu == {
        "round": 0,
        "test": "randread",
        "kind": "cpu",
        "unit": "% busy",
        "job": 1,
        "host": "lab://b",
        "points": [[1_000_000, 70.0], [1_001_000, 70.0], [1_002_000, 70.0]],
    }
