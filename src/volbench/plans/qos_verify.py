"""Verifying a QoS plan: one fio per tenant, all at once, each inside its own cgroup.

The plan's limits are applied as cgroups ``volbench-<tenant>`` (and
``volbench-<plan id>-host`` with the host reserve when asked); every tenant's fio starts
inside its cgroup at the same moment and drives the device harder than its
limit (a deep queue), so each tenant measures what its allocation delivers under
contention. Each tenant's fio output is stored verbatim as one round of the run
(round number = tenant order), and the cgroups are removed afterwards whatever
happened.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from volbench.analysis.aggregate import group_tests
from volbench.analysis.qos import QosPlan
from volbench.analysis.qos_document import plan_document
from volbench.analysis.qos_results import PLAN, VerifyResult, check_run, planned_iops
from volbench.errors import FioError, RunFailed, UsageError, VolbenchError
from volbench.fio.concurrent import ConcurrentJob, run_concurrently
from volbench.fio.executable import best_engine, fio_version
from volbench.fio.job import JobFile, render
from volbench.fio.live import LiveSample, LiveSampler
from volbench.fio.parser import parse
from volbench.fio.stall import StallWatch, stall_reason
from volbench.model import RW, RunStatus, Stall, Workload
from volbench.plans.execution import (
    Session,
    new_workdir,
    os_failure,
    prepare_runs_dir,
    workload_record,
)
from volbench.plans.preparation import prepare_target
from volbench.plans.qos_setup import device_number, plan_id, require_room, tenant_limits
from volbench.plans.reporter import Reporter
from volbench.store.heartbeat import Heartbeat
from volbench.targets import cgroup
from volbench.targets.host import collect_host


@dataclass(frozen=True)
class VerifyOptions:
    """How to verify: workload per tenant (``rw``, block size in bytes, queue depth),
    fio runtime in seconds, and the tolerance in percent of the planned IOPS.

    ``quiet`` tenants ask for exactly their planned IOPS (fio ``rate_iops``) while
    the others (noisy) ask for as much as their queue depth gets: isolation holds
    when the quiet ones still get what they asked for. ``nominal_sizes``: the
    tenants' sizes are proportions, not checked against the device's capacity."""

    duration_s: float = 3.0
    rw: RW = RW.RANDREAD
    bs_bytes: int = 4096
    iodepth: int = 16
    with_host: bool = False
    tolerance_pct: float = 10.0
    ioengine: str | None = None
    destroy_data: str | None = None
    quiet: tuple[str, ...] = ()
    nominal_sizes: bool = False


def verify(
    session: Session,
    plan: QosPlan,
    device: str,
    options: VerifyOptions,
    labels: Mapping[str, str],
) -> VerifyResult:
    """Apply ``plan`` on ``device``, run every tenant concurrently, store and compare."""
    cgroup.require_root()
    hierarchy = cgroup.find_hierarchy()
    devnum = device_number(device)
    require_room(plan, device, options.nominal_sizes)
    info = prepare_target(
        device, options.rw.writes, session.reporter, destroy_data=options.destroy_data
    )
    limits = tenant_limits(plan, options.with_host)
    unknown = sorted(set(options.quiet) - {a.tenant.name for a in plan.allocations})
    if unknown:
        raise UsageError(f"--quiet {unknown[0]}: the plan has no tenant of that name")
    engine = options.ioengine or best_engine(Path(info.path))
    written = cgroup.apply(hierarchy, devnum, limits, plan_id(plan))
    try:
        settings: dict[str, Any] = {
            "qos_plan": plan_document(plan),
            "verify": {**asdict(options), "rw": options.rw.value},
            "cgroup": {"version": hierarchy.version, "root": str(hierarchy.root)},
            "written": [asdict(w) for w in written],
            "device": devnum,
            "ioengine": engine,
            "logs_dir": str(new_workdir(session.runs_dir)),
        }
        host = collect_host(fio_version())
        prepare_runs_dir(session.runs_dir)
        run_id = session.store.create_run(PLAN, info, host, labels, settings)
        try:
            with Heartbeat(session.store, run_id):
                workdir = Path(settings["logs_dir"])
                _run(session, run_id, hierarchy, limits, info.path, engine, options, workdir)
        except VolbenchError as exc:
            session.store.finish_run(run_id, RunStatus.FAILED, str(exc))
            raise type(exc)(f"{exc} (run {run_id} stored as failed)") from exc
        except OSError as exc:
            failure = os_failure(exc, session.runs_dir)
            session.store.finish_run(run_id, RunStatus.FAILED, str(failure))
            raise RunFailed(f"{failure} (run {run_id} stored as failed)") from exc
        except KeyboardInterrupt:  # the fio processes got SIGINT and have ended
            session.store.finish_run(run_id, RunStatus.INTERRUPTED, "interrupted by the user")
            raise
        session.store.finish_run(run_id, RunStatus.COMPLETED)
    finally:
        cgroup.remove([hierarchy.path(limit.cgroup) for limit in limits])
    return check_run(session.store.get_run(run_id))


class LiveTenants:
    """The live display of all tenants at once (their last per-second figures added
    up) and each tenant's stall watch (:mod:`volbench.fio.stall`)."""

    def __init__(
        self,
        reporter: Reporter,
        watches: Sequence[StallWatch] = (),
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._reporter = reporter
        self._clock = clock
        self._samplers: dict[int, LiveSampler] = {}
        self._latest: dict[int, LiveSample] = {}
        self._watches = list(watches)
        self._lock = threading.Lock()

    def stalls(self, now_s: float) -> list[Stall]:
        """Every stall of every tenant, once all fio processes have ended."""
        with self._lock:
            return [stall for watch in self._watches for stall in watch.finish(now_s)]

    def status(self, index: int, document: dict[str, Any]) -> None:
        with self._lock:
            if index < len(self._watches):
                for stall in self._watches[index].status(self._clock(), document):
                    self._reporter.note(f"warning: {stall_reason(stall)} (I/O outstanding)")
            sample = self._samplers.setdefault(index, LiveSampler()).sample(document)
            if sample is None:
                return
            self._latest[index] = sample
            self._reporter.sample(
                LiveSample(
                    f"{len(self._latest)} tenants",
                    sum(s.iops for s in self._latest.values()),
                    sum(s.bw_bytes_per_s for s in self._latest.values()),
                    None,
                    sample.interval_s,
                )
            )


def _direction(limit: cgroup.Limits, rw: RW) -> tuple[int, int]:
    """(IOPS, bytes/s) limits of the direction ``rw`` drives."""
    return (limit.write_iops, limit.write_bps) if rw.writes else (limit.read_iops, limit.read_bps)


def _run(
    session: Session,
    run_id: int,
    hierarchy: cgroup.Hierarchy,
    limits: Sequence[cgroup.Limits],
    target: str,
    engine: str,
    options: VerifyOptions,
    workdir: Path,
) -> None:
    """Start every tenant's fio in its cgroup (its files in ``workdir``) and store each
    output as a round."""
    workloads = []
    jobs = []
    for limit in limits:
        quiet = limit.tenant in options.quiet
        workload = Workload(
            limit.tenant,
            options.rw,
            bs_bytes=options.bs_bytes,
            iodepth=options.iodepth,
            runtime_s=options.duration_s,
            ioengine=engine,
            rate_iops=(
                max(1, round(planned_iops(*_direction(limit, options.rw), options.bs_bytes)))
                if quiet
                else None
            ),
        )
        log_dir = workdir / limit.tenant
        log_dir.mkdir(parents=True, exist_ok=True)

        def join(group: str = limit.cgroup) -> None:  # runs in the child, before exec
            cgroup.join(hierarchy, group, os.getpid())

        workloads.append(workload)
        jobs.append(
            ConcurrentJob(render(JobFile(target, (workload,), engine, log_dir)), log_dir, join)
        )
    session.reporter.note(f"run {run_id}: {len(jobs)} fio processes at once, logs in {workdir}")
    session.reporter.round_started(0, workloads, options.duration_s)
    started = time.time()
    live = LiveTenants(
        session.reporter,
        [
            StallWatch(n, started, w.name, session.stall.seconds, planned_s={w.name: w.duration_s})
            for n, w in enumerate(workloads)
        ],
    )
    try:
        raws = run_concurrently(jobs, options.duration_s + 60, live.status)
    finally:
        session.store.add_stalls(run_id, live.stalls(time.time()))
    for round_no, (workload, raw) in enumerate(zip(workloads, raws, strict=True)):
        if not raw.output.strip():
            raise FioError(
                f"fio of tenant {workload.name} failed with exit code {raw.returncode}: "
                f"{raw.last_error_line or 'no output'}"
            )
        tests = group_tests(parse(raw.output))
        session.store.add_round(
            run_id, round_no, raw.output, tests, {workload.name: workload_record(workload)}
        )
        failed = [t for t in tests if t.error]
        if failed or raw.returncode != 0:
            raise FioError(
                f"fio of tenant {workload.name} failed: {raw.last_error_line or 'see its log'}"
            )
    session.reporter.round_done(0, [])
