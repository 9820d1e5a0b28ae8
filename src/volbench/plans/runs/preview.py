"""What a run would do, without doing it, as figures: the record of a dry run
(:class:`DryRun`: its fio job files, fio processes, tests and duration), the job files
it would write, its estimated cost, and the one-line estimate every run prints before
it starts. How each kind of plan fills it in: :mod:`volbench.plans.dry_run` (the plans
of ``run``), :mod:`volbench.plans.pts.dry_run`, :func:`volbench.plans.qos.verify.preview`;
how its places are looked at: :mod:`volbench.plans.placement.preview`; the request
that asks for it: :mod:`volbench.plans.starting`.

Nothing here writes: no store is opened, no folder is made. Durations are the tests'
planned times (ramp + runtime, fio's time-based jobs) plus :data:`FIO_START_S` per
fio process (BENCHMARKS.md, "bench/test_gaps": about 0.29 s idle per test); an
adaptive plan's is a range.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from volbench.errors import UsageError
from volbench.fio.job import JobFile, planned_seconds, render
from volbench.model import TargetInfo, Workload
from volbench.plans.runs.execution import new_workdir
from volbench.specs import catalogue
from volbench.specs.run_cost import HourlyCost, run_cost
from volbench.specs.run_promise import labelled_size

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


def estimate_line(dry: DryRun, costs: Sequence[str] = ()) -> str:
    """The one line a run prints before it starts."""
    processes = f"{dry.processes} fio process{'es' * (dry.processes != 1)}"
    tests = f"{dry.tests} test{'s' * (dry.tests != 1)}"
    cost = f"; cost {' | '.join(costs)}" if costs else ""
    return f"estimate: {tests} in {processes}, {duration_text(dry.low_s, dry.high_s)}{cost}"


def product_size(
    unit: str, labels: dict[str, str], size_bytes: int | None, capacity_bytes: int | None
) -> float | None:
    """The volume's size in a catalogue unit (GiB or GB): the run's ``size_gib`` or
    ``size`` label (in that unit, as ``volbench check`` reads them:
    :func:`~volbench.specs.run_promise.labelled_size`), else ``--size``, else the
    target's capacity (bytes)."""
    size = labelled_size(labels)
    if size is not None:
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


def costs(
    low_s: float,
    high_s: float,
    capacity_bytes: int | None,
    labels: Sequence[tuple[str, str]],
    product: str | None,
    size_bytes: int | None,
    hourly: HourlyCost | None,
) -> list[str]:
    """The estimated cost of a run of ``low_s`` to ``high_s`` s: the volume (``product``,
    or the ``product`` label, at the ``size_gib`` label, ``size_bytes`` (``--size``) or
    the target's capacity) and the VM (``hourly``); [] when neither is known."""
    given = dict(labels)
    product = product or given.get("product")
    if product is None and hourly is None:
        return []
    unit = catalogue.load(()).find(product).size_unit if product else "GiB"
    size = product_size(unit, given, size_bytes, capacity_bytes) if product else None
    return cost_texts(low_s, high_s, product, size, hourly)
