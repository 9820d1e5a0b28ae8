"""Running a PTS run: purge, preconditioning, rounds to steady state, each committed.

The loop asks :func:`state.next_round` what to do from the committed results
alone, runs that round as one fio process (stonewalled cells, no idle gaps),
commits it, and asks again. ``volbench resume RUN`` runs the same loop on a
stored run, so it continues after the last committed round.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from volbench.errors import FioError, TargetError, UsageError
from volbench.fio.job import JobFile, render
from volbench.fio.parser import parse
from volbench.fio.raw import RawRun
from volbench.fio.request import Here
from volbench.fio.stall import utc_text
from volbench.model import (
    RW,
    RunRecord,
    RunSettings,
    StoredResult,
    TargetInfo,
    TestResult,
    Workload,
)
from volbench.places.table import can_purge
from volbench.plans.placement.fleet import REMOTE_ENGINE, FleetRounds, PreparedFleet
from volbench.plans.placement.fleet_spec import Fleet
from volbench.plans.placement.placed import Resuming, placed_again
from volbench.plans.placement.preparation import PurgeSettings
from volbench.plans.pts import catalog, state
from volbench.plans.pts.cells import kib
from volbench.plans.pts.estimate import estimate_note, format_duration, remaining
from volbench.plans.pts.options import (
    MIN_ACTIVE_BYTES,
    NAME,
    PtsOptions,
    PtsSetup,
    fit_block_size,
    write_cache_reason,
)
from volbench.plans.pts.steady import WIPC_BS
from volbench.plans.pts.test import Phase, Round, StoredRound
from volbench.plans.runs.engine import Guard, Step, drive, open_run, recorded_engine
from volbench.plans.runs.execution import Outcome, RoundRunner, Session, prepare_runs_dir
from volbench.plans.runs.round import run_round
from volbench.records import json_object
from volbench.targets.hold import reach, reached
from volbench.units import format_bytes

SPEED_PROBE_S = 2.0
"""Length of the sequential-write probe that sizes the WIPC estimate, seconds."""

PROBE = "seq-write-probe"
"""The probe's fio job name, as its stored output names it."""

PROBE_ROUND = 0
"""The store round that holds the probe's fio output, before the run's first cell:
stored as fio printed it and without result rows, so PTS rounds, cells, reports and
steady-state tables never count it, while the run's fio outputs hold every fio process
it ran (the estimate is traceable to it, and ``--replay`` of its outputs answers the
probe with it)."""


@dataclass(frozen=True)
class SpeedProbe:
    """The sequential-write probe's fio run (``raw``: its output verbatim, its times)
    and the speed read from its output (``bytes_per_s``: :func:`probe_speed`)."""

    raw: RawRun
    bytes_per_s: float


def probe_speed(output: str) -> float:
    """128 KiB sequential write speed (bytes/s) in the probe's fio output ``output``:
    fio's write ``bw_bytes`` of its jobs, summed."""
    jobs = parse(output).jobs
    return sum(j.directions["write"].bw_bytes_per_s for j in jobs if "write" in j.directions)


def stored_probe(record: RunRecord) -> str | None:
    """The probe's fio output as run ``record`` stores it (its round
    :data:`PROBE_ROUND`, read with its outputs), None when it has none (a run on other
    hosts, or one stored before the probe was)."""
    if not record.raw_outputs or any(r.round == PROBE_ROUND for r in record.results):
        return None
    output = record.raw_outputs[PROBE_ROUND]
    return output if {j.name for j in parse(output).jobs} == {PROBE} else None


def measure_seq_write(
    session: Session, target: TargetInfo, active: int, ioengine: str, workdir: Path
) -> SpeedProbe:
    """128 KiB sequential write speed of the target, from a short fio run (its output
    is stored with the run once it is recorded: :data:`PROBE_ROUND`).

    It writes (at most ``SPEED_PROBE_S`` seconds from the start of the active range),
    so it runs before the first purge, after the checks every round gets
    (:class:`volbench.plans.runs.engine.Guard`: the target is still what was checked and not
    in use, and fio reaches it through the descriptor that holds it). Ctrl-C during
    the probe raises KeyboardInterrupt (the run has not been recorded yet).
    """
    probe = Workload(
        PROBE,
        RW.WRITE,
        bs_bytes=WIPC_BS,
        iodepth=32,
        size_bytes=active,
        runtime_s=SPEED_PROBE_S,
    )
    guard = Guard((target,))
    with guard.hold:
        guard.check(writes=True)
        job = JobFile(reach(target.path), (probe,), ioengine, held=reached((target.path,)))
        raw = session.runner.execute(Here(render(job), workdir)).raw
    if raw.interrupted:  # Ctrl-C reached fio, not us: stop here, nothing is recorded yet
        raise KeyboardInterrupt
    if not raw.output.strip():
        raise FioError(f"the sequential write probe failed: {raw.last_error_line or 'no output'}")
    return SpeedProbe(raw, probe_speed(raw.output))


