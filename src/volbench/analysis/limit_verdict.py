"""Limit verdicts: what set a test's figure, with the evidence in numbers.

Pure functions over typed inputs: the test's figures (fio), the host and device
samples taken while it ran (:class:`volbench.model.HostSample`), the same workload at
other queue depths in the run, a buffered test's direct twin, and the drive's
temperature before and after.
The rules (:mod:`volbench.analysis.limit_rules`, with their thresholds), in the order
that decides (the first that holds is the verdict; every other that holds is
listed in ``also``):

1. stall: fio completed nothing, its stall watch recorded a stall (fio/stall.py:
   5 s without a completion while I/O was outstanding), or the device completed
   nothing for :data:`STALL_S` seconds in a row with requests in flight.
2. cache: a buffered test reached :data:`CACHE_GAP` x its direct twin (the Azure VM
   disk post "虚拟机存储性能-磁盘篇": host cache turned 480 write IOPS into 12,500),
   or its mean latency is below the lowest the target's kind can give (longhorn/kbench
   README: distributed storage with lower read latency than local storage "is most
   likely due to there is a cache"), or the same region read again went
   :data:`FIRST_TOUCH_GAP` x faster (a first-touch penalty: the AWS EBS user guide,
   "Initialize Amazon EBS volumes", up to 50 % lower performance on first access).
3. device, thermal: the drive's temperature reached its own warning (else critical)
   threshold, or it counted thermal-management transitions during the test.
4. host CPU: a fio job used :data:`JOB_CPU_PCT` of a core (fio's usr_cpu + sys_cpu,
   % of one CPU); fio's jobs used :data:`QUOTA_SHARE` of their cgroup's CPU quota, or
   the quota throttled the cgroup in :data:`THROTTLED_PCT` of its CFS periods
   (cpu.stat: the kernel's sched-bwc.rst); or all CPUs were :data:`HOST_CPU_PCT` busy
   while fio's threads, wanting a CPU (:data:`RUNNABLE_SHARE`), waited for one at
   least as long as they ran (:data:`WAIT_SHARE`, run-queue time from schedstat; where
   fio's processes were not sampled, all CPUs busy alone). kbench asks for at least
   40 % CPU idleness in latency tests (:data:`IDLE_MIN_PCT`); below it, a note. Where
   a neighbour with fewer jobs (same queue depth) did as well, "more jobs did not
   help" is added.
5. rate limiter: the test's per-second series held a burst ceiling, then a lower
   baseline, both steady (analysis/burst_series.py: a credit bucket drained; a burst
   whose plateaus vary more is a note: a device's write cliff looks so too); the throttle
   fingerprint (analysis/throttle.py) over this test and its neighbours finds a cap and
   this test is on its plateau; a QD 1 test and a deeper one of the same workload ran
   at the same IOPS (:data:`PACED_MATCH`; after a burst, its baseline) with the deeper
   queue kept full, latency growing as Little's law says for a fixed rate (a limiter
   paces the I/O; a device that can serve only one I/O at a time would look the same,
   which no SSD, network volume or disk with NCQ is); a mixed test's reads or writes
   are within :data:`CAP_MATCH` of a cap of their own direction (a cgroup's, a
   promise's, or the read-only or write-only test of the same workload in the run,
   analysis/run_limits.py); or the IOPS or
   bandwidth is within :data:`CAP_MATCH` of a known cap (the AWS EBS user guide,
   "Amazon EBS optimization": volumes deliver at least 90 % of their provisioned
   IOPS); or fio kept I/Os in flight that the device never saw (the device's mean
   queue, iostat's aqu-sz, at most :data:`ABOVE_DEVICE_SHARE` of fio's, busy under
   50 %, fio's threads not short of CPU: :data:`CPU_STARVED_SHARE`): they waited
   above it. Known caps the figure stayed under are named beside the evidence.
6. queue: Little's law (analysis/littles_law.py) finds fewer I/Os in flight than
   configured; or one I/O in flight at a time; or a neighbour with more queue gave
   more IOPS; or more queue only raised latency at the same IOPS (the saturation
   sentence of analysis/scaling.py, the UCloud RSSD post's 0.6 ms -> 19.7 ms).
7. device: busy :data:`DEVICE_BUSY_PCT` of the time while latency rose with queue
   depth and IOPS did not flatten (iostat(1): %util near 100 % saturates a device
   that serves requests serially, not one that serves them in parallel, hence the
   queue-depth evidence).
8. not determined, saying which measurement would separate the causes.

Caps fitted to the volume by a limits run (analysis/fitted_caps.py) are known caps of
rule 5; the device's own ceiling it measured where it found no limiter is a rule of its
own, before queue (at it, more queue would not help). A test under a fitted cap, whatever
its verdict, has a note that the limiter did not bind (a busy machine keeping a guest
under its cap).
"""

