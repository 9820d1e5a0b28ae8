"""What a run would do, without doing it: its fio job files, fio processes, tests and
duration (``--dry-run``), and the one-line estimate every run prints before it starts.

Nothing here writes: the target is looked at read-only (a file the run would create
is described, not made), no store is opened, no folder is made. Durations are the
tests' planned times (ramp + runtime, fio's time-based jobs) plus
:data:`FIO_START_S` per fio process (BENCHMARKS.md, "bench/test_gaps": about 0.29 s
idle per test); an adaptive plan's is a range.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from volbench.errors import UsageError, VolbenchError
from volbench.fio.executable import ENGINE_ORDER, best_engine
from volbench.fio.job import JobFile, planned_seconds, render
from volbench.model import TargetInfo, Workload
from volbench.plans.placement.preparation import DEFAULT_FILE_BYTES
from volbench.plans.runs import fill
from volbench.plans.runs.execution import PlanSpec, new_workdir
from volbench.plans.sweep import options_from
from volbench.specs import catalogue
from volbench.specs.run_cost import HourlyCost, run_cost
from volbench.targets.safety import check_write_allowed
from volbench.targets.target import inspect
from volbench.units import format_bytes

FIO_START_S = 0.3
"""Seconds each fio process adds to its tests' planned time (start, set-up, commit)."""


@dataclass(frozen=True)
class JobText:
    """One fio job file the run would write, named by what it runs."""

    label: str
    text: str
    seconds: float


@dataclass(frozen=True)
class DryRun:
    """What a run would do: ``job_files`` (all of them, or those known before it
    starts), the fio processes and tests in all, its duration range (s) and notes."""

    plan: str
    target: TargetInfo
    engine: str
    job_files: tuple[JobText, ...]
    processes: int
    tests: int
    low_s: float
    high_s: float
    notes: tuple[str, ...] = ()


def format_duration(seconds: float) -> str:
    """``3725`` -> ``1h 2m 5s``; ``42.4`` -> ``42s``."""
    total = round(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours}h"] if hours else []
    parts += [f"{minutes}m"] if minutes or hours else []
    return " ".join([*parts, f"{secs}s"])


def duration_text(low_s: float, high_s: float) -> str:
    span = format_duration(low_s)
    return span if high_s <= low_s + 1 else f"{span} to {format_duration(high_s)}"


def preview_target(
    path: str,
    writes: bool,
    size_bytes: int | None = None,
    destroy_data: str | None = None,
    force: bool = False,
) -> tuple[TargetInfo, list[str]]:
    """What the run's target is, read-only, and what a real run would do to it first
    (create a scratch file) or refuse (the safety checks' word)."""
    target = os.path.abspath(path)
    notes = []
    if writes:
        try:
            check_write_allowed(target, destroy_data=destroy_data, force=force)
        except VolbenchError as exc:
            notes.append(f"a real run would be refused: {exc}")
    if os.path.exists(target):
        return inspect(target), notes
    size = size_bytes or DEFAULT_FILE_BYTES
    notes.append(f"{target} does not exist: a run would create it ({format_bytes(size)} of data)")
    return TargetInfo(target, "file", size, created_by_volbench=True), notes


def choose_engine(target: TargetInfo, ioengine: str | None) -> tuple[str, list[str]]:
    """The ioengine a run would use: the one given, else the first that reads the
    target (a read-only probe), else (no target yet) the first fio is asked for."""
    if ioengine:
        return ioengine, []
    if os.path.exists(target.path):
        return best_engine(Path(target.path)), []
    return ENGINE_ORDER[0], [f"ioengine: {ENGINE_ORDER[0]} if it reads the new file, else the next"]


def job_texts(
    rounds: Sequence[tuple[str, Sequence[Workload]]],
    target: TargetInfo,
    engine: str,
    runs_dir: Path,
    folders: Sequence[str] = (),
    files: Sequence[str] = (),
) -> tuple[JobText, ...]:
    """The job file of each fio process (a label and its workloads), with its logs in
    a run folder under ``runs_dir`` as a real run names it (``round-NNN``, or
    ``folders``); nothing is made. ``files``: those a job file's tests open (its own);
    ``together``: a process's tests run at once (its time is the longest's)."""
    run_folder = new_workdir(runs_dir)
    names = list(folders) or [f"round-{n:03d}" for n in range(len(rounds))]
    path = "" if files else target.path
    return tuple(
        JobText(
            label,
            render(JobFile(path, tuple(workloads), engine, run_folder / name, files=tuple(files))),
            planned_seconds(workloads),
        )
        for name, (label, workloads) in zip(names, rounds, strict=True)
    )


