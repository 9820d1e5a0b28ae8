"""The cost of checking and holding a block device before each round, on a loop device.

Before every round the engine checks each local target (``check_round``: the same
identity, not mounted, swap, held or claimed, itself or anything below it) and, for a
round that writes, holds the device open with O_EXCL from then on
(``volbench.targets.hold``) and compares the identity once more. This measures, side
by side in one run on one loop device over an image file (made here, detached at the
end): the check alone, and the check with the hold taken and the identity compared
(the engine's ``Guard.check(writes=True)``), each repeated, alternating, as the median
time per round and its ratio. Run as root.

    .venv/bin/python bench/hold_cost.py [--rounds N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from volbench.model import TargetInfo
from volbench.plans.runs.engine import Guard
from volbench.targets.identity import identify
from volbench.targets.safety import check_round


def _per_round_ms(action: object, rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()  # type: ignore[operator]
        times.append((time.perf_counter() - started) * 1e3)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="volbench-hold-") as folder:
        image = Path(folder) / "disk.img"
        with image.open("wb") as handle:
            handle.truncate(256 << 20)
        device = subprocess.run(
            ["losetup", "-f", "--show", "--direct-io=on", str(image)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        try:
            info = TargetInfo(device, "block", 256 << 20, identity=identify(device))
            alone: list[float] = []
            held: list[float] = []
            for _ in range(5):  # alternating batches: the machine's drift hits both
                alone += _per_round_ms(lambda: check_round(info, True), args.rounds // 5)
                guard = Guard((info,))
                with guard.hold:
                    held += _per_round_ms(lambda g=guard: g.check(True), args.rounds // 5)
        finally:
            subprocess.run(["losetup", "-d", device], check=False)
    a, h = statistics.median(alone), statistics.median(held)
    print(f"loop device {device}, {len(alone)} rounds each")
    print(f"check alone:            median {a:.3f} ms per round")
    print(f"check + hold + compare: median {h:.3f} ms per round (ratio {h / a:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
