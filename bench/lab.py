"""The lab's guests: boot time, the IOPS ceiling of an unthrottled guest, and each
limiter's measured figure against its setting (QEMU's throttle group).

1. Boots a guest ``--boots`` times under TCG (and once under KVM with ``--kvm``: on a
   machine whose nested KVM hangs that costs the 20 s timeout); seconds from qemu's
   start to fio's first answer through the forwarded port.
2. On one unthrottled guest: 4 KiB random reads and writes at QD 32 (the ceiling).
3. The same guest's limits changed live over QMP (``volbench.lab.monitor``), each
   measured with fio's client (libaio, direct, 256 MiB of /dev/vda, ``--seconds``):
   iops-total 1,000 (random read; 50/50 random mix), iops-read/iops-write 1,000 each
   (50/50 mix: two budgets), iops-total 1,000 with a 256 KiB I/O unit (1 MiB
   sequential reads count 4 each), MB/s 50 (1 MiB sequential reads).
4. A guest booted from a catalogue product (the issue's: baseline 1,000, burst
   3,000, 30,000 credits, 256 KiB unit, one budget: a 15 s burst): 4 KiB random
   reads at QD 32 for 30 s, fio's per-second IOPS log: seconds at the burst
   ceiling, the I/Os above the baseline (credits spent), the baseline after.

Every figure is fio's own (its JSON ``iops``/``bw_bytes``, its iops log).
Usage: ``python bench/lab.py [--boots N] [--seconds S] [--kvm]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path

from volbench.lab import lifecycle
from volbench.lab.guest import Guest
from volbench.lab.monitor import set_limits
from volbench.lab.promise import promised_limits
from volbench.lab.throttle import Bucket, Limits

PRODUCT = """\
products:
  - id: lab-burst
    vendor: Our lab
    name: the issue's bursting volume
    size_unit: GiB
    capacity: {min: 1, max: 1000}
    count_unit_bytes: 262144
    rw_limits: combined
    editions:
      - from: 2024-01-01
        iops: {expr: "1000"}
        burst: {iops: 3000, bucket_credits: 30000}
"""


def fio(guest: Guest, folder: Path, seconds: int, log: bool = False, **options: str) -> dict:
    """One fio job on the guest's /dev/vda through fio's client; the job's JSON."""
    lines = ["[job]", "filename=/dev/vda", "ioengine=libaio", "direct=1", "size=256m"]
    lines += ["time_based=1", f"runtime={seconds}", *(f"{k}={v}" for k, v in options.items())]
    if log:
        lines += ["write_iops_log=rate", "log_avg_msec=1000"]
    (folder / "job.fio").write_text("\n".join(lines) + "\n")
    done = subprocess.run(
        ["fio", f"--client={guest.address},{guest.fio_port}", "job.fio", "--output-format=json"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    )
    document = json.loads(done.stdout[done.stdout.index("{") :])
    return next(j for j in document["client_stats"] if j["jobname"] == "job")


def iops(job: dict) -> float:
    return float(job["read"]["iops"] + job["write"]["iops"])


def say(line: str) -> None:
    print(f"  ({line})", flush=True)


def boots(count: int, kvm: bool) -> None:
    print("boot: seconds from qemu's start to fio's answer")
    accels = ["tcg"] * count + (["kvm"] if kvm else [])
    for n, accel in enumerate(accels):
        name = f"boot{n}"
        try:
            guest = lifecycle.up(name, Limits(), 1 << 30, None, accel, say)
            print(f"  {accel}: {guest.boot_seconds:.2f} s")
        except Exception as error:  # a KVM that hangs: its timeout
            print(f"  {accel}: no boot ({error})")
        finally:
            if Path(os.environ["VOLBENCH_LAB_DIR"], "guests", name).exists():
                lifecycle.down(name)


def limiters(folder: Path, seconds: int) -> None:
    guest = lifecycle.up("limits", Limits(), 1 << 30, None, "tcg", say)
    rand = {"rw": "randread", "bs": "4k", "iodepth": "32"}
    mixed = {"rw": "randrw", "rwmixread": "50", "bs": "4k", "iodepth": "32"}
    sequential = {"rw": "read", "bs": "1m", "iodepth": "4"}
    cases: list[tuple[str, Limits, dict[str, str], str]] = [
        ("unthrottled", Limits(), rand, "ceiling"),
        ("unthrottled", Limits(), {**rand, "rw": "randwrite"}, "ceiling"),
        ("iops-total 1,000", Limits(iops_total=Bucket(1000)), rand, "1,000"),
        ("iops-total 1,000", Limits(iops_total=Bucket(1000)), mixed, "1,000"),
        (
            "iops-read 1,000 + iops-write 1,000",
            Limits(iops_read=Bucket(1000), iops_write=Bucket(1000)),
            mixed,
            "2,000 (1,000 each)",
        ),
        (
            "iops-total 1,000, unit 256 KiB",
            Limits(iops_total=Bucket(1000), iops_size=262144),
            sequential,
            "250 (4 units each)",
        ),
        ("MB/s 50", Limits(bps_total=Bucket(50_000_000)), sequential, "50 MB/s"),
    ]
    print("| limit | workload | set | fio IOPS (read + write) | fio MB/s |")
    print("|---|---|---|---:|---:|")
    try:
        for label, limits, options, expected in cases:
            set_limits(guest.name, limits)
            job = fio(guest, folder, seconds, **options)
            bw = (job["read"]["bw_bytes"] + job["write"]["bw_bytes"]) / 1e6
            work = f"{options['rw']} {options['bs']} QD {options['iodepth']}"
            split = f" ({job['read']['iops']:,.0f} + {job['write']['iops']:,.0f})"
            shown = f"{iops(job):,.0f}" + (split if options["rw"] == "randrw" else "")
            print(f"| {label} | {work} | {expected} | {shown} | {bw:,.1f} |", flush=True)
    finally:
        lifecycle.down(guest.name)


def burst(folder: Path) -> None:
    (folder / "product.yaml").write_text(PRODUCT)
    limits = promised_limits("lab-burst", 100 << 30, {}, (str(folder / "product.yaml"),))
    print(f"burst: lab-burst at 100 GiB -> {limits.text()}")
    guest = lifecycle.up("burst", limits, 100 << 30, None, "tcg", say)
    try:
        job = fio(guest, folder, 30, log=True, rw="randread", bs="4k", iodepth="32")
    finally:
        lifecycle.down(guest.name)
    logs = sorted(folder.glob("rate_iops.1.log*"))
    per_second = [int(line.split(",")[1]) for line in logs[0].read_text().splitlines()]
    high = [v for v in per_second if v > 2000]
    after = per_second[len(high) + 1 :]
    spent = sum(v - 1000 for v in per_second[: len(high) + 1])
    print(f"  per second: {per_second}")
    print(
        f"  {len(high)} s above 2,000 IOPS (mean {sum(high) / max(len(high), 1):,.0f}),"
        f" {spent:,} I/Os above the 1,000 baseline until it fell,"
        f" then {sum(after) / max(len(after), 1):,.0f} IOPS; fio's mean {iops(job):,.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--boots", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--kvm", action="store_true")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="volbench-bench-lab-") as work:
        os.environ["VOLBENCH_LAB_DIR"] = str(Path(work) / "lab")
        boots(options.boots, options.kvm)
        limiters(Path(work), options.seconds)
        burst(Path(work))


if __name__ == "__main__":
    main()
