"""Stored tests as the validity checks read them (analysis/validity_facts.py), made up
for the checks' unit tests: fio's rows, the device's count over the same seconds, host
samples and per-second rates, each as a test sets them."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from volbench.analysis.device_window import DeviceCount
from volbench.analysis.limit_evidence import stored_test
from volbench.analysis.validity_facts import TestFacts
from volbench.model import HostSample, StoredResult, StoredWorkload, TargetInfo

MiB = 1 << 20
TARGET = TargetInfo("/dev/loop9", "block", 256 * MiB)


def row(
    direction: str,
    iops: float,
    workload: StoredWorkload,
    runtime_s: float = 10.0,
    lat_ns: float = 200_000.0,
    test: str = "t",
    round_no: int = 0,
    cpu: tuple[float, float] = (10.0, 10.0),
) -> StoredResult:
    """fio's row of one direction: ``iops`` for ``runtime_s`` of the workload's blocks."""
    bs = workload.bs_bytes or 4096
    return StoredResult(
        round=round_no,
        test=test,
        direction=direction,
        workload=workload,
        iops=iops,
        bw_bytes_per_s=iops * bs,
        io_bytes=int(iops * bs * runtime_s),
        runtime_ms=runtime_s * 1000,
        lat_kind="clat",
        lat_mean_ns=lat_ns,
        lat_min_ns=lat_ns / 2,
        lat_max_ns=lat_ns * 4,
        lat_stddev_ns=lat_ns / 10,
        lat_p50_ns=lat_ns,
        lat_p90_ns=lat_ns,
        lat_p99_ns=lat_ns * 2,
        lat_p999_ns=lat_ns * 3,
        lat_p9999_ns=lat_ns * 4,
        usr_cpu_pct=cpu[0],
        sys_cpu_pct=cpu[1],
        jobs=workload.numjobs or 1,
        lat_total_mean_ns=lat_ns,
        error=0,
    )


def workload(rw: str = "randread", **given: Any) -> StoredWorkload:
    values: dict[str, Any] = {
        "name": "t",
        "rw": rw,
        "bs_bytes": 4096,
        "iodepth": 16,
        "numjobs": 1,
        "direct": True,
        "size_bytes": 64 * MiB,
        "runtime_s": 10.0,
        "ramp_time_s": 0.0,
    }
    return StoredWorkload(**{**values, **given})


def facts_of(
    rw: str = "randread",
    iops: float = 10_000.0,
    *,
    device: DeviceCount | None = None,
    job_cpu: tuple[float, ...] = (20.0,),
    host: Sequence[HostSample] = (),
    rates: Sequence[tuple[float, float]] = (),
    runtime_s: float = 10.0,
    **given: Any,
) -> TestFacts:
    """A test of ``rw`` at ``iops`` (a mix: half reads); ``given``: TestFacts' other
    fields, or the workload's (``direct``, ``bs_bytes``, ...)."""
    fields = {f.name for f in dataclasses.fields(TestFacts)}
    own = {k: v for k, v in given.items() if k in fields}
    own.setdefault("device_note", None if device is not None else "not sampled")
    work = workload(rw, **{k: v for k, v in given.items() if k not in fields})
    if rw in ("randrw", "rw"):
        rows = (row("read", iops / 2, work, runtime_s), row("write", iops / 2, work, runtime_s))
    else:
        rows = (row("write" if "write" in rw else "read", iops, work, runtime_s),)
    return TestFacts(
        round=0,
        test="t",
        rows=rows,
        workload=work,
        target=TARGET,
        measured=stored_test(rows, job_cpu),
        memory_bytes=24 << 30,
        device=device,
        host=tuple(host),
        sampled=bool(host),
        rates=tuple(rates),
        **own,
    )


def count(
    fio_read: float = 0.0,
    fio_write: float = 0.0,
    device_read: float | None = None,
    device_write: float | None = None,
    *,
    seconds: float = 8.0,
    block: int = 4096,
    device_ios: float | None = None,
) -> DeviceCount:
    """The device's and fio's bytes over ``seconds`` (the device's I/Os: its bytes in
    ``block``-sized requests unless given; its bytes None: samples without them)."""
    if device_read is not None and device_write is None:
        device_write = 0.0
    moved = (device_read or 0.0) + (device_write or 0.0)
    return DeviceCount(
        seconds=seconds,
        fio_read_bytes=fio_read,
        fio_write_bytes=fio_write,
        fio_ios=(fio_read + fio_write) / block,
        device_read_bytes=device_read,
        device_write_bytes=device_write,
        device_ios=device_ios if device_ios is not None else moved / block,
        tests=("t",),
        how="fio's end of the round (timestamp_ms)",
    )
