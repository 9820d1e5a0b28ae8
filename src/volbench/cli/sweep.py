"""``volbench run sweep``: one workload over a grid of queue depths x jobs."""

from __future__ import annotations

import re

import click

from volbench.cli.options import (
    BLOCK_SIZE,
    DURATION,
    IODEPTHS,
    JOB_COUNTS,
    POSITIVE_DURATION,
    Converted,
)
from volbench.cli.plan_run import TargetChoice, run_plan, target_options
from volbench.errors import UsageError
from volbench.model import RW
from volbench.plans import sweep
from volbench.units import shown

_TARGET = re.compile(r"^\s*(\d{1,15}(?:\.\d{1,15})?)\s*(us|µs|ms|s)\s*(?::\s*(mean|p99))?\s*\Z")
_NS = {"us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
MAX_LATENCY_NS = 3600e9
"""The longest latency target: an hour."""


def parse_latency_target(text: str) -> tuple[float, str]:
    """``1ms`` or ``500us:p99`` -> (nanoseconds, "mean" | "p99"); above 0, at most an hour."""
    match = _TARGET.match(text)
    value = float(match.group(1)) * _NS[match.group(2)] if match else 0.0
    if not match or not 0 < value <= MAX_LATENCY_NS:
        raise UsageError(
            f"invalid latency target {shown(text)}: use e.g. 1ms, 500us or 2ms:p99"
            " (above 0, at most 3600s)"
        )
    return value, match.group(3) or "mean"


LATENCY_TARGET = Converted("latency", parse_latency_target)


@click.command("sweep")
@click.option(
    "--rw", type=click.Choice([r.value for r in RW]), default="randread", show_default=True
)
@click.option("--bs", type=BLOCK_SIZE, default="4k", show_default=True, help="Block size.")
@click.option(
    "--rwmixread", type=click.IntRange(0, 100), default=None, help="Read percentage for rw/randrw."
)
@click.option(
    "--iodepth",
    type=IODEPTHS,
    default="1-64",
    show_default=True,
    help="Queue depths: 1,2,4 or a doubling range 1-256.",
)
@click.option(
    "--numjobs",
    type=JOB_COUNTS,
    default="1",
    show_default=True,
    help="Job counts: 1,2,4 or a doubling range 1-32.",
)
@click.option(
    "--runtime", type=POSITIVE_DURATION, default="10s", show_default=True, help="Per point."
)
@click.option("--ramp-time", type=DURATION, default="1s", show_default=True, help="Per point.")
@click.option(
    "--latency-target",
    type=LATENCY_TARGET,
    default=None,
    help="Report the highest IOPS under this latency: 1ms (mean) or 1ms:p99.",
)
@click.option(
    "--find-max",
    is_flag=True,
    help="Search the grid adaptively for the peak IOPS instead of measuring it all.",
)
@target_options
def command(
    rw: str,
    bs: int,
    rwmixread: int | None,
    iodepth: tuple[int, ...],
    numjobs: tuple[int, ...],
    runtime: float,
    ramp_time: float,
    latency_target: tuple[float, str] | None,
    find_max: bool,
    choice: TargetChoice,
) -> None:
    """Sweep queue depth x jobs: IOPS, latency, the saturation knee and Little's law."""
    options = sweep.SweepOptions(
        rw=RW(rw),
        bs_bytes=bs,
        iodepths=iodepth,
        numjobs=numjobs,
        runtime_s=runtime,
        ramp_time_s=ramp_time,
        size_bytes=choice.size,
        rwmixread_pct=rwmixread,
        ioengine=choice.ioengine,
        latency_target_ns=latency_target[0] if latency_target else None,
        latency_percentile=latency_target[1] if latency_target else "mean",
        find_max=find_max,
    )
    run_plan(choice, sweep.find_max_plan(options) if find_max else sweep.plan(options))
