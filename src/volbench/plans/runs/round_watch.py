"""What is watched while a round runs, for the limit verdicts: stored with the round.

The engine starts a :class:`RoundWatch` before each fio process of a plan and the
round's commit takes its series (:mod:`volbench.analysis.host_series`): the host and
the target's disk once a second (targets/sampler.py: per-CPU busy, the disk's busy
time and in-flight requests, PSI, fio's processes' CPU and run-queue wait), the CPU
quota and block I/O caps of the cgroup volbench and fio run in, how often that quota
throttled it (targets/cgroup_limits.py), and the drive's temperature and health
before and after (targets/smart.py; loop, zram and other virtual devices have none,
and a drive that gave nothing once is not asked again).

Runs on several places at once are not watched here (the local host is not where
their fio runs): rounds on other hosts are watched through a channel to each host
(plans/runs/remote_watch.py). ``VOLBENCH_SAMPLER=off`` turns the watch off
(bench/sampler_pts.py measures its cost with it).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Protocol

from volbench.analysis.host_series import fact_series, health_series, sample_series
from volbench.model import HostSample, LogSeries, TargetInfo
from volbench.targets import cgroup_limits, smart
from volbench.targets.kernel_counters import disk_of
from volbench.targets.sampler import Sampler

SWITCH = "VOLBENCH_SAMPLER"
_NO_HEALTH: set[str] = set()
"""Drives that gave no health reading in this process: not asked again."""


def enabled(environ: Mapping[str, str] = os.environ) -> bool:
    return environ.get(SWITCH, "").lower() not in ("off", "0", "no")


def health_values(reading: smart.DriveHealth) -> dict[str, float | None]:
    """A drive's reading as the values of the stored health kinds."""

    def number(value: float | int | bool | None) -> float | None:
        return None if value is None else float(value)

    return {
        "temp_c": number(reading.temperature_c),
        "temp_warn": number(reading.warning_c),
        "temp_crit": number(reading.critical_c),
        "thm_trans": number(reading.thermal_transitions),
        "smart_ok": number(reading.passed),
        "crit_warn": number(reading.critical_warning),
        "media_err": number(reading.media_errors),
        "pct_used": number(reading.percent_used),
    }


class Watch(Protocol):
    """What watches a round while it runs: :class:`RoundWatch` on this machine,
    :class:`volbench.plans.runs.remote_watch.RemoteWatch` on other hosts."""

    def start(self) -> None: ...
    def take(self, round_no: int, test: str) -> list[LogSeries]: ...
    def stop(self) -> None: ...


class RoundWatch:
    """Samples one round (see the module docstring): :meth:`start` before fio starts,
    :meth:`take` when it has ended (the first call stops the sampling)."""

    def __init__(self, target: TargetInfo) -> None:
        self.device = disk_of(target.path) if target.kind in ("file", "block") else None
        self._sampler = Sampler(self.device, parent=os.getpid())
        self._started_s = 0.0
        self._health: list[tuple[float, dict[str, float | None]]] = []
        self._hierarchies: cgroup_limits.Hierarchies | None = None
        self._quota: cgroup_limits.CpuQuota | None = None
        self._stat_before: cgroup_limits.CpuStat | None = None
        self._facts: dict[str, float | None] = {}
        self._samples: tuple[HostSample, ...] | None = None

    def _read_health(self) -> None:
        if self.device is None or self.device in _NO_HEALTH:
            return
        reading = smart.read_health(self.device)
        if reading is None:
            _NO_HEALTH.add(self.device)
            return
        self._health.append((time.time(), health_values(reading)))

    def start(self) -> None:
        self._read_health()
        found = self._hierarchies = cgroup_limits.hierarchies()
        self._quota = cgroup_limits.cpu_quota(found)
        self._stat_before = cgroup_limits.cpu_stat(self._quota, found) if self._quota else None
        facts: dict[str, float | None] = {
            "cpu_quota": self._quota.cores if self._quota else None,
            "dev_hwq": self._sampler.hw_queues,
        }
        devnum = cgroup_limits.device_number(self.device) if self.device else None
        if devnum is not None:
            caps = cgroup_limits.io_caps(devnum, found)
            facts.update(
                cap_riops=caps.read_iops,
                cap_wiops=caps.write_iops,
                cap_rbps=caps.read_bps,
                cap_wbps=caps.write_bps,
            )
        self._facts = facts
        self._started_s = time.time()
        self._sampler.start()

    def _finish(self) -> tuple[HostSample, ...]:
        samples = self._sampler.stop(final=True)
        elapsed = time.time() - self._started_s
        if self._quota is not None and self._stat_before is not None and self._hierarchies:
            after = cgroup_limits.cpu_stat(self._quota, self._hierarchies)
            if after is not None:
                before = self._stat_before
                self._facts["cg_period"] = after.periods - before.periods
                self._facts["cg_thrott"] = after.throttled - before.throttled
                if after.usage_ns is not None and before.usage_ns is not None and elapsed > 0:
                    self._facts["cg_usage"] = (after.usage_ns - before.usage_ns) / 1e9 / elapsed
        if self._health:
            self._read_health()
        return samples

    def take(self, round_no: int, test: str) -> list[LogSeries]:
        """The round's series, named ``test`` (the sampling stops at the first call)."""
        if self._samples is None:
            self._samples = self._finish()
        return [
            *sample_series(round_no, test, self._samples),
            *fact_series(round_no, test, self._started_s, self._facts),
            *health_series(round_no, test, self._health),
        ]

    def stop(self) -> None:
        """Stop sampling when the round ended without a commit."""
        if self._samples is None:
            self._samples = self._finish()


def watch_for(target: TargetInfo) -> RoundWatch | None:
    """A watch of a round on ``target``; None when watching is off or the run is on
    several places at once. The files and devices a job file names (kind ``files``) are
    all on this machine: its host is sampled, no device."""
    if not enabled() or target.kind not in ("file", "block", "files"):
        return None
    return RoundWatch(target)
