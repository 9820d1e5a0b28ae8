"""What tracing costs the traced workload: the same fio job run alternately without
and with a capture of its device, side by side in one run.

``volbench capture`` enables the block_rq_issue/block_rq_complete tracepoints in a
tracefs instance of its own and copies ``trace_pipe`` into a scratch file
(:mod:`volbench.trace.tracefs`): the kernel formats two text lines per request and
a thread of volbench reads them. The traced pass here does exactly that, in this
process (:class:`~volbench.trace.tracefs.TraceInstance`), while fio runs; the
untraced pass runs fio alone. Both figures are fio's own IOPS. Per pair: the ratio
traced/untraced, whether every request was traced (requests seen = fio's
``total_ios``; events the kernel dropped) and how long reading the text back took.

Target: a loop device over an image file in /dev/shm (memory, so the device is
not the limit and the per-request cost of tracing shows), made here and detached
at the end. Jobs: the known mix of the integration test (70% random 4 KiB reads,
30% sequential 64 KiB writes, QD 8) and 4 KiB random reads at QD 16.

Usage (root): ``python bench/trace_overhead.py [--pairs 5] [--runtime 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from volbench.trace.tracefs import TraceInstance, device_number
from volbench.trace.tracepoint_text import parse_tracepoints

JOBS = {
    "mix 70/30 QD8": [
        "--rw=randrw",
        "--rwmixread=70",
        "--bssplit=4k/100,64k/100",
        "--percentage_random=100,0",
        "--iodepth=8",
    ],
    "4k randread QD16": ["--rw=randread", "--bs=4k", "--iodepth=16"],
}


def fio(device: str, options: list[str], runtime: float) -> tuple[float, int]:
    """(IOPS, requests) of one fio run."""
    done = subprocess.run(
        [
            "fio",
            "--name=bench",
            f"--filename={device}",
            "--direct=1",
            "--ioengine=libaio",
            f"--runtime={runtime}",
            "--time_based",
            "--output-format=json",
            *options,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    job = json.loads(done.stdout)["jobs"][0]
    return (
        job["read"]["iops"] + job["write"]["iops"],
        job["read"]["total_ios"] + job["write"]["total_ios"],
    )


def traced(device: str, options: list[str], runtime: float, scratch: Path) -> tuple[float, ...]:
    """(IOPS, requests fio did, requests traced, events lost, seconds to read back)."""
    text = scratch / "trace.txt"
    with TraceInstance(device, text) as instance:
        iops, requests = fio(device, options, runtime)
        instance.stop()
    began = time.process_time()
    with text.open() as lines:
        trace = parse_tracepoints(lines, device_number(device))
    parsed = time.process_time() - began
    text.unlink()
    return iops, requests, len(trace), trace.lost, parsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--runtime", type=float, default=3.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="volbench-trace-", dir="/dev/shm") as tmp:
        image = Path(tmp) / "target.img"
        with image.open("wb") as handle:
            handle.truncate(512 << 20)
        device = subprocess.run(
            ["losetup", "-f", "--show", "--direct-io=on", str(image)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        try:
            subprocess.run(
                [
                    "dd",
                    "if=/dev/urandom",
                    f"of={device}",
                    "bs=1M",
                    "count=512",
                    "oflag=direct",
                    "status=none",
                ],
                check=True,
            )
            scratch = Path(tempfile.mkdtemp(prefix="volbench-trace-scratch-"))
            print(f"{device} over /dev/shm, {os.cpu_count()} CPUs, {args.runtime:g} s per run")
            for name, options in JOBS.items():
                ratios, complete, lost, parse_s = [], 0, 0, []
                plain_all, traced_all = [], []
                for _ in range(args.pairs):
                    plain, _ = fio(device, options, args.runtime)
                    iops, requests, seen, dropped, parsed = traced(
                        device, options, args.runtime, scratch
                    )
                    plain_all.append(plain)
                    traced_all.append(iops)
                    ratios.append(iops / plain)
                    complete += seen == requests
                    lost += dropped
                    parse_s.append(parsed / max(1, seen) * 1e6)
                print(
                    f"  {name}: untraced {statistics.median(plain_all):,.0f} IOPS, traced"
                    f" {statistics.median(traced_all):,.0f}; ratio median"
                    f" {statistics.median(ratios):.3f} ({min(ratios):.3f}..{max(ratios):.3f});"
                    f" every request traced in {complete}/{args.pairs} pairs, {lost} events"
                    f" lost; reading back {statistics.median(parse_s):.1f} µs a request"
                )
            scratch.rmdir()
        finally:
            subprocess.run(["losetup", "-d", device], check=False)


if __name__ == "__main__":
    main()