def store_probe(session: Session, run_id: int, probe: SpeedProbe) -> None:
    """Store the probe's fio output with run ``run_id``, as its round
    :data:`PROBE_ROUND` (fio's output verbatim, no result rows), before any cell."""
    raw = probe.raw
    session.store.add_round(
        run_id,
        PROBE_ROUND,
        raw.output,
        (),
        {},
        started_at=utc_text(raw.started_s) if raw.started_s else None,
        ended_at=utc_text(raw.ended_s) if raw.ended_s else None,
    )


def write_cache_state(target: TargetInfo) -> str | None:
    """The write cache of the device under test: known for a block device only (a
    file's writes also pass the page cache; its device's state is not the target's)."""
    return target.write_cache if target.kind == "block" else None


def block_source(target: TargetInfo) -> str:
    """Whose logical block size limits the I/O sizes: the device, or a file's device."""
    if target.kind == "file" and target.device:
        return f"{target.path} (on {target.device})"
    return "one of the targets" if target.kind == "fleet" else target.path


def logical_block_bytes(target: TargetInfo, places: PreparedFleet | None = None) -> int:
    """The logical block size PTS plans for: the target's (on several at once, the
    largest known), 512 bytes where unknown (files on unknown devices, other hosts)."""
    infos = places.infos if places is not None else [target]
    return max((i.logical_block_bytes or 512 for i in infos), default=512)


def fit_target(options: PtsOptions, target: TargetInfo, places: PreparedFleet | None) -> PtsOptions:
    """``options`` fitted to the logical block size of the target (on several at once:
    the largest known), before anything runs; UsageError for what cannot be fitted."""
    logical = logical_block_bytes(target, places)
    fitted = fit_block_size(options, logical, block_source(target))
    misfits = catalog.misfits(fitted, MIN_ACTIVE_BYTES)
    if misfits:
        raise UsageError(
            f"{block_source(target)} has {kib(logical)} logical blocks: PTS cannot "
            f"run {'; '.join(misfits)} on it (leave those tests out)"
        )
    return fitted


def non_compliant_reasons(options: PtsOptions, target: TargetInfo) -> list[str]:
    """Why a run of ``options`` on ``target`` is not PTS-compliant (empty = compliant)."""
    cache = write_cache_reason(options.profile, write_cache_state(target))
    changes = catalog.block_size_changes(options)
    blocks = (
        f"{'; '.join(changes)}: {block_source(target)} has "
        f"{kib(options.logical_block_bytes)} logical blocks"
    )
    return [
        *options.non_compliant_reasons,
        *([blocks] if changes else []),
        *([cache] if cache else []),
    ]


def settings_for(
    options: PtsOptions,
    target: TargetInfo,
    active: int,
    ioengine: str,
    purge_method: str,
    seq_write_bytes_per_s: float = 0.0,
    places: RunSettings | None = None,
) -> RunSettings:
    """What a PTS run records in its settings: everything resume and reports need
    (on several targets at once, ``places``: theirs)."""
    setup = PtsSetup(
        pts=options,
        active_bytes=active,
        purge_method=purge_method if options.purge else "none (--no-purge)",
        preconditioning=catalog.preconditioning(options),
        data_pattern="random (refill_buffers)",
        write_cache=write_cache_state(target) or "unknown",
        seq_write_bytes_per_s=seq_write_bytes_per_s,
    )
    return dataclasses.replace(
        places or RunSettings(),
        ioengine=ioengine,
        non_compliant_reasons=tuple(non_compliant_reasons(options, target)),
        options=json_object(setup),
    )


def start(
    session: Session,
    options: PtsOptions,
    target: TargetInfo,
    labels: Mapping[str, str],
    ioengine: str,
    purge_method: str,
    seq_write_bytes_per_s: float,
    places: PreparedFleet | None,
) -> tuple[int, Path]:
    """Record a new PTS run (nothing runs yet); its id and the folder of its fio files."""
    active = state.active_bytes(options, target.capacity_bytes)
    settings = settings_for(
        options,
        target,
        active,
        ioengine,
        purge_method,
        seq_write_bytes_per_s,
        places.settings if places is not None else None,
    )
    non_compliant = bool(settings.non_compliant_reasons)
    return open_run(session, NAME, target, labels, settings, non_compliant)


