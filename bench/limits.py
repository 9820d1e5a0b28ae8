"""``volbench run limits`` against limits drawn at random on a lab guest: each setting
beside the fitted figure, and the time each experiment took (BENCHMARKS.md).

1. Boots a TCG guest (``volbench lab up``, 256 MiB disk) and runs ``run limits`` on it
   unlimited: the device's own ceilings (the model should find no cap), from which the
   draws' rates are chosen (at most 40 % of the guest's own, as the CI test does).
2. ``--draws`` draws (every shape of :data:`volbench.lab.draws.SHAPES` in turn, figures
   at random from ``--seed``): ``lab limit`` sets them (a bucket set anew starts full),
   ``run limits --budget B --runtime R`` fits them, and each fitted figure is printed
   beside its setting, right (within 5 %; a bucket 10 %; the unit exact) or not.

Every figure is fio's own (the limits card's JSON, ``volbench show --format json``).
Usage: ``python bench/limits.py [--draws 20] [--seed N] [--budget 90s] [--runtime 1s]``
(everything in a new temporary folder; ``--cache DIR``: the lab's kernels/ and images/
there are reused, e.g. ``.pytest_cache/d/volbench-lab``).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from volbench.lab import draws

NAME = "bench-limits"
DEEP_SHARE = 0.4
"""Rates at most this share of the guest's own (the CI test's): a busy TCG guest holds them."""


def volbench(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "volbench", *args], env=env, capture_output=True, text=True
    )


def limits_run(env: dict[str, str], budget: str, runtime: str) -> tuple[dict[str, Any], float]:
    """``run limits`` on the guest: the card's JSON and the seconds it took."""
    start = time.monotonic()
    run = volbench(env, "run", "limits", "--hosts", f"lab://{NAME}", "--budget", budget,
                   "--runtime", runtime, "--ramp-time", "1s")  # fmt: skip
    took = time.monotonic() - start
    if run.returncode != 0:
        raise SystemExit(f"run limits failed: {run.stderr.strip()[-400:]}")
    shown = volbench(env, "show", "latest", "--format", "json")
    return json.loads(shown.stdout), took


def own_rates(document: dict[str, Any]) -> tuple[float, float]:
    """The unlimited guest's 4 KiB IOPS (the slower direction's highest) and MB/s (the
    slower direction's highest over the size ladder), from the tests' own figures."""
    best: dict[tuple[str, str], float] = {}
    for row in document["limits"]:
        direction, size, _ = row["test"].split("-")
        if direction not in ("read", "write"):
            continue
        kib = int(size.rstrip("k"))
        iops = float(row["iops"])
        key = (direction, "iops" if kib == 4 else "mbps")
        value = iops if kib == 4 else iops * kib * 1024 / 1e6
        best[key] = max(best.get(key, 0.0), value)
    iops = min(best[("read", "iops")], best[("write", "iops")])
    mbps = min(best.get(("read", "mbps"), 0.0), best.get(("write", "mbps"), 0.0))
    return iops, mbps


def shown(value: float | None, key: str) -> str:
    if value is None:
        return "none"
    if key.endswith("_bytes"):
        return f"{value / 1e6:,.1f} MB/s"
    if key == "unit":
        return f"{value / 1024:g} KiB"
    if key == "shared":
        return "one" if value else "two"
    return f"{value:,.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--budget", default="90s")
    parser.add_argument("--runtime", default="1s")
    parser.add_argument(
        "--cache", default=None, help="A folder with the lab's kernels/ and images/ to reuse."
    )
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else time.time_ns() % 1_000_000
    home = Path(tempfile.mkdtemp(prefix="volbench-bench-limits-"))
    home.chmod(0o755)  # the lab's folder must sit where every user may enter
    lab = home / "lab"
    lab.mkdir(mode=0o755)
    for part in ("kernels", "images") if args.cache else ():
        (lab / part).symlink_to(Path(args.cache).resolve() / part)
    env = {**os.environ, "XDG_DATA_HOME": str(home / "data"), "VOLBENCH_LAB_DIR": str(lab)}
    env.pop("VOLBENCH_DB", None)
    up = volbench(env, "lab", "up", NAME, "--size", "256m", "--accel", "tcg")
    if up.returncode != 0:
        raise SystemExit(f"lab up failed: {up.stderr.strip()[-400:]}")
    try:
        document, took = limits_run(env, args.budget, args.runtime)
        iops, mbps = own_rates(document)
        model = document["model"]
        ceilings = [model[d]["ceiling"] and model[d]["ceiling"]["value"] for d in ("read", "write")]
        print(
            f"seed {seed}; the guest unlimited: {iops:,.0f} IOPS at 4 KiB, {mbps:,.0f} MB/s;"
            f" fitted ceilings (no cap) read {ceilings[0]}, write {ceilings[1]}; {took:.0f} s"
        )
        rng = random.Random(seed)
        top = draws.share(DEEP_SHARE * iops, 1500)
        print("| # | shape | setting | fitted | right | took |")
        print("|---|---|---|---|---|---|")
        right = 0
        for index in range(args.draws):
            shape = draws.SHAPES[index % len(draws.SHAPES)]
            drawn = draws.draw_limits(shape, rng, top, DEEP_SHARE * mbps)
            volbench(env, "lab", "limit", NAME)
            changed = volbench(env, "lab", "limit", NAME, *drawn.options)
            if changed.returncode != 0:
                raise SystemExit(f"lab limit failed: {changed.stderr.strip()[-400:]}")
            document, took = limits_run(env, args.budget, args.runtime)
            found = draws.fitted_figures(document, drawn.wanted)
            wrong = draws.misfits(document, drawn.wanted)
            right += not wrong
            setting = ", ".join(f"{k} {shown(v, k)}" for k, v in drawn.wanted.items())
            fitted = ", ".join(f"{k} {shown(found[k], k)}" for k in drawn.wanted)
            verdict = "yes" if not wrong else "no: " + "; ".join(wrong)
            print(f"| {index + 1} | {shape} | {setting} | {fitted} | {verdict} | {took:.0f} s |",
                  flush=True)  # fmt: skip
        print(f"\n{right} of {args.draws} draws right in every figure")
    finally:
        volbench(env, "lab", "down", "--all")


if __name__ == "__main__":
    main()