from __future__ import annotations

from volbench.analysis.limit_evidence import Context, Limit, MeasuredTest, Verdict, fmt_rate
from volbench.analysis.limit_rules import IDLE_MIN_PCT, MEMORY_PSI_PCT, RULES, applicable, mean_of
from volbench.analysis.limiter_signs import CAP_MATCH


def _open_questions(test: MeasuredTest, ctx: Context) -> list[str]:
    seen = []
    if test.job_cpu_pct:
        seen.append(f"fio's busiest job used {max(test.job_cpu_pct):.0f}% of a core")
    busy = mean_of([s.device_busy_pct for s in ctx.host])
    if busy is not None:
        seen.append(f"the device was busy {busy:.0f}% of the time")
    todo = []
    if not ctx.host:
        todo.append("sample the host and device while it runs (CPU and device busy)")
    if len(ctx.neighbours) < 2:
        todo.append(
            "run the workload at 2 or more other queue depths: a rate limiter keeps IOPS flat"
            " (latency +1/cap per queued I/O), a device's IOPS still rise with latency"
        )
    return ["; ".join(seen) or "no figure points to one cause"] + [f"to tell: {t}" for t in todo]


def _notes(test: MeasuredTest, ctx: Context, limit: Limit) -> list[str]:
    notes = []
    busy = mean_of([mean_of(s.cpu_busy_pct) for s in ctx.host])
    if busy is not None and 100 - busy < IDLE_MIN_PCT and limit is not Limit.HOST_CPU:
        notes.append(
            f"CPUs were {100 - busy:.0f}% idle, under the {IDLE_MIN_PCT:.0f}% kbench asks"
            " for latency figures: CPU waits may be in the latency"
        )
    memory = mean_of([s.memory_some_pct for s in ctx.host])
    if memory is not None and memory >= MEMORY_PSI_PCT:
        notes.append(f"tasks waited for memory {memory:.0f}% of the time (PSI)")
    if limit is not Limit.RATE_LIMITER:
        held = (
            "what held it is not determined"
            if limit is Limit.NOT_DETERMINED
            else f"{limit} held it"
        )
        notes += [
            f"{fmt_rate(value, unit)} is {value / cap_value:.0%} of"
            f" {cap.phrase(fmt_rate(cap_value, unit))}: the limiter did not bind, {held}"
            for cap, value, cap_value, unit, _ in applicable(test, ctx)
            if cap.fitted and cap.kind == "cap" and value < (1 - CAP_MATCH) * cap_value
        ]
    burst = ctx.burst
    if burst is not None and not burst.steady:
        notes.append(
            f"{burst.sentence()}; its plateaus vary {burst.spread:.0%} a second, more than a"
            " limiter's: a device's write cliff (its cache full, garbage collection) as likely"
            " as a credit bucket"
        )
    return notes


def verdict(test: MeasuredTest, context: Context | None = None) -> Verdict:
    """The limit verdict of ``test`` with its evidence (see the module docstring)."""
    ctx = context or Context()
    held = [(limit, found) for limit, rule in RULES if (found := rule(test, ctx))]
    if not held:
        limit, evidence = Limit.NOT_DETERMINED, _open_questions(test, ctx)
    else:
        limit, evidence = held[0]
    also = tuple(dict.fromkeys(other for other, _ in held[1:] if other is not limit))
    return Verdict(limit, tuple(evidence + _notes(test, ctx, limit)), also)
