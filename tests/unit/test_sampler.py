"""The host/device sampler: parsers on kernel-format text, rates between readings on a
fake /proc and /sys with an injected clock, the thread, and the block device of a file."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import pytest

from volbench.model import HostSample
from volbench.targets.kernel_counters import (
    CpuTimes,
    DiskStat,
    Pressure,
    byte_rates,
    completion_rate,
    count_hw_queues,
    cpu_busy_pct,
    device_busy_pct,
    disk_of,
    parse_disk_stat,
    parse_pressure,
    parse_proc_stat,
    read_hw_queues,
)
from volbench.targets.sampler import Sampler

STAT_BEFORE = """cpu  300 0 100 1500 100 0 0 0 0 0
cpu0 100 0 50 800 50 0 0 0 0 0
cpu1 200 0 50 700 50 0 0 0 0 0
intr 12345 0 0
ctxt 999
"""
STAT_AFTER = """cpu  420 0 180 1600 100 0 0 0 0 0
cpu0 190 0 60 840 50 0 0 0 0 0
cpu1 230 0 120 760 50 0 0 0 0 0
"""
# Documentation/admin-guide/iostats.rst's /sys/block/nvme0n1/stat example (17 fields)
DISK = "255999 814 12369153 47919 996858 81 36123056 426009 0 301809 580491 0 0 0 0 60605 106562"


def test_proc_stat_per_cpu_busy_share() -> None:
    before, after = parse_proc_stat(STAT_BEFORE), parse_proc_stat(STAT_AFTER)
    assert before == {0: CpuTimes(150, 1000), 1: CpuTimes(250, 1000)}
    # cpu0: +100 busy of +140 ticks; cpu1: +100 busy of +160 (idle + iowait are idle)
    assert cpu_busy_pct(before, after) == pytest.approx((100 / 140 * 100, 100 / 160 * 100))


def test_steal_counts_as_busy_and_offline_cpus_drop_out() -> None:
    before = parse_proc_stat("cpu0 0 0 0 100 0 0 0 0 0 0\ncpu3 0 0 0 0 0 0 0 0\n")
    after = parse_proc_stat("cpu0 0 0 0 150 0 0 0 50 0 0\n")
    assert cpu_busy_pct(before, after) == (50.0,)
    assert cpu_busy_pct(before, before) == (0.0, 0.0)


def test_disk_stat_fields_in_kernel_order() -> None:
    stat = parse_disk_stat(DISK)
    fields = DISK.split()
    assert stat == DiskStat(
        reads=255999,
        writes=996858,
        in_flight=0,
        io_ticks_ms=301809,
        time_in_queue_ms=580491,
        read_sectors=int(fields[2]),
        write_sectors=int(fields[6]),
    )
    assert parse_disk_stat(" ".join(DISK.split()[:11])) == stat  # kernels before 4.18
    assert parse_disk_stat("1 2 3") is None
    assert parse_disk_stat("a b c d e f g h i j k") is None


def test_busy_share_and_completion_rate() -> None:
    before = DiskStat(100, 50, 0, 1000, 0)
    after = DiskStat(600, 150, 4, 1800, 0)
    assert device_busy_pct(before, after, 1.0) == pytest.approx(80.0)
    assert device_busy_pct(before, after, 0.5) == 100.0  # capped
    assert completion_rate(before, after, 2.0) == pytest.approx(300.0)
    assert device_busy_pct(before, after, 0.0) == completion_rate(before, after, 0.0) == 0.0


def test_bytes_moved_in_sectors_of_512_bytes() -> None:
    # stat.rst: sectors are 512 bytes, whatever the device's logical block size
    before = DiskStat(0, 0, 0, 0, 0, read_sectors=1000, write_sectors=8)
    after = DiskStat(1, 1, 0, 0, 0, read_sectors=3048, write_sectors=8 + 2048)
    assert byte_rates(before, after, 2.0) == (512.0 * 2048 / 2, 512.0 * 2048 / 2)
    assert byte_rates(DiskStat(0, 0, 0, 0, 0), after, 1.0) is None  # not read before
    assert byte_rates(before, after, 0.0) is None


def test_hardware_queues(tmp_path: Path) -> None:
    assert count_hw_queues(["0", "1", "2", "3"]) == 4
    assert count_hw_queues([]) is None
    mq = tmp_path / "class" / "block" / "nvme0n1" / "mq"
    for queue in ("0", "1"):
        (mq / queue).mkdir(parents=True)
    assert read_hw_queues("nvme0n1", tmp_path) == 2
    assert read_hw_queues("zram0", tmp_path) is None  # bio-based: no mq directory


def test_pressure() -> None:
    memory = (
        "some avg10=1.50 avg60=0.80 avg300=0.10 total=1234\n"
        "full avg10=0.25 avg60=0 avg300=0 total=9\n"
    )
    assert parse_pressure(memory) == Pressure(1.5, 0.25)
    assert parse_pressure("some avg10=3.00 avg60=0 avg300=0 total=1\n") == Pressure(3.0, None)
    assert parse_pressure("") is None


def fake_files(root: Path, stat: str, disk: str | None) -> None:
    (root / "proc" / "pressure").mkdir(parents=True, exist_ok=True)
    (root / "proc" / "stat").write_text(stat)
    (root / "proc" / "pressure" / "io").write_text("some avg10=12.00 avg60=0 avg300=0 total=1\n")
    block = root / "sys" / "class" / "block" / "vdx"
    (block / "mq" / "0").mkdir(parents=True, exist_ok=True)
    if disk is not None:
        (block / "stat").write_text(disk)


def test_sample_between_two_readings(tmp_path: Path) -> None:
    now = [1000.0]
    fake_files(tmp_path, STAT_BEFORE, "100 0 0 0 50 0 0 0 0 1000 0")
    sampler = Sampler(
        "vdx", clock=lambda: now[0], proc_root=tmp_path / "proc", sys_root=tmp_path / "sys"
    )
    assert sampler.hw_queues == 1
    assert sampler.sample() is None  # the first reading is the baseline
    now[0] = 1002.0
    fake_files(tmp_path, STAT_AFTER, "600 0 4000 0 150 0 800 0 3 2900 0")
    sample = sampler.sample()
    assert sample is not None
    assert sample.device_busy_pct == pytest.approx(95.0)
    assert sample.iops == pytest.approx(300.0)
    assert sample.queue_length == 0.0  # time_in_queue did not grow
    assert sample.read_bytes_per_s == 4000 * 512 / 2
    assert sample.write_bytes_per_s == 800 * 512 / 2
    assert dataclasses.replace(
        sample,
        device_busy_pct=None,
        iops=None,
        queue_length=None,
        read_bytes_per_s=None,
        write_bytes_per_s=None,
    ) == HostSample(
        time_s=1002.0,
        cpu_busy_pct=cpu_busy_pct(parse_proc_stat(STAT_BEFORE), parse_proc_stat(STAT_AFTER)),
        in_flight=3,
        io_some_pct=12.0,
    )
    assert sampler.samples == (sample,)
    assert sampler.sample() is None  # the clock did not move
    (tmp_path / "sys" / "class" / "block" / "vdx" / "stat").unlink()  # the device vanished
    now[0] = 1003.0
    gone = sampler.sample()
    assert gone is not None and (gone.device_busy_pct, gone.in_flight, gone.iops) == (None,) * 3
    assert gone.fio_cpu_cores is None  # no parent given: fio's processes are not read


def test_host_only_sampler_on_this_machine_runs_on_its_thread() -> None:
    sampler = Sampler(interval_s=0.05)
    sampler.start()
    with pytest.raises(RuntimeError):
        sampler.start()
    time.sleep(0.4)
    sampler.interval_s = 30.0  # the next tick is far off: stop() must not wait for it
    time.sleep(0.06)
    began = time.monotonic()
    samples = sampler.stop()
    assert time.monotonic() - began < 1.0
    assert 2 <= len(samples) <= 9  # about one per 50 ms; a busy host skips ticks
    assert all(len(s.cpu_busy_pct) == os.cpu_count() for s in samples)
    assert all(0 <= v <= 100 for s in samples for v in s.cpu_busy_pct)
    assert [s.time_s for s in samples] == sorted(s.time_s for s in samples)
    reading: HostSample = samples[0]  # what the limit verdict reads
    assert reading.device_busy_pct is None


def test_the_device_of_this_checkout_is_sampled() -> None:
    disk = disk_of(__file__)
    if disk is None:
        pytest.skip("the checkout is on a filesystem without a block device")
    with Sampler(disk, interval_s=0.02) as sampler:
        time.sleep(0.1)
    assert sampler.samples and all(s.device_busy_pct is not None for s in sampler.samples)


def test_disk_of_files_devices_and_partitions(tmp_path: Path) -> None:
    st = os.stat(__file__)
    number = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    partition = tmp_path / "devices" / "pci0000:00" / "block" / "sdq" / "sdq2"
    partition.mkdir(parents=True)
    (partition / "partition").write_text("2\n")
    (tmp_path / "dev" / "block").mkdir(parents=True)
    (tmp_path / "dev" / "block" / number).symlink_to(partition)
    assert disk_of(__file__, tmp_path) == "sdq"  # the partition's parent disk
    (partition / "partition").unlink()
    assert disk_of(__file__, tmp_path) == "sdq2"
    assert disk_of(str(tmp_path / "missing"), tmp_path) is None
    assert disk_of("/proc/stat") is None  # procfs: major 0
    if os.path.exists("/dev/loop0"):
        assert disk_of("/dev/loop0") == "loop0"  # a device node: its own number
