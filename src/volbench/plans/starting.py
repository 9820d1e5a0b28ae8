"""The one service that starts a run: a :class:`RunRequest` goes in, the stored run
comes out (:class:`Started`), for ``run`` plans, ``pts`` and ``qos verify``; a request
for a dry run (``dry_run``) comes out as what the run would do (:class:`Previewed`),
nothing written: the places are looked at read-only
(:func:`~volbench.plans.placement.preview.previewed_place`), the plan says what it
would run, and the cost is estimated from the request's ``costing``.

Every run is started the same way, in this order, so each refusal is one line before
anything is written: a product named in the labels is checked; fio (or the recorded
outputs of ``--replay``) is checked before the store is opened (:func:`open_session`);
the runs folder; the places (:func:`~volbench.plans.placement.placed.placed`: a target on
this machine, several, or hosts; each checked by the safety rules); the product's
promise at the target's size; then the plan's own start (``begin``). Commands only
parse their options into a request and render what comes out.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from volbench.errors import UsageError
from volbench.fio.runner import ReplayRunner, Runner, SubprocessRunner
from volbench.fio.stall import StallPolicy
from volbench.plans.placement.fleet_spec import Fleet
from volbench.plans.placement.job_targets import NamedPath
from volbench.plans.placement.placed import Placement, placed
from volbench.plans.placement.preview import PlacePreview, previewed_place
from volbench.plans.runs.execution import Outcome, Session, prepare_runs_dir
from volbench.plans.runs.preview import DryRun, costs
from volbench.plans.runs.reporter import Reporter
from volbench.specs import catalogue
from volbench.specs.run_cost import HourlyCost
from volbench.specs.run_promise import settled
from volbench.store.repository import Store, default_data_dir

Labels = tuple[tuple[str, str], ...]


def runs_folder(option: str | None) -> Path:
    """The folder of the runs' fio files: ``--runs-dir`` (made absolute: fio runs in a
    folder of its own, where a relative path would name another), else volbench's data
    folder's."""
    return Path(option).absolute() if option else default_data_dir() / "runs"


@contextlib.contextmanager
def open_session(
    db: str | None,
    runs_dir: str | None,
    reporter: Reporter,
    *,
    replay: str | None = None,
    stall: StallPolicy | None = None,
    create: bool = True,
) -> Iterator[Session]:
    """A run's parts for the block: fio (replayed from the folder ``replay`` when given),
    checked first, so a missing fio is one line before the store is touched; the store
    ``db`` (created unless ``create`` is false); ``reporter``, closed at the end."""
    runner: Runner = ReplayRunner(Path(replay)) if replay else SubprocessRunner()
    runner.version()
    with Store.open(db, create=create) as store, contextlib.closing(reporter):
        yield Session(store, runner, reporter, runs_folder(runs_dir), stall or StallPolicy())


@dataclass(frozen=True)
class Where:
    """Where a run goes: ``target`` on this machine, or the places of ``fleet``
    (several targets, or hosts), or the files and devices a job file names
    (``named``); ``size_bytes``: the active range (``--size``); ``destroy_data`` and
    ``force``: what the user allowed to be written."""

    target: str
    fleet: Fleet | None = None
    size_bytes: int | None = None
    destroy_data: tuple[str, ...] = ()
    force: bool = False
    named: tuple[NamedPath, ...] = ()


@dataclass(frozen=True)
class Costing:
    """What a run's cost is estimated from: the volume's catalogue ``product``
    (``--product``; else the ``product`` label) and the VM's ``hourly_cost``."""

    product: str | None = None
    hourly_cost: HourlyCost | None = None


@dataclass(frozen=True)
class RunRequest:
    """A run to start. ``where``: its places (None: the plan prepares what it measures
    itself, as ``qos verify`` does its device or guests); ``writes``: whether it
    writes (for the safety checks); ``notes``: lines shown once fio and the store are
    ready, before the places are prepared (e.g. an estimated cost); ``dry_run``: show
    what the run would do instead (:func:`previewed`), its cost from ``costing``."""

    where: Where | None
    writes: bool
    labels: Labels = ()
    db: str | None = None
    runs_dir: str | None = None
    replay: str | None = None
    stall: StallPolicy = field(default_factory=StallPolicy)
    notes: tuple[str, ...] = ()
    dry_run: bool = False
    costing: Costing = field(default_factory=Costing)


Begin = Callable[[Session, Placement | None, dict[str, str]], Outcome]
"""A plan's own start: given the session, the prepared places (None when the request
has no ``where``) and the labels with the product's promise settled at the target's
size, it runs the plan and returns its outcome."""


Preview = Callable[[PlacePreview | None, Path], DryRun]
"""A plan's own dry run: given what the look at its places found (None when the request
has no ``where``) and the runs folder its job files would name, what it would run."""


@dataclass(frozen=True)
class Previewed:
    """The answer to a dry run's request: what the run would do and its estimated
    cost, one text per currency and billing model (empty when nothing prices it)."""

    dry: DryRun
    costs: tuple[str, ...]


def previewed(request: RunRequest, preview: Preview) -> Previewed:
    """What the run ``request`` asks for would do, nothing written (no store, no
    target, no runs folder): its places looked at read-only, ``preview``'s answer, and
    its cost (the volume's at the request's ``--size`` or the target's capacity; a
    request without ``where``: at the ``size_gib`` label only)."""
    where = request.where
    place = None
    if where is not None:
        place = previewed_place(
            where.fleet,
            where.target,
            request.writes,
            where.size_bytes,
            where.destroy_data,
            where.force,
            where.named,
        )
    dry = preview(place, runs_folder(request.runs_dir))
    found = costs(
        dry.low_s,
        dry.high_s,
        None if where is None else dry.target.capacity_bytes,
        request.labels,
        request.costing.product,
        None if where is None else where.size_bytes,
        request.costing.hourly_cost,
    )
    return Previewed(dry, tuple(found))


@dataclass(frozen=True)
class Started:
    """A run that was started, for the rest of the command's block: its outcome and
    the store that holds it (open until the block ends)."""

    outcome: Outcome
    store: Store


@contextlib.contextmanager
def started(
    request: RunRequest, reporter: Reporter, begin: Begin, preview: Preview | None = None
) -> Iterator[Started | Previewed]:
    """Start the run ``request`` asks for (the module's order of checks) and give it
    to the block, the store still open. An interrupted run comes out too: its outcome
    says so (the caller ends the command, :func:`volbench.cli.session.conclude`). A
    dry run's request comes out as :func:`previewed`'s answer, ``begin`` not called
    (``preview`` None: the plan has no dry run, and the request may not ask for one)."""
    if request.dry_run:
        if preview is None:
            raise UsageError("this run has no --dry-run")
        yield previewed(request, preview)  # nothing reported: the reporter never started
        return
    labels = settled(request.labels, catalogue.load, None)  # a wrong product: one line
    with open_session(
        request.db, request.runs_dir, reporter, replay=request.replay, stall=request.stall
    ) as session:
        prepare_runs_dir(session.runs_dir)  # a bad --runs-dir: one line before the target
        for line in request.notes:
            reporter.note(line)
        where = request.where
        if where is None:
            outcome = begin(session, None, labels)
        else:
            if where.fleet is not None:
                where.fleet.check_stall_policy(request.stall.abort)
            with placed(
                where.fleet,
                where.target,
                request.writes,
                reporter,
                where.size_bytes,
                where.destroy_data,
                where.force,
                where.named,
            ) as place:
                labels = settled(request.labels, catalogue.load, place.target)
                outcome = begin(session, place, labels)
        yield Started(outcome, session.store)
