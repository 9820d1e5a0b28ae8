"""``volbench run limits`` against limits drawn at random on a lab guest: each setting
beside the fitted figure, and the time each experiment took (BENCHMARKS.md).

1. Boots a TCG guest (``volbench lab up``, 256 MiB disk) and runs ``run limits`` on it
   unlimited: the device's own ceilings (the model should find no cap), from which the
   draws' rates are chosen (at most 40 % of the guest's own, as the CI test does).
2. ``--draws`` draws (every shape of :data:`volbench.lab.draws.SHAPES` in turn, figures
   at random from ``--seed``): ``lab limit`` sets them (a bucket set anew starts full),
   ``run limits --budget B --runtime R`` fits them, and each fitted figure is printed
   beside its setting, right (within 5 %; a bucket 10 %; the unit exact) or not.

3. With ``--volumes``: the three volumes a quick plan alone misjudged (separate read and
   write budgets with MB/s caps; an I/O unit of 4 KiB; a burst on a shared budget with a
   MB/s cap), scaled to the guest, and a loop device with no limiter: ``run limits``,
   then ``run quick --runtime 10s`` on the same volume, each quick test's verdict and
   its first sentence of evidence (the model's cap it names).

Every figure is fio's own (the limits card's JSON, ``volbench show --format json``).
Usage: ``python bench/limits.py [--draws 20] [--seed N] [--budget 90s] [--runtime 1s]
[--volumes]``
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
from volbench.plans.limits import parse_name

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
    run = volbench(
        env,
        "run",
        "limits",
        "--hosts",
        f"lab://{NAME}",
        "--budget",
        budget,
        "--runtime",
        runtime,
        "--ramp-time",
        "1s",
    )
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
        test = parse_name(row["test"])
        if test is None or test.direction not in ("read", "write"):
            continue
        direction, kib = test.direction, test.bs_bytes // 1024
        iops = float(row["iops"])
        key = (direction, "iops" if kib == 4 else "mbps")
        value = iops if kib == 4 else iops * kib * 1024 / 1e6
        best[key] = max(best.get(key, 0.0), value)
    iops = min(best[("read", "iops")], best[("write", "iops")])
    mbps = min(best.get(("read", "mbps"), 0.0), best.get(("write", "mbps"), 0.0))
    return iops, mbps


def quick_verdicts(env: dict[str, str], *where: str) -> list[tuple[str, float, str, str]]:
    """``run quick --runtime 10s`` on ``where``: each test's (name, IOPS, verdict, first
    sentence of evidence)."""
    run = volbench(env, "run", "quick", *where, "--runtime", "10s")
    if run.returncode not in (0, 1):
        raise SystemExit(f"run quick failed: {run.stderr.strip()[-400:]}")
    rows = json.loads(volbench(env, "show", "latest", "--format", "json").stdout)["limits"]
    return [(r["test"], float(r["iops"]), r["limit"], r["evidence"][0]) for r in rows]


def volumes(env: dict[str, str], top: int, budget: str, runtime: str, loop: str) -> None:
    """The three lab volumes (rates from ``top``) and the loop device ``loop``: the
    fitted model's notes, then each quick test's verdict."""
    cases = {
        "separate budgets, MB/s caps": (
            "--iops-read",
            str(top),
            "--iops-write",
            str(top // 2),
            "--mbps-read",
            f"{top * 8000 / 1e6:g}",
            "--mbps-write",
            f"{top // 2 * 8000 / 1e6:g}",
        ),
        "4 KiB I/O unit": ("--iops-total", str(top), "--io-unit", "4k"),
        "burst on a shared budget": (
            "--iops-total",
            str(top // 5),
            "--burst-iops",
            str(top),
            "--burst-credits",
            str(10 * top),
            "--mbps",
            f"{top // 5 * 50_000 / 1e6:g}",
        ),
    }
    print("| volume | quick test | IOPS | verdict | evidence (first sentence) |")
    print("|---|---|---|---|---|")
    places: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
        (name, options, ("--hosts", f"lab://{NAME}")) for name, options in cases.items()
    ]
    places.append((f"loop device {loop}, no limiter", (), ("--target", loop, "--size", "64m")))
    for name, options, where in places:
        if options:
            volbench(env, "lab", "limit", NAME)
            volbench(env, "lab", "limit", NAME, *options)
        run = volbench(
            env,
            "run",
            "limits",
            *where,
            "--budget",
            budget,
            "--runtime",
            runtime,
            "--ramp-time",
            "1s",
        )
        if run.returncode != 0:
            raise SystemExit(f"run limits failed: {run.stderr.strip()[-400:]}")
        card = json.loads(volbench(env, "show", "latest", "--format", "json").stdout)
        setting = " ".join(options) or "none"
        print(f"| {name} ({setting}) | limits run {card['run']} | | | |")
        for test, iops, limit, why in quick_verdicts(env, *where):
            print(f"| | {test} | {iops:,.0f} | {limit} | {why.replace('|', '/')} |", flush=True)


def shown(value: float | None, key: str) -> str:
    if value is None:
        return "none"
    if key.endswith(("_bytes", "bytes_ceiling")):
        return f"{value / 1e6:,.1f} MB/s"
    if key.endswith("bytes_credits"):
        return f"{value / 1e6:,.1f} MB"
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
    parser.add_argument("--volumes", action="store_true", help="Also the three volumes.")
    parser.add_argument(
        "--shapes",
        default=",".join(draws.SHAPES),
        help="The shapes drawn in turn, comma-separated (default: all of volbench.lab.draws).",
    )
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else time.time_ns() % 1_000_000
    shapes = [s.strip() for s in args.shapes.split(",")]
    if unknown := set(shapes) - set(draws.SHAPES):
        parser.error(f"unknown shapes {sorted(unknown)}: choose from {', '.join(draws.SHAPES)}")
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
            shape = shapes[index % len(shapes)]
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
            print(
                f"| {index + 1} | {shape} | {setting} | {fitted} | {verdict} | {took:.0f} s |",
                flush=True,
            )
        print(f"\n{right} of {args.draws} draws right in every figure\n")
        if args.volumes:
            shm = Path("/dev/shm")  # in RAM: nothing written to this machine's disk
            image = Path(tempfile.mkstemp(".img", "volbench-bench-loop-", shm)[1])
            with image.open("wb") as file:
                file.truncate(128 << 20)
            attach = ["losetup", "-f", "--show", "--direct-io=on", str(image)]
            loop = subprocess.run(attach, capture_output=True, text=True, check=True).stdout.strip()
            try:
                volumes(env, top, args.budget, args.runtime, loop)
            finally:
                subprocess.run(["losetup", "-d", loop], check=False)
                image.unlink()
    finally:
        volbench(env, "lab", "down", "--all")


if __name__ == "__main__":
    main()
