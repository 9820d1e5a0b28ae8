"""``volbench run limits`` on a lab guest whose disk QEMU limits (its own guest, so the
experiment runs beside test_lab.py's): limits drawn at random, each fitted figure
against its setting; the quick plan's verdicts on the same volume named from the
fitted model; and ``check --product`` of the model against the promise the guest was
set up with, then with one limit halved.

The rates are at most :data:`test_lab.DEEP_SHARE` of what the guest does alone, here and
now (``capacity``): a TCG guest on a busy machine holds them."""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

import pytest
from cli_harness import Volbench
from test_lab import DEEP_SHARE, NAME, Capacity, capacity, guest, lab, limits

from measured import record
from volbench.lab import draws
from volbench.lab import guest as guests
from volbench.lab.draws import share

__all__ = ["capacity", "guest", "lab"]  # the fixtures, shared with test_lab.py

LIMITS_DRAWS = 3
CAP_MATCH = 0.10
"""A quick test within 10 % of a cap set on the guest ran at it (the verdicts' own rule)."""


def _run_limits(tool: Volbench, budget: str = "90s") -> int:
    """``run limits`` on the guest (1 s tests); its run's id."""
    run = tool("run", "limits", "--hosts", f"lab://{NAME}", "--budget", budget, "--runtime",
               "1s", "--ramp-time", "1s", "--runs-dir", str(tool.runs_dir))  # fmt: skip
    assert run.returncode == 0, run.stderr
    return int(tool.show()["run"])


def _set(tool: Volbench, *options: str) -> None:
    lifted = tool("lab", "limit", NAME)  # a bucket set anew starts full
    changed = tool("lab", "limit", NAME, *options)
    assert lifted.returncode == 0 and changed.returncode == 0, changed.stderr


@pytest.mark.timeout(900)
def test_limits_of_random_draws(
    lab: tuple[Volbench, Path],
    guest: guests.Guest,
    capacity: Capacity,
    request: pytest.FixtureRequest,
) -> None:
    """``run limits`` on limits drawn at random (a new seed each run, in the summary;
    ``VOLBENCH_LIMITS_SEED`` repeats one): each IOPS and MB/s cap within 5 %, the unit
    exact, one budget or two right, the burst's ceiling within 5 % and its bucket within
    10 %. A draw a busy machine held off is drawn once more with the same limits."""
    tool, _ = lab
    seed = int(os.environ.get("VOLBENCH_LIMITS_SEED") or time.time_ns() % 1_000_000)
    draw = random.Random(seed)
    top = share(DEEP_SHARE * capacity.deep, 1500)
    for shape in draw.sample(draws.SHAPES, LIMITS_DRAWS):
        drawn = draws.draw_limits(shape, draw, top, DEEP_SHARE * capacity.mbps)
        limits(request, capacity, f"seed {seed}, {drawn.text()}")
        wrong = ["not run"]
        for _ in range(2):  # once is luck, twice a fault
            _set(tool, *drawn.options)
            _run_limits(tool)
            wrong = draws.misfits(tool.show(), drawn.wanted)
            if not wrong:
                break
            record(request, f"seed {seed}, {shape}: {'; '.join(wrong)}: measured again")
        assert not wrong, (seed, shape, drawn.options, wrong)


def _caps_met(row: dict[str, object], caps: dict[str, float]) -> list[str]:
    """The caps set on the guest (IOPS or bytes/s, by direction) a quick test ran at."""
    test = str(row["test"])
    direction = "read" if "randread" in test else "write"
    iops = float(row["iops"])  # type: ignore[arg-type]
    size = 16 * 1024 if "16k" in test else 4096
    met = []
    for what, value in ((f"{direction}_iops", iops), (f"{direction}_bytes", iops * size)):
        cap = caps.get(what)
        if cap and abs(value - cap) <= CAP_MATCH * cap:
            met.append(what)
    return met


