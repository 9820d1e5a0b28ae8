"""``--dry-run``, ``--product`` and ``--hourly-cost`` of the run commands, and how a dry
run is shown (what a run would do and its cost: the start service's answer,
:func:`volbench.plans.starting.previewed`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from volbench.cli import console
from volbench.cli.options import Converted
from volbench.plans.runs.preview import DryRun, duration_text
from volbench.specs.run_cost import parse_hourly_cost

F = TypeVar("F", bound=Callable[..., Any])

HOURLY = Converted("amount", parse_hourly_cost)
DRY_RUN_SCHEMA = "volbench.dry_run/1"


COST_ONLY = (
    "Catalogue product of the volume (or --label product=P): its price for the"
    " run's duration is estimated, at --size (or --label size_gib=N)."
)
CHECKED = (
    "Catalogue product of the volume (or --label product=P), recorded as the run's"
    " product label: the run ends with `volbench check`'s verdicts (exit 1 below the"
    " promise), and its price for the run's duration is estimated."
)


def cost_options(function: F, product_help: str = COST_ONLY) -> F:
    """``--product`` and ``--hourly-cost``: what the run costs, in the estimate."""
    function = click.option(
        "--hourly-cost",
        type=HOURLY,
        default=None,
        metavar="AMOUNT",
        help="The VM's price per hour (e.g. 0.192USD), added to the estimated cost.",
    )(function)
    return click.option("--product", default=None, help=product_help)(function)


def checked_cost_options(function: F) -> F:
    """:func:`cost_options` of a command that also checks the run against the product's
    promise (:func:`volbench.cli.check.promise_options`)."""
    return cost_options(function, CHECKED)


def dry_run_option(function: F) -> F:
    return click.option(
        "--dry-run",
        is_flag=True,
        help="Print the fio job files, fio processes, tests and estimated duration (and"
        " cost); write nothing to any target or store.",
    )(function)


def document(dry: DryRun, costs: Sequence[str]) -> dict[str, Any]:
    """The JSON form of a dry run (schema ``volbench.dry_run/1``)."""
    return {
        "schema": DRY_RUN_SCHEMA,
        "plan": dry.plan,
        "target": dry.target.path,
        "target_kind": dry.target.kind,
        "capacity_bytes": dry.target.capacity_bytes,
        "ioengine": dry.engine,
        "fio_processes": dry.processes,
        "tests": dry.tests,
        "duration_s": [dry.low_s, dry.high_s],
        "cost": list(costs),
        "notes": list(dry.notes),
        "job_files": [
            {"label": j.label, "seconds": j.seconds, "text": j.text} for j in dry.job_files
        ],
    }


def show(dry: DryRun, costs: Sequence[str], fmt: str) -> None:
    """Print a dry run: the job files, then what the run would be (or its JSON)."""
    if fmt == "json":
        sys.stdout.write(json.dumps(document(dry, costs), indent=2) + "\n")
        return
    out = console.stdout
    for number, job in enumerate(dry.job_files, 1):
        out.print(f"# fio job file {number} of {len(dry.job_files)}: {job.label}")
        out.print(job.text.rstrip("\n"))
        out.print("")
    summary = [
        f"dry run of {dry.plan} on {dry.target.path} ({dry.target.kind}, ioengine {dry.engine}):"
        f" nothing was run or written",
        f"fio processes: {dry.processes}; tests: {dry.tests}",
        f"estimated duration: {duration_text(dry.low_s, dry.high_s)}",
        *(f"estimated cost: {c}" for c in costs),
        *dry.notes,
    ]
    for line in summary:
        out.print(line)
