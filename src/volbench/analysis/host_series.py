"""Host and device samples of a round as stored series, and back.

The samples taken while a round ran (targets/sampler.py), the limits of the cgroup
fio ran in (targets/cgroup_limits.py) and the drive's health before and after it
(targets/smart.py) are stored with the round as extra kinds of the ``series`` table
(:class:`volbench.model.LogSeries`): direction :data:`DIRECTION`, times in Unix-epoch
ms, one job per series except ``cpu`` (job = the CPU's number). Kinds and units are
in :data:`KINDS`. fio's own logs never use this direction, so readers of fio's logs
leave these out (:func:`is_host`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from volbench.model import HostSample, LogSeries
from volbench.targets.smart import DriveTemperatures

DIRECTION = "host"

SAMPLE_KINDS = {
    "cpu": ("cpu_busy_pct", "% busy"),
    "dev_busy": ("device_busy_pct", "% busy"),
    "dev_flight": ("in_flight", "requests"),
    "dev_iops": ("iops", "IOPS"),
    "dev_queue": ("queue_length", "requests (mean)"),
    "dev_rbps": ("read_bytes_per_s", "bytes/s"),
    "dev_wbps": ("write_bytes_per_s", "bytes/s"),
    "mem_some": ("memory_some_pct", "% (PSI avg10)"),
    "mem_full": ("memory_full_pct", "% (PSI avg10)"),
    "io_some": ("io_some_pct", "% (PSI avg10)"),
    "io_full": ("io_full_pct", "% (PSI avg10)"),
    "fio_cpu": ("fio_cpu_cores", "cores"),
    "fio_top": ("fio_busiest_pct", "% of a core (busiest thread)"),
    "fio_wait": ("fio_wait_threads", "threads"),
}
"""Per-second kinds: the :class:`~volbench.model.HostSample` field each holds, and its unit."""

ROUND_KINDS = {
    "cpu_quota": "cores",
    "cg_period": "CFS periods",
    "cg_thrott": "CFS periods throttled",
    "cg_usage": "cores",
    "cap_riops": "IOPS",
    "cap_wiops": "IOPS",
    "cap_rbps": "bytes/s",
    "cap_wbps": "bytes/s",
    "dev_hwq": "hardware queues",
}
"""Once per round (one point at its start): the cgroup's CPU quota, its CFS periods
and those throttled during the round, its CPU use, the block I/O caps on the target's
device, and the device's hardware queue count."""

HEALTH_KINDS = {
    "temp_c": "°C",
    "temp_warn": "°C",
    "temp_crit": "°C",
    "thm_trans": "transitions",
    "smart_ok": "1 passed, 0 failed",
    "crit_warn": "bits",
    "media_err": "errors",
    "pct_used": "%",
}
"""The drive's health before and after the round (one point each)."""

KINDS = {
    **{kind: unit for kind, (_, unit) in SAMPLE_KINDS.items()},
    **ROUND_KINDS,
    **HEALTH_KINDS,
}
"""The unit of every host kind."""


def is_host(series: LogSeries) -> bool:
    return series.direction == DIRECTION


class Timed(Protocol):
    """A host sample (targets/sampler.py's ``HostSample``)."""

    @property
    def time_s(self) -> float: ...
    @property
    def cpu_busy_pct(self) -> tuple[float, ...]: ...


def _ms(time_s: float) -> int:
    return round(time_s * 1000)


def sample_series(round_no: int, test: str, samples: Sequence[Timed]) -> list[LogSeries]:
    """The series of per-second ``samples`` (a kind no sample has is left out)."""
    found = []
    cpus = max((len(s.cpu_busy_pct) for s in samples), default=0)
    for cpu in range(cpus):
        points = tuple(
            (_ms(s.time_s), float(s.cpu_busy_pct[cpu]))
            for s in samples
            if cpu < len(s.cpu_busy_pct)
        )
        found.append(LogSeries(round_no, test, "cpu", cpu, None, DIRECTION, points))
    for kind, (name, _) in SAMPLE_KINDS.items():
        if kind == "cpu":
            continue
        points = tuple(
            (_ms(s.time_s), value) for s in samples if (value := getattr(s, name, None)) is not None
        )
        if points:
            found.append(LogSeries(round_no, test, kind, 0, None, DIRECTION, points))
    return found


def fact_series(
    round_no: int, test: str, time_s: float, facts: Mapping[str, float | None]
) -> list[LogSeries]:
    """One point per known fact of :data:`ROUND_KINDS` (None: not known, left out)."""
    return [
        LogSeries(round_no, test, kind, 0, None, DIRECTION, ((_ms(time_s), value),))
        for kind, value in facts.items()
        if value is not None and kind in ROUND_KINDS
    ]