def check_places(fleet: Fleet | None, options: PtsOptions, replay: bool) -> None:
    """Refuse, in one line, a PTS run that must purge a target volbench cannot purge
    from here (a target on another host; ``replay``: recorded outputs, nothing is
    purged)."""
    if fleet is None or not fleet.remote or not options.purge or replay:
        return
    if not can_purge(fleet.places):
        raise UsageError(
            "volbench cannot purge a target on another host: purge it there and add "
            "--no-purge (marked non-compliant)"
        )


def begin(
    session: Session,
    options: PtsOptions,
    target: TargetInfo,
    labels: Mapping[str, str],
    ioengine: str | None,
    purging: PurgeSettings,
    places: PreparedFleet | None = None,
) -> Outcome:
    """Start a PTS run: check size, estimate the duration, purge, record, run.

    The estimate uses a short measured 128 KiB sequential write (before the purge;
    on several targets at once, of the first local one; none on other hosts).
    With ``places`` every round runs on all of them at once (``target`` is their
    record, :func:`volbench.plans.placement.fleet_preparation.fleet_target`) and each is purged.
    Block sizes the target cannot do are left out first (:func:`fit_target`).
    """
    options = fit_target(options, target, places)
    active = state.active_bytes(options, target.capacity_bytes)
    if active < MIN_ACTIVE_BYTES:
        raise TargetError(
            f"target {target.path} is too small for PTS: active range {format_bytes(active)} "
            f"({options.active_range_pct}% of {format_bytes(target.capacity_bytes)}), "
            f"the plan needs at least {format_bytes(MIN_ACTIVE_BYTES)}"
        )
    local = places.infos if places is not None else [target]
    remote = places is not None and places.fleet.remote
    engine = ioengine or (REMOTE_ENGINE if remote else session.runner.engine(Path(local[0].path)))
    prepare_runs_dir(session.runs_dir)
    probe = None
    if remote:
        session.reporter.note("no estimate: the sequential write speed of other hosts is unknown")
    else:
        probe = measure_seq_write(session, local[0], active, engine, session.runs_dir / "pts-probe")
        session.reporter.note(estimate_note(options, active, probe.bytes_per_s))
    speed = probe.bytes_per_s if probe is not None else 0.0
    for reason in non_compliant_reasons(options, target):
        session.reporter.note(f"non-compliant with PTS: {reason}")
    method = "none (--no-purge)"
    if options.purge:
        method = _purge_all(session, purging, local)
    run_id, _ = start(session, options, target, labels, engine, method, speed, places)
    if probe is not None:
        store_probe(session, run_id, probe)
    return run(session, run_id, target, purging, purged_already=options.purge, places=places)


def _purge_all(
    session: Session, purging: PurgeSettings, targets: Sequence[TargetInfo], test: str = ""
) -> str:
    """Purge every target; return the methods used, as recorded."""
    methods = []
    for target in targets:
        session.reporter.note(f"{test + ': ' if test else ''}purging {target.path}")
        methods.append(purging.apply(target))
    return ", ".join(dict.fromkeys(methods))


class PtsCourse:
    """A PTS run under way, for the engine: each step is the rest of the next round
    (:func:`state.next_step`), purged first where a test starts; after each step the
    steady-state verdict and the run's ETA are shown.

    The committed results are read once, then each new cell's rows as committed;
    only the rounds after the last complete one are grouped again (grouping the
    whole run after every cell would grow as cells^2)."""

    def __init__(
        self,
        session: Session,
        run_id: int,
        target: TargetInfo,
        purging: PurgeSettings,
        purged_already: bool,
        places: PreparedFleet | None,
        setup: PtsSetup,
        results: Sequence[StoredResult],
    ) -> None:
        self._session = session
        self._run_id = run_id
        self._targets = places.infos if places is not None else [target]
        self._purging = purging
        self._purged_already = purged_already
        self.options = setup.options
        self.active = setup.active_bytes
        self._speed = setup.seq_write_bytes_per_s
        self.rounds: list[StoredRound] = []
        self._open: StoredRound | None = None
        self._pending: list[StoredResult] = list(results)
        self._step: Round | None = None

    def _regroup(self) -> None:
        """Add the committed rows not yet grouped to the complete rounds."""
        if not self._pending:
            return
        tail = [r for c in (self._open.cells.values() if self._open else ()) for r in c.results]
        done, self._open = state.group_rounds([*tail, *self._pending], self.options, self.active)
        self.rounds += done
        self._pending = []

    def next_step(self) -> Step | None:
        self._regroup()
        if self._step is not None:
            self._after(self._step)
        step = self._step = state.next_step(self.options, self.active, self.rounds, self._open)
        if step is None:
            return None
        prepare = None
        if step.purge and self._purged_already:
            self._purged_already = False
        elif step.purge:
            prepare = functools.partial(self._purge, step.test)
        return Step(step.workloads, _describe(step, self.options, self._open), prepare)

    def committed(self, round_no: int, tests: Sequence[TestResult]) -> None:
        self._pending += self._session.store.get_results(self._run_id, from_round=round_no)

    def foreseen(self) -> tuple[Workload, ...]:
        """A guess at the next step's cells, for the engine to start their fio ahead
        (held until their round starts): a whole steady-state round is most often
        followed by the same cells again (else the held fio is killed unused)."""
        step = self._step
        if step is None or step.phase != Phase.SS or self._open is not None:
            return ()
        return step.workloads

    def _purge(self, test: str) -> None:
        method = _purge_all(self._session, self._purging, self._targets, test)
        self._session.reporter.note(f"{test}: purged ({method})")

    def _after(self, step: Round) -> None:
        """What the user learns when a step's cells are committed."""
        if step.phase == Phase.SS and self._open is None:
            history = [r for r in self.rounds if r.test == step.test]
            self._session.reporter.note(_steady_note(step.test, history, self.options))
        if self._speed > 0:
            low, high = remaining(self.options, self.active, self.rounds, self._speed)
            self._session.reporter.note(
                f"run ETA: {format_duration(low)}"
                + (f" to {format_duration(high)}" if high > low + 1 else "")
            )


