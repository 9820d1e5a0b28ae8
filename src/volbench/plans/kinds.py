"""The one table of what each plan's runs are to the run engine: how a run is
continued by ``volbench resume`` (its resumer, :mod:`volbench.plans.resumers`, which
rebuilds an adaptive plan from its settings), and how its own recorded options are
read back. How runs are *shown* is a layer
above, in :mod:`volbench.views`; both tables are keyed by the plan names runs store.

:data:`KINDS` is written out here, whole; nothing registers itself on import.
Adding a plan: its own module(s), plus one line here and one in :mod:`volbench.views`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from volbench.analysis import qos_results
from volbench.errors import UsageError
from volbench.model import RunRecord, RunSettings, Workload
from volbench.plans import capture, firsttouch, hdtune, iometer, limits, quick, replay, sweep
from volbench.plans.imported import importing
from volbench.plans.jobs import tests as job_tests
from volbench.plans.profile_record import stored_profile
from volbench.plans.pts import driver
from volbench.plans.pts import options as pts
from volbench.plans.qos import capability as qos_capability
from volbench.plans.qos import verify as qos_verify
from volbench.plans.resumers import PLANNED, Resumer, Tests, never
from volbench.plans.runs.execution import PlanSpec
from volbench.records import section

SetupReader = Callable[[RunRecord], object]
"""A plan's own recorded options as its typed record (RecordError: they do not fit)."""


def _section(key: str, kind: type[object]) -> SetupReader:
    """The reader of options stored under ``key`` as a ``kind`` record."""
    return lambda run: section(run.settings.options, key, kind)


def _whole(kind: type[object]) -> SetupReader:
    """The reader of all a plan's options as one ``kind`` record (:meth:`RunRecord.setup`)."""
    return lambda run: run.setup(kind)


def _find_max_again(settings: RunSettings) -> PlanSpec:
    """A find-max sweep from its recorded options."""
    options = sweep.options_from(settings.options)
    if options is None:
        raise UsageError("its sweep options were not recorded: start it again")
    return sweep.find_max_plan(options)


def _limits_again(settings: RunSettings) -> PlanSpec:
    """A limits experiment from its recorded options."""
    options = section(settings.options, limits.NAME, limits.LimitsOptions)
    if options is None:
        raise UsageError("its limits options were not recorded: start it again")
    return limits.plan(options)


def _job_rounds(settings: RunSettings) -> tuple[tuple[Workload, ...], ...]:
    """A job file run's rounds: its recorded tests in their recorded rounds."""
    return job_tests.recorded_rounds(settings.options, settings.planned or ())


@dataclass(frozen=True)
class PlanKind:
    """A plan's row of the table."""

    resume: Resumer = PLANNED
    """How ``volbench resume`` continues its run (:mod:`volbench.plans.resumers`): by
    default its planned tests that have no stored result, each whole."""
    setup: SetupReader | None = None
    """Reads the plan's own recorded options (None: the plan records none to check)."""


KINDS: Mapping[str, PlanKind] = MappingProxyType(
    {
        quick.NAME: PlanKind(setup=_section(quick.NAME, quick.QuickOptions)),
        sweep.NAME: PlanKind(
            Tests(rebuild=_find_max_again), setup=_section(sweep.NAME, sweep.SweepOptions)
        ),
        iometer.NAME: PlanKind(setup=_section(iometer.NAME, iometer.IometerOptions)),
        hdtune.SCAN: PlanKind(setup=_section(hdtune.SCAN, hdtune.ScanOptions)),
        hdtune.FILEBENCH: PlanKind(setup=_section(hdtune.FILEBENCH, hdtune.FilebenchOptions)),
        firsttouch.NAME: PlanKind(setup=_section(firsttouch.NAME, firsttouch.FirstTouchOptions)),
        pts.NAME: PlanKind(driver.resume, setup=_whole(pts.PtsSetup)),
        qos_results.PLAN: PlanKind(qos_verify.resume, setup=qos_results.VerifySetup.of),
        qos_capability.NAME: PlanKind(),
        importing.PLAN: PlanKind(never),
        capture.NAME: PlanKind(never, setup=stored_profile),
        replay.NAME: PlanKind(setup=_section(replay.NAME, replay.ReplayOptions)),
        limits.NAME: PlanKind(
            Tests(rebuild=_limits_again), setup=_section(limits.NAME, limits.LimitsOptions)
        ),
        job_tests.NAME: PlanKind(
            Tests(together=_job_rounds), setup=_section(job_tests.NAME, job_tests.JobOptions)
        ),
    }
)
"""Every plan volbench creates runs of, by name (read-only)."""

UNKNOWN = PlanKind()
"""The row of a plan name not in :data:`KINDS` (a run stored by another volbench)."""


def kind(plan: str) -> PlanKind:
    """The table's row of plan name ``plan`` (:data:`UNKNOWN` when not in it)."""
    return KINDS.get(plan, UNKNOWN)


def check_setup(run: RunRecord) -> None:
    """RecordError when ``run``'s own recorded options do not fit its plan's record
    (a bundle to import is checked whole before anything of it is stored)."""
    reader = kind(run.plan).setup
    if reader is not None:
        reader(run)
