"""Where a run's rounds run, checked and ready: one preparation for every kind of place.

A run is on one target on this machine, or on several places at once (local
targets, hosts running fio's server, hosts reached through SSH:
:mod:`volbench.plans.placement.fleet`). :func:`placed` prepares either (safety checks by
identity, scratch files, hosts probed and their tunnels opened until the block
ends) and gives a :class:`Placement`: the run's target record, how its rounds run
(the round runner), what its settings record of its places, and its ioengine. A new
run, a PTS run and a resumed run of any plan all start here: a stored run's places
are made ready again, as they were, by :func:`placed_again`.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from volbench.errors import UsageError
from volbench.fio.runner import Runner
from volbench.model import NamedTarget, RunRecord, RunSettings, TargetInfo
from volbench.plans.placement.fleet import FleetRounds
from volbench.plans.placement.fleet_preparation import PreparedFleet, prepare_fleet, stored_fleet
from volbench.plans.placement.fleet_spec import REMOTE_ENGINE, Fleet, connected, schedule
from volbench.plans.placement.job_targets import NamedPath, prepare_named, run_target
from volbench.plans.placement.preparation import PurgeSettings, prepare_target
from volbench.plans.runs.execution import PlanSpec, RoundRunner
from volbench.plans.runs.reporter import Reporter
from volbench.plans.runs.round import LocalLaunch, run_round


@dataclass(frozen=True)
class Rounds:
    """A plan as its places run it, its round runner, and what is stored with the
    completed run about them (hosts lost on the way; None: nothing)."""

    plan: PlanSpec
    runner: RoundRunner
    note: Callable[[], str | None] = lambda: None


@dataclass(frozen=True)
class Placement:
    """A run's places, checked: its target record (a fleet's: every place by label),
    on several places at once the prepared fleet, and for a job file run on the files
    it names, each of them (``named``)."""

    target: TargetInfo
    fleet: PreparedFleet | None = None
    named: tuple[NamedTarget, ...] = ()

    @property
    def settings(self) -> RunSettings | None:
        """What the run records of its places (None: one target, in the run's own)."""
        if self.named:
            return RunSettings(named=self.named)
        return self.fleet.settings if self.fleet is not None else None

    @property
    def _local(self) -> RoundRunner:
        """A round on this machine: on its target, or on the files a job file names."""
        if not self.named:
            return run_round
        files = tuple(n.target.path for n in self.named)
        return functools.partial(run_round, launch=LocalLaunch(files=files))

    def rounds(self, plan: PlanSpec) -> Rounds:
        """``plan`` as the places run it (with ``--solo``: each fixed round first on each
        place alone, :func:`volbench.plans.placement.fleet_spec.schedule`) and how its
        rounds run."""
        if self.fleet is None:
            return Rounds(plan, self._local)
        plan, alone = schedule(plan, self.fleet.fleet)
        runner = FleetRounds(self.fleet.fleet, alone)
        return Rounds(plan, runner, runner.note)

    @property
    def round_runner(self) -> RoundRunner:
        """How the rounds of a run continued on these places run (no ``--solo``)."""
        return self._local if self.fleet is None else FleetRounds(self.fleet.fleet)

    def engine(self, runner: Runner, ioengine: str | None) -> str:
        """``ioengine``, else the best one for the first local target (fio's own
        check), else libaio for targets on other hosts (the local check says nothing
        of them)."""
        if ioengine:
            return ioengine
        if self.fleet is not None and self.fleet.fleet.remote:
            return REMOTE_ENGINE
        first = self.fleet.infos[0] if self.fleet is not None else self.target
        first = self.named[0].target if self.named else first
        return runner.engine(Path(first.path))


@contextlib.contextmanager
def placed(
    fleet: Fleet | None,
    target: str,
    writes: bool,
    reporter: Reporter,
    size_bytes: int | None = None,
    destroy_data: Sequence[str] = (),
    force: bool = False,
    named: Sequence[NamedPath] = (),
) -> Iterator[Placement]:
    """The run's places ready for the block: ``target`` alone on this machine when
    ``fleet`` is None, else every place of ``fleet`` (``ssh://`` hosts' tunnels open
    until the block ends), or, for a job file that names its own, each file and device
    of ``named`` (:mod:`volbench.plans.placement.job_targets`). Every check refuses in one line
    before anything runs."""
    if named:
        prepared = prepare_named(named, reporter, size_bytes, destroy_data, force)
        yield Placement(run_target(prepared), named=prepared)
        return
    if fleet is None:
        destroy = destroy_data[0] if destroy_data else None
        yield Placement(prepare_target(target, writes, reporter, size_bytes, destroy, force))
        return
    with connected(fleet) as reachable:
        ready = prepare_fleet(reachable, writes, reporter, destroy_data, force)
        yield Placement(ready.target, ready)


@dataclass(frozen=True)
class Resuming:
    """What ``volbench resume`` was told: how a target is purged (a plan that purges),
    and the safety options its places are prepared with again."""

    purging: PurgeSettings
    destroy_data: Sequence[str] = ()
    force: bool = False


@contextlib.contextmanager
def placed_again(
    reporter: Reporter, record: RunRecord, writes: bool, how: Resuming
) -> Iterator[Placement]:
    """The places of the stored run ``record`` ready again, as they were, through the
    same checks as a new run's (:func:`placed`); UsageError when a size changed."""
    fleet = stored_fleet(record.settings) if record.settings.places else None
    path = record.target.path
    named = [NamedPath(n.target.path, n.writes) for n in record.settings.named]
    with placed(fleet, path, writes, reporter, None, how.destroy_data, how.force, named) as place:
        then = [n.target for n in record.settings.named] or [record.target]
        now = [n.target for n in place.named] or [place.target]
        for before, after in zip(then, now, strict=True):
            if after.capacity_bytes != before.capacity_bytes:
                raise UsageError(
                    f"{before.path} changed size since run {record.id} started: cannot resume"
                )
        yield place