def test_quick_verdicts_name_the_fitted_limiter(
    lab: tuple[Volbench, Path],
    guest: guests.Guest,
    capacity: Capacity,
    request: pytest.FixtureRequest,
) -> None:
    """Separate read and write budgets with MB/s caps (the volume on which the quick plan
    alone judged every deep test "not determined"): after ``run limits``, every quick
    test at a cap is "rate limiter", naming the fitted cap and the limits run; a test a
    busy machine kept under its cap says the limiter did not bind."""
    tool, _ = lab
    read = share(DEEP_SHARE * capacity.deep, 1500)
    write = share(read / 2, read)
    per_io = 12_000  # bytes: 16 KiB requests run at the MB/s cap, 4 KiB at the IOPS cap
    caps = {"read_iops": read, "write_iops": write,
            "read_bytes": read * per_io, "write_bytes": write * per_io}  # fmt: skip
    mbps = {d: f"{caps[f'{d}_bytes'] / 1e6:g}" for d in ("read", "write")}
    options = ("--iops-read", str(read), "--iops-write", str(write),
               "--mbps-read", mbps["read"], "--mbps-write", mbps["write"])  # fmt: skip
    limits(request, capacity, " ".join(options))
    _set(tool, *options)
    run_id = _run_limits(tool)
    quick = tool("run", "quick", "--hosts", f"lab://{NAME}", "--runtime", "2s", "--ramp-time", "1s",
                 "--size", "64m", "--runs-dir", str(tool.runs_dir))  # fmt: skip
    assert quick.returncode in (0, 1), quick.stderr
    rows = tool.show()["limits"]
    at_cap = 0
    for row in rows:
        met = _caps_met(row, caps)
        evidence = " ".join(row["evidence"])
        if met:
            at_cap += 1
            assert row["limit"] == "rate limiter", (row["test"], met, evidence)
            assert f"limits run {run_id}" in evidence, (row["test"], evidence)
        elif row["limit"] != "rate limiter":
            assert "the limiter did not bind" in evidence, (row["test"], row["limit"], evidence)
    assert at_cap >= 2, rows  # a busy machine may hold some under their caps, not all
    explained = tool.document("explain", "latest")
    assert any(f"limits run {run_id}" in json.dumps(r) for r in explained["rows"])


PRODUCT = """\
products:
  - id: lab-split
    vendor: Our lab
    name: split budgets
    size_unit: GiB
    capacity: {{min: 0.1, max: 1000}}
    rw_limits: separate
    editions:
      - from: 2024-01-01
        read_iops: {{expr: "{read}"}}
        write_iops: {{expr: "{write}"}}
        throughput: {{expr: "{mbps}", unit: MB/s}}
"""


def test_check_product_meets_then_a_halved_limit_is_below(
    lab: tuple[Volbench, Path],
    guest: guests.Guest,
    capacity: Capacity,
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    """A guest limited as a catalogue product (``lab limit --product``): ``check
    --product`` of its limits run meets every figure; the write budget halved, the next
    limits run's check is "below" on the write IOPS cap alone (exit 1)."""
    tool, _ = lab
    read = share(DEEP_SHARE * capacity.deep, 1500)
    write = share(0.8 * read, read)
    mbps = round(DEEP_SHARE * capacity.mbps)
    catalogue = tmp_path / "split.yaml"
    catalogue.write_text(PRODUCT.format(read=read, write=write, mbps=mbps), encoding="utf-8")
    product = ("--product", "lab-split", "--catalogue", str(catalogue))
    limits(request, capacity, f"lab-split: read {read}, write {write} IOPS, {mbps} MB/s")
    check = ("check", "latest", *product, "--size", "0.25", "--format", "json")
    for _ in range(2):  # once is luck, twice a fault
        _set(tool, *product)
        _run_limits(tool)
        met = tool(*check)
        if met.returncode == 0:
            break
        record(request, f"lab-split kept: {met.stdout[-300:]}: measured again")
    assert met.returncode == 0, met.stdout
    rows = {r["metric"]: r for r in json.loads(met.stdout)["verdicts"]}
    assert {"read IOPS cap", "write IOPS cap"} <= set(rows), rows
    halved = share(write / 2, write)
    _set(tool, "--iops-read", str(read), "--iops-write", str(halved), "--mbps", f"{mbps}")
    _run_limits(tool)
    below = tool(*check)
    assert below.returncode == 1, below.stdout
    flagged = [r for r in json.loads(below.stdout)["verdicts"] if r["verdict"] == "below"]
    assert [r["metric"] for r in flagged] == ["write IOPS cap"], flagged
    assert abs(flagged[0]["measured"] - halved) <= 0.05 * halved, flagged