def plan_preview(
    plan: PlanSpec,
    target: TargetInfo,
    engine: str,
    runs_dir: Path,
    notes: Sequence[str] = (),
    texts: bool = True,
    named: Sequence[str] = (),
) -> DryRun:
    """The dry run of ``plan``: each test a fio process of its own, as the engine runs
    it (a plan whose rounds run ``together``: each round); an adaptive plan's later
    tests are chosen from results (its grid bounds them, when its settings name one).
    ``texts`` False: the figures without the job files (the estimate before a run).
    ``named``: the files a job file's tests open themselves."""
    rounds = list(plan.rounds)
    searching = plan.next_round is not None
    if plan.next_round is not None and all(w.name == fill.NAME for r in rounds for w in r):
        rounds.append(tuple(plan.next_round(()) or ()))  # a search: its first tests
    tests = [w for round_ in rounds for w in round_]
    units = (
        [(" + ".join(w.name for w in r), tuple(r)) for r in rounds]
        if plan.together
        else [(w.name, (w,)) for w in tests]
    )
    if texts:
        files = job_texts(units, target, engine, runs_dir, files=named)
    else:
        files = tuple(JobText(label, "", planned_seconds(ws)) for label, ws in units)
    low = sum(f.seconds for f in files) + FIO_START_S * len(files)
    high, extra = low, []
    processes = len(files)
    if searching:
        searched = [f for f in files if f.label != fill.NAME]  # the fill is not a search's
        more = _adaptive_bound(plan, len(searched))
        per_test = (
            sum(f.seconds for f in searched) / len(searched) + FIO_START_S if searched else 0.0
        )
        if plan.budget is not None:  # its own bound, each test's time its own
            high = plan.budget[1] + FIO_START_S * plan.budget[0]
            processes += more
        elif more:
            high = low + more * per_test
            processes += more
        extra.append(
            f"then more tests chosen from the results (adaptive), {more} at most"
            if more
            else "then more tests chosen from the results (adaptive)"
        )
    return DryRun(
        plan.name,
        target,
        engine,
        files,
        processes,
        len(tests) + (processes - len(files)),
        low,
        high,
        (*notes, *extra),
    )


def _adaptive_bound(plan: PlanSpec, known: int) -> int:
    """How many more tests an adaptive plan may run: within its budget, or the rest of
    a sweep's grid."""
    if plan.budget is not None:
        return max(0, plan.budget[0] - known)
    options = options_from(plan.options)
    if options is None:
        return 0
    return max(0, len(options.iodepths) * len(options.numjobs) - known)


def estimate_line(dry: DryRun, costs: Sequence[str] = ()) -> str:
    """The one line a run prints before it starts."""
    processes = f"{dry.processes} fio process{'es' * (dry.processes != 1)}"
    tests = f"{dry.tests} test{'s' * (dry.tests != 1)}"
    cost = f"; cost {' | '.join(costs)}" if costs else ""
    return f"estimate: {tests} in {processes}, {duration_text(dry.low_s, dry.high_s)}{cost}"


MAX_LABEL_SIZE = 1e12
"""The largest volume size a ``size_gib`` or ``size`` label may give (GiB or GB)."""


def product_size(
    unit: str, labels: dict[str, str], size_bytes: int | None, capacity_bytes: int | None
) -> float | None:
    """The volume's size in a catalogue unit (GiB or GB): the run's ``size_gib`` or
    ``size`` label (in that unit, as ``volbench check`` reads them), else ``--size``,
    else the target's capacity (bytes)."""
    for key in ("size_gib", "size"):
        if key in labels:
            try:
                size = float(labels[key])
            except ValueError:
                size = math.nan
            if not 0 < size <= MAX_LABEL_SIZE:
                raise UsageError(
                    f"label {key}={labels[key][:40]!r} is not a size: a number above 0, at"
                    f" most {MAX_LABEL_SIZE:g}"
                )
            return size
    found = size_bytes or capacity_bytes
    if not found:
        return None
    return found / (1 << 30) if unit == "GiB" else found / 1e9


def cost_texts(
    low_s: float,
    high_s: float,
    product_id: str | None,
    size: float | None,
    hourly: HourlyCost | None,
) -> list[str]:
    """The estimated cost of a run of ``low_s`` to ``high_s`` s, one text per currency
    and billing model ([] when neither a product nor an hourly cost is given)."""
    product = catalogue.load(()).find(product_id) if product_id else None
    if product is not None and size is None:
        raise UsageError(
            f"give the volume's size for {product.id}'s price: --size or --label size_gib=N"
        )
    return [c.text() for c in run_cost(low_s, high_s, product, size, hourly)]
