"""What every plan-running command shares: target options, the run, the result sheet."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from volbench.cli import console
from volbench.cli.check import promise_options, show_run
from volbench.cli.dry_run import checked_cost_options, dry_run_option
from volbench.cli.dry_run import show as show_dry_run
from volbench.cli.options import (
    POSITIVE_SIZE,
    db_option,
    format_option,
    ioengine_option,
    label_option,
    runs_dir_option,
    stall_options,
    strict_option,
    write_options,
)
from volbench.cli.place_options import PLACE_OPTIONS, given
from volbench.cli.session import conclude
from volbench.errors import UsageError
from volbench.fio.stall import DEFAULT_SECONDS, StallPolicy
from volbench.model import RunRecord, TargetInfo
from volbench.plans.cache_mode import MODES, with_cache_mode
from volbench.plans.dry_run import plan_dry_run, plan_preview
from volbench.plans.placement.fleet_spec import Fleet, OwnFile
from volbench.plans.placement.job_targets import NamedPath
from volbench.plans.placement.named import places_from
from volbench.plans.placement.placed import Placement
from volbench.plans.placement.preview import PlacePreview
from volbench.plans.runs.engine import execute
from volbench.plans.runs.execution import Outcome, PlanSpec, Session
from volbench.plans.runs.fill import note as fill_note
from volbench.plans.runs.fill import with_fill
from volbench.plans.runs.preview import DryRun, costs, estimate_line
from volbench.plans.starting import Costing, Previewed, RunRequest, Where, started
from volbench.report.validity_sheets import Verdicts
from volbench.specs.run_cost import HourlyCost
from volbench.volume_limits import caps_of
from volbench.volume_writes import with_history

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_TARGET = "volbench-work/scratch.img"


@dataclass(frozen=True)
class TargetChoice:
    """The options of a plan-running command that are not about the plan itself."""

    target: str
    size: int | None
    ioengine: str | None
    labels: tuple[tuple[str, str], ...]
    destroy_data: tuple[str, ...]
    force: bool
    runs_dir: str | None
    cache: str
    replay: str | None
    db: str | None
    fmt: str
    targets: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    keep_going: bool = False
    solo: bool = False
    stall_seconds: float = DEFAULT_SECONDS
    abort_on_stall: bool = False
    dry_run: bool = False
    product: str | None = None
    hourly_cost: HourlyCost | None = None
    fill: bool = False
    strict: bool = False
    files: tuple[OwnFile, ...] = ()
    """On ``hosts``, the files the plan's jobs name themselves, by absolute paths on
    each host, in the folders and files of ``targets`` (a recipe's own job files)."""

    def filled(self, spec: PlanSpec, target: TargetInfo) -> PlanSpec:
        """``spec``, with the fill of what it reads first when ``--fill`` was given."""
        return with_fill(spec, target.capacity_bytes, self.size) if self.fill else spec

    def costs(self, low_s: float, high_s: float, capacity_bytes: int | None) -> list[str]:
        """The estimated cost of a run of ``low_s`` to ``high_s`` s."""
        return costs(
            low_s, high_s, capacity_bytes, self.labels, self.product, self.size, self.hourly_cost
        )

    def fleet(self) -> Fleet | None:
        """The places of a run on several targets or hosts (None: one local target)."""
        if not self.hosts and len(self.targets) < 2:
            return None
        places = places_from(self.targets, self.hosts)
        return Fleet(places, self.keep_going, self.solo, self.size, files=self.files)


_NAMES = tuple(name for name in TargetChoice.__dataclass_fields__ if name != "files")
"""The fields an option sets (``files``: a recipe's own, set by the recipe command)."""
_FLEET_OPTIONS = (
    *PLACE_OPTIONS,
    click.option(
        "--solo",
        is_flag=True,
        help="Measure every target alone first (finds a limit the targets share).",
    ),
)


def _fleet_values(kwargs: dict[str, Any]) -> None:
    """Turn the raw multi-target options into TargetChoice's fields (in place)."""
    targets, hosts = given(
        kwargs.pop("target"),
        kwargs.pop("target_lists"),
        kwargs.pop("host_lists"),
        kwargs.pop("hosts_file"),
    )
    kwargs["targets"] = tuple(targets)
    kwargs["hosts"] = tuple(hosts)
    kwargs["target"] = targets[0] if targets else DEFAULT_TARGET


JOB_FILE_DECIDES = {"ioengine": None, "cache": "direct"}
"""The shared options a job file decides itself (``ioengine=``, ``direct=`` in it): not
offered by ``run job`` (:func:`job_target_options`), and their values in its choice."""


def job_target_options(function: F) -> F:
    """:func:`target_options` without those a job file decides (:data:`JOB_FILE_DECIDES`)."""
    return _with_target_options(function, JOB_FILE_DECIDES)


def target_options(function: F) -> F:
    """Add the shared options; the command receives them as one ``choice`` argument
    (the promise's options recorded in its labels: :func:`promise_options`)."""
    return _with_target_options(function, {})


def _with_target_options(function: F, decided: Mapping[str, str | None]) -> F:
    """``function`` with the shared options but those ``decided`` (by their name in
    :class:`TargetChoice`, with the value its choice gets)."""
    options = [
        click.option(
            "--target",
            multiple=True,
            help="File or block device (default: volbench-work/scratch.img). A missing "
            "file is created as a scratch file (1 GiB). Several: measured at once; "
            "HOST:PATH with --hosts.",
        ),
        *_FLEET_OPTIONS,
        click.option(
            "--size", type=POSITIVE_SIZE, default=None, help="Active range; scratch files: 1g."
        ),
        *(() if "ioengine" in decided else (ioengine_option,)),
        label_option,
        write_options,
        runs_dir_option,
        *(
            ()
            if "cache" in decided
            else (
                click.option(
                    "--cache",
                    type=click.Choice(MODES),
                    default="direct",
                    show_default=True,
                    help="direct I/O, buffered (page cache), or both side by side.",
                ),
            )
        ),
        click.option(
            "--fill",
            is_flag=True,
            help="Write the range the run reads once first (a fresh thin volume reads "
            "blocks nothing wrote without touching its medium).",
        ),
        click.option("--replay", type=click.Path(exists=True, file_okay=False), hidden=True),
        db_option,
        format_option,
        stall_options,
        dry_run_option,
        checked_cost_options,
        promise_options,
        strict_option,
    ]

    @functools.wraps(function)
    def wrapper(**kwargs: Any) -> Any:
        _fleet_values(kwargs)
        kwargs.update(decided)
        choice = TargetChoice(**{name: kwargs.pop(name) for name in _NAMES})
        return function(choice=choice, **kwargs)

    decorated: Any = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return decorated  # type: ignore[no-any-return]


PlanFactory = Callable[[TargetInfo], PlanSpec]

FILL_NAMED = (
    "--fill writes the run's --target: a job file's own files are not filled (give "
    "--target, or write them in a job of the file first)"
)


def run_plan(
    choice: TargetChoice,
    plan: PlanSpec | PlanFactory,
    writes: bool = True,
    named: Sequence[NamedPath] = (),
    after: Callable[[RunRecord], None] | None = None,
) -> None:
    """Prepare the target, run ``plan`` with live progress, print its sheet; with
    ``--dry-run``, print what it would run instead (the service's preview).

    ``plan`` may be a function of the prepared target (plans sized by capacity);
    then ``writes`` says whether it writes (for the safety checks). ``named``: the
    files and devices a job file names, prepared instead of ``--target``. After an
    interrupted run (its finished work is stored) volbench exits 130, or 143 when
    SIGTERM interrupted it. A run whose labels name a product ends with the check
    against its promise (exit 1 when a figure is below it: :func:`show_run`); with
    ``--strict``, exit 1 too when a test's figure is not the volume's.
    ``after``: what the command adds below the run's sheet (and the check's), given
    the stored run.
    """
    if choice.fill and named:
        raise UsageError(FILL_NAMED)
    if choice.target == DEFAULT_TARGET and not named and not choice.dry_run:
        Path(choice.target).parent.mkdir(exist_ok=True)  # the embedded default: volbench's own
    if isinstance(plan, PlanSpec):
        plan = with_cache_mode(plan, choice.cache)
        writes = any(w.rw.writes for round_ in plan.rounds for w in round_)
    writes = writes or choice.fill
    fleet = choice.fleet()
    where = Where(
        choice.target, fleet, choice.size, choice.destroy_data, choice.force, tuple(named)
    )
    request = RunRequest(
        where,
        writes,
        choice.labels,
        choice.db,
        choice.runs_dir,
        choice.replay,
        StallPolicy(choice.stall_seconds, choice.abort_on_stall),
        dry_run=choice.dry_run,
        costing=Costing(choice.product, choice.hourly_cost),
    )
    reporter = console.ProgressReporter()

    def spec_of(target: TargetInfo) -> PlanSpec:
        """The plan on ``target``, with the fill of what it reads first (``--fill``)."""
        spec = plan if isinstance(plan, PlanSpec) else with_cache_mode(plan(target), choice.cache)
        return choice.filled(spec, target)

    def begin(session: Session, place: Placement | None, labels: dict[str, str]) -> Outcome:
        assert place is not None  # the request has its places
        target = place.target
        rounds = place.rounds(spec_of(target))
        reporter.note(_estimate(choice, rounds.plan, target, named))
        return execute(
            session,
            rounds.plan,
            target,
            labels,
            place.engine(session.runner, choice.ioengine),
            round_runner=rounds.runner,
            places=place.settings,
            note=rounds.note,
        )

    def preview(place: PlacePreview | None, runs_dir: Path) -> DryRun:
        assert place is not None  # the request has its places
        return plan_dry_run(spec_of(place.target), place, choice.ioengine, runs_dir)

    with started(request, reporter, begin, preview) as ran:
        if isinstance(ran, Previewed):
            show_dry_run(ran.dry, ran.costs, choice.fmt)
            return
        verdicts = Verdicts()
        run = with_history(ran.store, ran.store.get_run(str(ran.outcome.run_id)), verdicts)
        caps = caps_of(ran.store, run)

        def show() -> None:
            try:
                show_run(run, choice.fmt, caps, choice.strict, verdicts)
            finally:
                if after is not None:
                    after(run)

        conclude(ran.outcome, show)


def _estimate(
    choice: TargetChoice, spec: PlanSpec, target: TargetInfo, named: Sequence[NamedPath] = ()
) -> str:
    """The one line printed before a run starts: tests, duration and cost."""
    files = [n.path for n in named]
    dry = plan_preview(spec, target, choice.ioengine or "-", Path("."), texts=False, named=files)
    line = estimate_line(dry, choice.costs(dry.low_s, dry.high_s, target.capacity_bytes))
    filling = fill_note(spec)
    return line if filling is None else f"{line}\n{filling}"
