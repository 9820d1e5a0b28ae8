"""What every validity check reads of one stored test (:class:`TestFacts`), and what is
known of the place from outside the run (:class:`Known`): pure data, built from a
stored run by :mod:`volbench.analysis.run_validity`.

A check that needs more adds it here, as a field with a default (None: not known), and
says in its own module where the service takes it from; a check whose data a test lacks
says so (:class:`volbench.analysis.validity.Checked` ``unchecked``), it does not guess.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from volbench.analysis.device_window import DeviceCount
from volbench.analysis.limit_evidence import SEQUENTIAL, MeasuredTest
from volbench.analysis.written_ranges import RunWrites, Written
from volbench.model import HostSample, StoredResult, StoredWorkload, TargetInfo


@dataclass(frozen=True)
class FrontCache:
    """A cache in front of the volume that the run records: what it is (``what``, for
    a sentence: "QEMU's cache=writeback on the guest's disk: the host's page cache"),
    its mode as recorded and its size in bytes (None: not known)."""

    what: str
    mode: str
    size_bytes: int | None = None


@dataclass(frozen=True)
class Known:
    """What the run alone does not say, given by the view that asks: the lowest mean
    latency the place's medium can give (ns) and where that figure comes from (a
    catalogue product's stated latency: the limit verdict's cache rule takes half of
    its least, check_sheets.check_limits); ``volume``: the runs stored on its volume up
    to it (:func:`volbench.volume_writes.volume_history`, for the "blocks never written"
    check), ``volume_known`` whether the view asked the store (not: that check is not
    run)."""

    medium_floor_ns: float | None = None
    medium: str | None = None
    volume: tuple[RunWrites, ...] | None = None
    volume_known: bool = False


@dataclass(frozen=True)
class TestFacts:
    """One stored test as the checks read it.

    ``rows``: fio's figures, one stored row per direction; ``workload`` what fio was
    asked (an imported output: what it states); ``target`` and ``memory_bytes`` (of the
    host fio ran on; None: not known) where it ran; ``imported``: from a fio output
    volbench did not run (no samples, no logs).

    ``device``: the device's counters and fio's over the same seconds
    (analysis/device_window.py), or ``device_note`` saying why there are none;
    ``host``: the host samples whose whole second lies inside the test's timed part
    (its round's, where the part cannot be placed), or ``host_note`` saying why there
    are none; ``sampled``: the round was sampled at all;
    ``cpu_quota_cores`` and ``throttled_pct``: the CPU quota of fio's cgroup and the
    share of its periods it throttled (None: none, not read).

    ``rates``: the test's per-second IOPS (fio's logs, every job and direction added,
    window end in s since the timed part began), or ``rates_note`` saying why there are
    none; ``measured``: the figures the limit verdicts read (fio's job CPU among them);
    ``front_cache``: a cache in front of the volume the run records; ``known``: what the
    view knows of the place; ``written``: what was written on the volume before the
    test's round, from ``known.volume``."""

    round: int
    test: str
    rows: tuple[StoredResult, ...]
    workload: StoredWorkload
    target: TargetInfo
    measured: MeasuredTest
    memory_bytes: int | None = None
    imported: bool = False
    device: DeviceCount | None = None
    device_note: str | None = None
    host: tuple[HostSample, ...] = ()
    host_note: str | None = None
    sampled: bool = False
    cpu_quota_cores: float | None = None
    throttled_pct: float | None = None
    rates: tuple[tuple[float, float], ...] = ()
    rates_note: str | None = None
    front_cache: FrontCache | None = None
    known: Known = field(default_factory=Known)
    written: Written | None = None
    """What was written on the volume before the test's round (None: not known)."""

    def direction(self, name: str) -> StoredResult | None:
        """fio's row of ``name`` ("read", "write"), None when the test did none."""
        return next((r for r in self.rows if r.direction == name and r.io_bytes > 0), None)

    @property
    def reads(self) -> bool:
        return self.direction("read") is not None

    @property
    def writes(self) -> bool:
        return self.direction("write") is not None

    @property
    def direct(self) -> bool | None:
        """fio's ``direct`` (None: not stated, fio's default 0 for an imported output)."""
        return self.workload.direct

    @property
    def sequential(self) -> bool:
        return (self.workload.rw or "") in SEQUENTIAL

    @property
    def runtime_s(self) -> float:
        return max((r.runtime_ms for r in self.rows), default=0.0) / 1000

    @property
    def working_set_bytes(self) -> int | None:
        """The bytes the test's I/O ranged over: its ``size`` (fio's active range), else
        the target's capacity less the offset (None: neither known)."""
        if self.workload.size_bytes:
            return self.workload.size_bytes
        capacity = self.target.capacity_bytes
        return capacity - (self.workload.offset_bytes or 0) if capacity > 0 else None

    @property
    def block_bytes(self) -> int | None:
        """The one block size the test asked for (None: a bssplit, or not stated)."""
        return None if self.workload.bssplit else self.workload.bs_bytes


def fmt_bytes(value: float) -> str:
    """Bytes as MB (10^6) with the precision that fits: ``12.3 MB``, ``7,847 MB``."""
    mb = value / 1e6
    return f"{mb:,.1f} MB" if mb < 100 else f"{mb:,.0f} MB"
