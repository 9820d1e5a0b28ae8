"""The verdicts on a real hypervisor limiter (issue 24): one lab guest (TCG), its
QEMU throttle group changed live between the tests. A burst drained from a full
bucket is found in the test's per-second series with its ceiling, credits and the
baseline after; QD 1 and QD 16 at one rate are the limiter's pacing; a 50/50 mix is
two budgets (about 600 IOPS) under per-direction caps of 300 and one (about 300)
under a total cap, against a 300 IOPS product (rates a TCG guest holds on a busy
machine: the lab's 1,000-IOPS figures are in BENCHMARKS.md). QEMU's pacing is exact
within a percent or two; the figures asserted are fio's own."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_harness import Volbench
from test_lab import lab  # noqa: F401 (the module's lab folder and its cleanup)

NAME = "vtest"
PRODUCT = """\
products:
  - id: lab-flat
    vendor: Our lab
    name: a 300 IOPS volume
    size_unit: GiB
    capacity: {min: 1, max: 1000}
    editions:
      - from: 2024-01-01
        iops: {expr: "300"}
"""


@pytest.fixture(scope="module")
def tool(lab: tuple[Volbench, Path]) -> Iterator[Volbench]:  # noqa: F811
    volbench, _ = lab
    up = volbench(
        "lab", "up", NAME, "--iops-total", "300", "--burst-iops", "1000",
        "--burst-credits", "4000", "--size", "256m", "--accel", "tcg",
    )  # fmt: skip
    assert up.returncode == 0, up.stderr
    assert "burst 1,000 for 6 s, 4,000 credits" in up.stdout  # 5.7 s
    yield volbench


def _run(tool: Volbench, *args: str) -> dict[str, Any]:
    done = tool("run", "sweep", "--hosts", f"lab://{NAME}", "--ramp-time", "0",
                "--runs-dir", str(tool.runs_dir), *args)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return tool.document("explain", "latest")


def test_a_burst_from_a_full_bucket(tool: Volbench) -> None:
    """1,000 IOPS while 4,000 credits last (5.7 s at 700 above the baseline), then 300:
    the test's verdict is the rate limiter, with the burst's figures."""
    explained = _run(tool, "--rw", "randwrite", "--iodepth", "16", "--runtime", "12s")
    (test,) = explained["tests"]
    assert test["limit"] == "rate limiter", test
    assert test["why"].startswith("burst: "), test
    (burst,) = explained["bursts"]
    assert 950 <= burst["ceiling"] <= 1030, burst
    assert 290 <= burst["baseline"] <= 312, burst
    assert 4000 * 0.9 <= burst["credits"] <= 4000 * 1.1, burst


@pytest.mark.parametrize(
    ("limits", "found", "depths", "total"),
    [
        (("--iops-read", "300", "--iops-write", "300"), "separate budgets", "16", (550, 650)),
        (("--iops-total", "300"), "one combined budget", "1,16", (280, 325)),
    ],
)
def test_a_mix_under_one_or_two_budgets(
    tool: Volbench,
    tmp_path: Path,
    limits: tuple[str, ...],
    found: str,
    depths: str,
    total: tuple[int, int],
) -> None:
    """A 50/50 mix at about 600 IOPS under two budgets, 300 under one, as ``check``
    finds against the 300 IOPS product; under one budget, QD 1 and QD 16 at that one
    rate are the limiter's pacing (the rate limiter's verdict, not the queue's)."""
    changed = tool("lab", "limit", NAME, *limits)
    assert changed.returncode == 0, changed.stderr
    explained = _run(tool, "--rw", "randrw", "--rwmixread", "50", "--iodepth", depths,
                     "--runtime", "3s")  # fmt: skip
    for test in explained["tests"]:
        assert total[0] <= test["iops"] <= total[1], test  # reads + writes
        # paced at one rate from QD 1 on (one budget); two budgets: the product's figure
        assert test["limit"] == "rate limiter" or "," not in depths, test
    assert len(explained["tests"]) == len(depths.split(","))
    catalogue = tmp_path / "flat.yaml"
    catalogue.write_text(PRODUCT, encoding="utf-8")
    checked = tool("check", "latest", "--product", "lab-flat", "--size", "10",
                   "--catalogue", str(catalogue), "--format", "json")  # fmt: skip
    assert checked.returncode in (0, 1), checked.stderr
    assert any(found in line for line in json.loads(checked.stdout)["findings"]), checked.stdout
