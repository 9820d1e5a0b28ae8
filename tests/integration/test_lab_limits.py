"""``run limits`` on a lab guest (a TCG guest of this module's own, :mod:`lab_guest`): a
guest limited as a catalogue product, its check, the quick plan's verdicts from the
fitted model and a limit halved; a cloud's recipe on the guest against its product (the
random draws: test_lab_draws.py). Apart from test_lab.py and test_lab_draws.py so that
pytest-xdist runs the three modules' guests side by side."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_harness import Volbench
from lab_guest import (
    DEEP_SHARE,
    LIMITS_SHARE,
    NAME,
    PRODUCT,
    Capacity,
    limits,
    run_limits,
    set_limits,
)

from measured import record
from products import split_product
from volbench.lab import guest as guests
from volbench.lab.draws import share

CAP_MATCH = 0.10
"""A quick test within 10 % of a fitted cap ran at it (the verdicts' own rule)."""


def _caps_met(row: dict[str, Any], caps: dict[str, float]) -> list[str]:
    """The caps (IOPS or bytes/s, by direction) a quick test ran at."""
    test = str(row["test"])
    direction = "read" if "randread" in test else "write"
    iops = float(row["iops"])
    size = 16 * 1024 if "16k" in test else 4096
    met = []
    for what, value in ((f"{direction}_iops", iops), (f"{direction}_bytes", iops * size)):
        cap = caps.get(what)
        if cap and abs(value - cap) <= CAP_MATCH * cap:
            met.append(what)
    return met


@pytest.mark.timeout(600)
def test_a_product_checked_then_its_verdicts_then_a_halved_limit(
    lab: tuple[Volbench, Path],
    guest: guests.Guest,
    capacity: Capacity,
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    """A guest limited as a catalogue product with separate read and write budgets and a
    MB/s cap (``lab limit --product``, the volume on which the quick plan alone judged
    every deep test "not determined"):

    1. ``check --product`` of its limits run meets every fitted figure;
    2. after it, every quick test at a cap is "rate limiter", naming the fitted cap and
       the limits run; a test a busy machine kept under its cap says the limiter did
       not bind;
    3. the write budget halved, the next limits run's check is "below" on the write
       IOPS cap alone (exit 1)."""
    tool, _ = lab
    read = share(LIMITS_SHARE * capacity.deep, 1500)
    write = share(0.8 * read, read)
    mbps = round(read * 12_000 / 1e6, 1)  # 16 KiB reads at the MB/s cap, 4 KiB at the IOPS cap
    catalogue = tmp_path / "split.yaml"
    catalogue.write_text(split_product(read, write, mbps, 0.1, "Our lab"), encoding="utf-8")
    product = ("--product", "lab-split", "--catalogue", str(catalogue))
    limits(request, capacity, f"lab-split: read {read}, write {write} IOPS, {mbps} MB/s shared")
    check = ("check", "latest", *product, "--size", "0.25", "--format", "json")
    for _ in range(2):  # once is luck, twice a fault
        set_limits(tool, *product)
        run_id = run_limits(tool)
        met = tool(*check)
        if met.returncode == 0:
            break
        record(request, f"lab-split: {met.stdout[-300:]}: measured again")
    assert met.returncode == 0, met.stdout
    rows = {r["metric"]: r for r in json.loads(met.stdout)["verdicts"]}
    assert {"read IOPS cap", "write IOPS cap", "read MB/s cap"} <= set(rows), rows

    quick = tool(
        "run",
        "quick",
        "--hosts",
        f"lab://{NAME}",
        "--runtime",
        "2s",
        "--ramp-time",
        "1s",
        "--size",
        "64m",
        "--runs-dir",
        str(tool.runs_dir),
    )
    assert quick.returncode in (0, 1), quick.stderr
    fitted = {metric: float(row["measured"]) for metric, row in rows.items()}
    # the caps the verdicts use are the fitted ones: a test at 91 % of a cap as set may
    # be at 88 % of its fit, under it
    caps = {
        "read_iops": fitted["read IOPS cap"],
        "write_iops": fitted["write IOPS cap"],
        "read_bytes": fitted["read MB/s cap"] * 1e6,
        "write_bytes": fitted.get("write MB/s cap", fitted["read MB/s cap"]) * 1e6,
    }
    at_cap = 0
    for row in tool.show()["limits"]:
        evidence = " ".join(row["evidence"])
        if _caps_met(row, caps):
            at_cap += 1
            assert row["limit"] == "rate limiter", (row["test"], evidence)
            fits = {metric: (r["measured"], r.get("reason")) for metric, r in rows.items()}
            assert f"limits run {run_id}" in evidence, (row["test"], evidence, fits)
        elif row["limit"] != "rate limiter":
            assert "the limiter did not bind" in evidence, (row["test"], row["limit"], evidence)
    assert at_cap >= 2  # a busy machine may hold some under their caps, not all

    halved = share(write / 2, write)
    set_limits(tool, "--iops-read", str(read), "--iops-write", str(halved), "--mbps", f"{mbps}")
    run_limits(tool)
    below = tool(*check)
    assert below.returncode == 1, below.stdout
    flagged = [r for r in json.loads(below.stdout)["verdicts"] if r["verdict"] == "below"]
    assert [r["metric"] for r in flagged] == ["write IOPS cap"], flagged
    assert abs(flagged[0]["measured"] - halved) <= 0.05 * halved, flagged


@pytest.mark.timeout(300)
def test_a_cloud_recipe_on_a_guest_checked_against_its_product(
    lab: tuple[Volbench, Path],
    guest: guests.Guest,
    capacity: Capacity,
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    """Google Cloud's raw-disk recipe (its 4 KiB QD 256 write and read IOPS steps,
    scaled) on a guest limited as a flat catalogue product, ``--hosts lab://NAME`` and
    ``--product``: the run meets the promise (exit 0) and prints the page's figure beside
    the one measured, the guest's share alone (not its place's row besides); the limit
    halved, the same run is "below" (exit 1)."""
    tool, _ = lab
    iops = share(DEEP_SHARE * capacity.deep, 1500)
    catalogue = tmp_path / "flat.yaml"
    catalogue.write_text(PRODUCT.format(iops=iops), encoding="utf-8")
    limits(request, capacity, f"recipe gcp-pd-raw on lab-flat at {iops} IOPS")
    place = f"lab://{NAME}"
    recipe = (
        "run",
        "recipe",
        "gcp-pd-raw",
        "--hosts",
        place,
        "--scale",
        "0.05",
        "--set",
        "filesize=64M",
        "--step",
        "write-iops",
        "--step",
        "read-iops",
        "--product",
        "lab-flat",
        "--product-size",
        "10",
        "--catalogue",
        str(catalogue),
        "--destroy-data",
        f"{place}:/dev/vda",
        "--runs-dir",
        str(tool.runs_dir),
    )
    set_limits(tool, "--iops-total", str(iops))
    ran = tool(*recipe)
    if ran.returncode != 0:  # once is luck, twice a fault
        record(request, f"recipe on lab-flat: {ran.stdout[-300:]}: measured again")
        set_limits(tool, "--iops-total", str(iops))
        ran = tool(*recipe)
    assert ran.returncode == 0, (ran.stdout[-2000:], ran.stderr[-2000:])
    run = tool.show()
    assert run["labels"]["recipe"] == "gcp-pd-raw" and run["labels"]["product"] == "lab-flat"
    (read,) = [r for r in run["results"] if r["test"] == "read_iops_test"]
    line = f"read-iops: the page expects 100,000 IOPS (read IOPS); measured {read['iops']:,.0f}"
    assert line in ran.stdout, ran.stdout[-1500:]
    assert abs(read["iops"] - iops) <= CAP_MATCH * iops, read

    set_limits(tool, "--iops-total", str(share(iops / 2, iops)))
    below = tool(*recipe)
    assert below.returncode == 1, (below.stdout[-2000:], below.stderr[-2000:])
    assert "below" in below.stdout, below.stdout[-1500:]
