"""Whether fio had the CPU a test's rate needed: the one test behind the limit verdict
"host CPU" (analysis/limit_rules.py) and the validity mark "starved"
(analysis/validity_starved.py), with its thresholds.

Each sign is a :class:`Shortage`: a sentence with its figures, and the figures by name
for JSON. The signs, and where each threshold comes from:

1. a fio job used :data:`JOB_CPU_PCT` of one core (fio's ``usr_cpu`` + ``sys_cpu`` of
   the job, % of one CPU: fio HOWTO, "Interpreting the output"): a job thread near
   100 % of a core cannot submit or reap faster, whatever the volume does;
2. fio's jobs used :data:`QUOTA_SHARE` of the CPU quota of their cgroup (cpu.max /
   cpu.cfs_quota_us: the kernel's Documentation/scheduler/sched-bwc.rst), or the quota
   throttled the cgroup in :data:`THROTTLED_PCT` of its CFS periods (cpu.stat
   ``nr_throttled`` / ``nr_periods``);
3. all CPUs were :data:`HOST_CPU_PCT` busy on average while fio's threads, wanting a
   CPU (:data:`RUNNABLE_SHARE` per job), waited for one at least as long as they ran
   (:data:`WAIT_SHARE`; run-queue time from ``/proc/PID/task/TID/schedstat``, the
   kernel's Documentation/scheduler/sched-stats.rst); where fio's processes were not
   sampled, all CPUs busy alone (a sign the limit verdict takes, the validity mark does
   not: :attr:`Shortage.seen`).

A host busy with other work whose fio threads still got a CPU when they wanted one is
not short (a busy machine's healthy runs carry no mark: sign 3 needs fio's own waits).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from volbench.model import HostSample

JOB_CPU_PCT = 90.0
"""A fio job at this share of one core (usr + sys) has no CPU left ("near 100 %")."""
QUOTA_SHARE = 0.9
"""fio's jobs at this share of their cgroup's CPU quota (cores) are held by it."""
HOST_CPU_PCT = 90.0
"""All CPUs busy this much on average: the host has no CPU left."""
THROTTLED_PCT = 25.0
"""The CPU quota throttled fio's cgroup in this share of its periods (a quarter of them
ran into the quota): it held fio back."""
WAIT_SHARE = 0.5
"""fio's threads waited for a CPU at least as long as they ran (wait / (run + wait))."""
RUNNABLE_SHARE = 0.5
"""fio's threads wanted a CPU (running or waiting) at least this share of the time per
job: a job that mostly sleeps (waiting for its I/O) is not held by the CPU, however long
each of its few wake-ups waits."""


@dataclass(frozen=True)
class Shortage:
    """One sign that fio was short of CPU: the sentence (with its figures and units)
    and the same figures by name; ``seen``: it rests on fio's own figures (its jobs'
    CPU, its cgroup's quota, its threads' waits), not on the host's CPUs alone (every
    CPU busy where fio's processes were not sampled: a busy host need not have kept fio
    waiting)."""

    sentence: str
    figures: Mapping[str, float] = field(default_factory=dict)
    seen: bool = True


def mean_of(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.fmean(known) if known else None


def fio_load(host: Sequence[HostSample]) -> tuple[float, float] | None:
    """(mean cores fio's processes used, mean threads of them waiting for a CPU) over
    the samples that measured fio; None when none did."""
    measured = [
        (s.fio_cpu_cores, s.fio_wait_threads)
        for s in host
        if s.fio_cpu_cores is not None and s.fio_wait_threads is not None
    ]
    if not measured:
        return None
    return statistics.fmean(c for c, _ in measured), statistics.fmean(w for _, w in measured)


def waited(load: tuple[float, float], numjobs: int, share: float) -> bool:
    """fio's threads wanted a CPU (:data:`RUNNABLE_SHARE` per job) and waited for one
    ``share`` of that time."""
    runnable = load[0] + load[1]
    wanted = runnable >= RUNNABLE_SHARE * max(1, numjobs)
    return wanted and runnable > 0 and load[1] / runnable >= share


def shortages(
    job_cpu_pct: Sequence[float],
    numjobs: int,
    host: Sequence[HostSample] = (),
    quota_cores: float | None = None,
    throttled_pct: float | None = None,
) -> list[Shortage]:
    """Every sign (module docstring) that fio was short of CPU: ``job_cpu_pct`` each
    fio job's usr + sys (% of one CPU), ``host`` the samples taken while it ran,
    ``quota_cores`` the CPU quota of fio's cgroup (None: none) and ``throttled_pct``
    the share of its CFS periods the quota throttled."""
    found = []
    jobs = tuple(job_cpu_pct)
    if jobs and max(jobs) >= JOB_CPU_PCT:
        who = (
            f"fio's {len(jobs)} job" if len(jobs) == 1 else f"the busiest of fio's {len(jobs)} jobs"
        )
        found.append(
            Shortage(
                f"{who} used {max(jobs):.0f}% of a core: add --numjobs, or a larger instance",
                {"job_cpu_pct": max(jobs), "job_cpu_limit_pct": JOB_CPU_PCT},
            )
        )
    load = fio_load(host)
    if quota_cores and jobs and sum(jobs) / 100 >= QUOTA_SHARE * quota_cores:
        found.append(
            Shortage(
                f"fio's jobs used {sum(jobs) / 100:.2f} cores, {sum(jobs) / quota_cores:.0f}% of"
                f" the {quota_cores:g}-core CPU quota of their cgroup",
                {"fio_cores": sum(jobs) / 100, "quota_cores": quota_cores},
            )
        )
    elif quota_cores and throttled_pct is not None and throttled_pct >= THROTTLED_PCT:
        used = f"; fio's processes used {load[0]:.2f} cores" if load else ""
        found.append(
            Shortage(
                f"the {quota_cores:g}-core CPU quota of fio's cgroup throttled it in"
                f" {throttled_pct:.0f}% of its scheduling periods (cpu.stat){used}",
                {"quota_cores": quota_cores, "throttled_pct": throttled_pct},
            )
        )
    busy = mean_of([mean_of(s.cpu_busy_pct) for s in host])
    if busy is not None and busy >= HOST_CPU_PCT:
        if load is None:
            found.append(
                Shortage(
                    f"all CPUs were {busy:.0f}% busy on average",
                    {"cpu_busy_pct": busy},
                    seen=False,
                )
            )
        elif waited(load, numjobs, WAIT_SHARE):
            share = load[1] / (load[0] + load[1])
            found.append(
                Shortage(
                    f"all CPUs were {busy:.0f}% busy on average and fio's threads waited for"
                    f" a CPU {share:.0%} of the time they could run ({load[1]:,.2f} threads"
                    f" waiting, {load[0]:,.2f} cores running; schedstat)",
                    {
                        "cpu_busy_pct": busy,
                        "fio_wait_share": share,
                        "fio_cores": load[0],
                        "fio_wait_threads": load[1],
                    },
                )
            )
    return found