def health_series(
    round_no: int, test: str, readings: Sequence[tuple[float, Mapping[str, float | None]]]
) -> list[LogSeries]:
    """The drive's readings (time, values of :data:`HEALTH_KINDS`) as one series a kind."""
    points: dict[str, list[tuple[int, float]]] = {}
    for time_s, values in readings:
        for kind, value in values.items():
            if value is not None and kind in HEALTH_KINDS:
                points.setdefault(kind, []).append((_ms(time_s), value))
    return [
        LogSeries(round_no, test, kind, 0, None, DIRECTION, tuple(found))
        for kind, found in points.items()
    ]


@dataclass(frozen=True)
class RoundHost:
    """What was sampled while one round ran (from its stored series)."""

    readings: tuple[HostSample, ...] = ()
    facts: dict[str, float] = field(default_factory=dict)
    health: dict[str, tuple[float, ...]] = field(default_factory=dict)
    """Each health kind's values in time order (before, after)."""

    @property
    def cpu_quota_cores(self) -> float | None:
        return self.facts.get("cpu_quota")

    @property
    def throttled_pct(self) -> float | None:
        """Share (%) of the cgroup's CFS periods in which its quota throttled it."""
        periods = self.facts.get("cg_period")
        if not periods or "cg_thrott" not in self.facts:
            return None
        return 100.0 * self.facts["cg_thrott"] / periods

    def temperatures(self) -> DriveTemperatures | None:
        """The drive's temperatures before and after (None: it reported none)."""
        temps = self.health.get("temp_c", ())
        if not temps:
            return None
        counts = self.health.get("thm_trans", ())
        events = int(counts[-1] - counts[0]) if len(counts) >= 2 else None
        return DriveTemperatures(
            before_c=temps[0] if len(temps) >= 2 else None,
            after_c=temps[-1],
            warning_c=(self.health.get("temp_warn") or (None,))[-1],
            critical_c=(self.health.get("temp_crit") or (None,))[-1],
            throttle_events=events,
        )


_FIELDS = {kind: name for kind, (name, _) in SAMPLE_KINDS.items()}


def round_hosts(series: Iterable[LogSeries]) -> dict[int, RoundHost]:
    """Every round's :class:`RoundHost` from a run's stored series: the samples of the
    one host the round ran on (this machine's, or one other host's: ``LogSeries.host``).
    A round sampled on several hosts at once (a run on two ``--hosts``) is left out,
    as are rounds without host series: one host's CPU and disk do not explain the
    sum of several (each host's own: :func:`hosts_of_rounds`)."""
    found: dict[int, RoundHost] = {}
    shared: set[int] = set()
    for (round_no, _), host in sorted(hosts_of_rounds(series).items()):
        if round_no in found:
            shared.add(round_no)
        found[round_no] = host
    return {r: h for r, h in found.items() if r not in shared}


def hosts_of_rounds(series: Iterable[LogSeries]) -> dict[tuple[int, str], RoundHost]:
    """Every round's :class:`RoundHost` per host it was sampled on, by (round, host
    name; "" for this machine)."""
    samples: dict[tuple[int, str], dict[int, dict[str, object]]] = {}
    cpus: dict[tuple[int, str, int], dict[int, float]] = {}
    facts: dict[tuple[int, str], dict[str, float]] = {}
    health: dict[tuple[int, str], dict[str, list[tuple[int, float]]]] = {}
    keys: set[tuple[int, str]] = set()
    for s in series:
        if not is_host(s):
            continue
        key = (s.round, s.host or "")
        keys.add(key)
        if s.kind == "cpu":
            for t, v in s.points:
                cpus.setdefault((*key, t), {})[s.job] = float(v)
                samples.setdefault(key, {}).setdefault(t, {})
        elif s.kind in _FIELDS:
            for t, v in s.points:
                value = int(v) if s.kind == "dev_flight" else float(v)
                samples.setdefault(key, {}).setdefault(t, {})[_FIELDS[s.kind]] = value
        elif s.kind in ROUND_KINDS and s.points:
            facts.setdefault(key, {})[s.kind] = float(s.points[0][1])
        elif s.kind in HEALTH_KINDS:
            health.setdefault(key, {}).setdefault(s.kind, []).extend(
                (t, float(v)) for t, v in s.points
            )
    found = {}
    for key in sorted(keys):
        readings = []
        for t, values in sorted(samples.get(key, {}).items()):
            busy = cpus.get((*key, t), {})
            shares = tuple(busy[c] for c in sorted(busy))
            readings.append(HostSample(time_s=t / 1000, cpu_busy_pct=shares, **values))  # type: ignore[arg-type]
        found[key] = RoundHost(
            tuple(readings),
            facts.get(key, {}),
            {k: tuple(v for _, v in sorted(p)) for k, p in health.get(key, {}).items()},
        )
    return found
