"""A quick profile is a table row: a new one is rows in :data:`volbench.plans.quick.
PROFILES` and nothing else. A toy profile added here runs as the plan, its dry run
and the diskmark-style lines of its own labels show."""

from __future__ import annotations

from pathlib import Path

import pytest

from volbench.model import RW, TargetInfo
from volbench.plans import quick
from volbench.plans.dry_run import plan_preview
from volbench.plans.quick import QuickOptions, Row

TOY = (
    Row("seq128k-read", RW.READ, 128 << 10, 4, "SEQ128K Q4T1"),
    Row("rnd8k-deep-write", RW.RANDWRITE, 8192, None),
)


def test_a_toy_profile_is_its_rows(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(quick.PROFILES, "toy", TOY)
    options = QuickOptions(profile="toy", iodepth=16, numjobs=2, runtime_s=5, ramp_time_s=0)
    plan = quick.plan(options)
    (tests,) = plan.rounds
    shape = [(w.name, w.rw, w.bs_bytes, w.iodepth, w.numjobs) for w in tests]
    assert shape == [
        ("seq128k-read", RW.READ, 131072, 4, 1),  # its own queue, one job
        ("rnd8k-deep-write", RW.RANDWRITE, 8192, 16, 2),  # the deep queue the options give
    ]
    target = TargetInfo(str(tmp_path / "t.img"), "file", 64 << 20)
    dry = plan_preview(plan, target, "psync", tmp_path / "runs")
    assert (dry.processes, dry.tests) == (2, 2)
    texts = [job.text for job in dry.job_files]
    assert "[seq128k-read]" in texts[0] and "iodepth=4" in texts[0]
    assert "[rnd8k-deep-write]" in texts[1] and "numjobs=2" in texts[1]


def test_the_built_in_profiles_keep_their_tests() -> None:
    names = {p: [row.name for row in rows] for p, rows in quick.PROFILES.items()}
    assert names["default"] == [
        "randwrite-4k-iops",
        "randread-4k-iops",
        "randwrite-16k-throughput",
        "randread-16k-throughput",
        "randwrite-4k-latency",
        "randread-4k-latency",
    ]
    assert len(names["diskmark"]) == 8 and names["diskmark"][0] == "seq1m-q8t1-read"