def run(
    session: Session,
    run_id: int,
    target: TargetInfo,
    purging: PurgeSettings,
    purged_already: bool = False,
    places: PreparedFleet | None = None,
) -> Outcome:
    """Run (or continue) PTS run ``run_id`` until every test is done, on the run
    engine (:func:`volbench.plans.runs.engine.drive`): each cell a fio process of its own,
    committed as it ends.

    ``purged_already``: the target was purged just before the run was recorded
    (to record the method used), so the first round does not purge again.
    ``places``: the run is on several targets at once (see :func:`begin`).
    """
    record = session.store.get_run(run_id, raw=False)
    setup = record.setup(PtsSetup)
    course = PtsCourse(
        session, run_id, target, purging, purged_already, places, setup, record.results
    )
    round_runner: RoundRunner = run_round if places is None else FleetRounds(places.fleet)
    engine = recorded_engine(record)
    workdir = record.logs_dir(session.runs_dir)
    return drive(session, run_id, course, target, engine, workdir, round_runner=round_runner)


def _describe(step: Round, options: PtsOptions, open_round: StoredRound | None) -> str:
    if open_round is not None and open_round.phase == step.phase and open_round.test == step.test:
        return (
            f"{step.test}: {step.phase} round {step.index + 1} goes on after"
            f" {len(open_round.cells)} committed cells ({len(step.workloads)} to run)"
        )
    return catalog.by_name(step.test).describe(step, options)


def _steady_note(test: str, history: list[StoredRound], options: PtsOptions) -> str:
    verdict = state.verdict(test, history)
    if verdict.steady:
        return f"{test}: steady state reached in rounds {_span(verdict.window_rounds)}"
    if not verdict.windows and verdict.rounds_run >= options.max_rounds:
        return f"{test}: steady state not evaluated in {verdict.rounds_run} rounds (needs 5)"
    if not verdict.windows:
        return f"{test}: steady state needs 5 rounds ({verdict.rounds_run} so far)"
    worst = max(
        verdict.windows.items(),
        key=lambda item: item[1].data_excursion / max(item[1].data_limit, 1e-12),
    )
    name, w = worst
    state_text = (
        f"steady state NOT achieved in {verdict.rounds_run} rounds"
        if verdict.rounds_run >= options.max_rounds
        else "not steady yet"
    )
    return (
        f"{test}: {state_text} ({name}: excursion {w.data_excursion / max(w.average, 1e-12):.1%}"
        f" of 20%, slope x4 {w.slope_excursion / max(w.average, 1e-12):.1%} of 10%)"
    )


def _span(rounds: tuple[int, ...]) -> str:
    return f"{rounds[0] + 1}-{rounds[-1] + 1}" if rounds else "-"


def resume(session: Session, record: RunRecord, how: Resuming) -> Outcome:
    """Continue the stored PTS run ``record`` after its last committed round (the same
    loop as a new run's, :func:`run`), on its places made ready again; UsageError when
    its target's logical block size is no longer the one it was planned for."""
    with placed_again(session.reporter, record, True, how) as place:
        planned = record.setup(PtsSetup).options.logical_block_bytes
        if logical_block_bytes(place.target, place.fleet) != planned:
            raise UsageError(
                f"{record.target.path} no longer has the {planned}-byte logical blocks run "
                f"{record.id} was planned for: cannot resume"
            )
        session.store.reopen_run(record.id)
        committed = len({r.round for r in record.results})  # not the probe's: no rows
        session.reporter.note(f"resuming run {record.id} after {committed} committed cells")
        return run(session, record.id, place.target, how.purging, places=place.fleet)
