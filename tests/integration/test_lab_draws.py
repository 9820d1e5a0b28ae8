"""``run limits`` on limits drawn at random on a lab guest (a TCG guest of this module's
own, :mod:`lab_guest`): every knob of QEMU's throttle group and the guest kernel's
io.max, fitted within their tolerances. Apart from test_lab_limits.py and test_lab.py so
that pytest-xdist runs the three modules' guests side by side."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest
from cli_harness import Volbench
from lab_guest import LIMITS_SHARE, Capacity, limits, run_limits, set_limits

from measured import record
from volbench.lab import draws
from volbench.lab import guest as guests
from volbench.lab.draws import share

LIMITS_DRAWS = 3
CI_SHAPES = draws.SHAPES
"""The shapes this test draws from: every one, the bursts of MB/s among them (right in 4
of 4 draws on a quiet machine and 2 of 2 beside two CPU hogs with this session's
experiment, BENCHMARKS.md, bench/limits)."""


@pytest.mark.timeout(1200)
def test_limits_of_random_draws(
    lab: tuple[Volbench, Path],
    guest: guests.Guest,
    capacity: Capacity,
    request: pytest.FixtureRequest,
) -> None:
    """``run limits`` on limits drawn at random (three of :data:`CI_SHAPES`: QEMU's
    throttle group's every knob, and the guest kernel's io.max; a new seed each run, in
    the summary; ``VOLBENCH_LIMITS_SEED`` repeats one): each IOPS and MB/s cap within
    5 %, the unit exact, one budget or two right, a burst's ceiling within 5 % and its
    bucket within 10 %. A draw a busy machine held off is drawn once more with the same
    limits."""
    tool, _ = lab
    seed = int(os.environ.get("VOLBENCH_LIMITS_SEED") or time.time_ns() % 1_000_000)
    draw = random.Random(seed)
    top = share(LIMITS_SHARE * capacity.deep, 1500)
    for shape in draw.sample(CI_SHAPES, LIMITS_DRAWS):
        drawn = draws.draw_limits(shape, draw, top, LIMITS_SHARE * capacity.mbps)
        limits(request, capacity, f"seed {seed}, {drawn.text()}")
        wrong = ["not run"]
        for _ in range(2):  # once is luck, twice a fault
            set_limits(tool, *drawn.options)
            run_limits(tool)
            wrong = draws.misfits(tool.show(), drawn.wanted)
            if not wrong:
                break
            record(request, f"seed {seed}, {shape}: {'; '.join(wrong)}: measured again")
        assert not wrong, (seed, shape, drawn.options, wrong)
