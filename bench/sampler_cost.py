"""The host/device sampler's own cost: CPU time of 600 samples (ten minutes' worth at
one a second), taken back to back on this machine.

Each sample reads /proc/stat, /sys/class/block/DEV/stat and /proc/pressure/{memory,io}
and computes per-CPU busy shares and device rates (targets/sampler.py). The CPU time
of the process (``time.process_time``: user + system, all threads) spent in
``Sampler.sample`` is divided by the number of samples; at one sample a second, the
cost per sample in seconds is the share of one CPU the sampler takes. A second pass
runs the real thread at ``--interval`` for ``--seconds`` to show the wall-clock view
(thread wake-ups included).

Usage: ``python bench/sampler_cost.py [--device vda] [--samples 600] [--interval 0.05]``
(the device defaults to the one holding this checkout).
"""

from __future__ import annotations

import argparse
import os
import time

from volbench.targets.sampler import Sampler, disk_of


def back_to_back(device: str | None, samples: int) -> float:
    """CPU seconds per sample, ``samples`` readings in a row."""
    sampler = Sampler(device)
    sampler.sample()
    began = time.process_time()
    for _ in range(samples):
        sampler.sample()
    return (time.process_time() - began) / samples


def threaded(device: str | None, interval_s: float, seconds: float) -> tuple[int, float]:
    """(samples taken, CPU seconds per sample) of the sampling thread over ``seconds``."""
    began = time.process_time()
    sampler = Sampler(device, interval_s=interval_s)
    sampler.start()
    time.sleep(seconds)
    taken = len(sampler.stop())
    return taken, (time.process_time() - began) / max(1, taken)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default=disk_of(os.getcwd()))
    parser.add_argument("--samples", type=int, default=600)
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    cpus = os.cpu_count()
    print(f"device {args.device}, {cpus} CPUs, {args.samples} samples")
    for device in (args.device, None):
        per = back_to_back(device, args.samples)
        print(
            f"  {'device + host' if device else 'host only':13}: {per * 1e6:,.0f} µs CPU a"
            f" sample, {per * args.samples * 1e3:,.1f} ms for {args.samples};"
            f" at 1 sample/s {per:.4%} of one CPU"
        )
    taken, per = threaded(args.device, args.interval, args.seconds)
    print(
        f"  thread at {args.interval} s for {args.seconds} s: {taken} samples,"
        f" {per * 1e6:,.0f} µs CPU each (wake-ups included)"
    )


if __name__ == "__main__":
    main()
