"""The host-side QoS model of the NetEase QoS test: per-tenant I/O allocations proportional to size.

Seed 004 ("云主机实例存储QoS性能测试", tests 3 and 4) gives each tenant (a VM with
instance storage) an I/O capability

    C' = (C - C0) x (1 - alpha) x V' / Va

where C is the device's capability, C0 what the host actually uses of its
reserve, V' the tenant's storage size, Va the sum of the sizes of the running
tenants, and alpha the virtualisation loss factor. Capabilities are in IOPS or
bytes/s (the formula is the same for both), and reads and writes are planned
separately (the NetEase QoS test measured C = 3888 IOPS reading but 156 writing); sizes in
any one unit (only the ratio V'/Va matters; volbench uses GiB).

All functions here are pure.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from volbench.errors import UsageError

V1_WEIGHT_MIN, V1_WEIGHT_MAX = 10, 1000
"""cgroup v1 ``blkio.weight`` range (kernel admin-guide/cgroup-v1/blkio-controller.rst)."""
V2_WEIGHT_MIN, V2_WEIGHT_MAX = 1, 10000
"""cgroup v2 ``io.weight`` range (kernel Documentation/admin-guide/cgroup-v2.rst, "IO")."""

MAX_TENANTS = 1000
"""The most tenants of one plan (each is a cgroup when the plan is applied)."""

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}\Z")


@dataclass(frozen=True)
class Rates:
    """IOPS and bytes/s per direction (0 = not given: not planned, no limit)."""

    read_iops: float = 0.0
    write_iops: float = 0.0
    read_bps: float = 0.0
    write_bps: float = 0.0

    @classmethod
    def both(cls, iops: float, bps: float) -> Rates:
        """The same IOPS and bytes/s for reads and writes."""
        return cls(iops, iops, bps, bps)

    def pick(self, direction: str) -> tuple[float, float]:
        """(IOPS, bytes/s) of ``direction`` (``read`` or ``write``)."""
        if direction == "write":
            return self.write_iops, self.write_bps
        return self.read_iops, self.read_bps

    def figures(self) -> tuple[tuple[str, float], ...]:
        """(label, value) of the four figures, in the order of their fields."""
        return (
            ("read IOPS", self.read_iops),
            ("write IOPS", self.write_iops),
            ("read bandwidth", self.read_bps),
            ("write bandwidth", self.write_bps),
        )


@dataclass(frozen=True)
class Tenant:
    """A tenant (the NetEase QoS test: a VM) and its storage size V' in GiB."""

    name: str
    size_gib: float


@dataclass(frozen=True)
class Allocation:
    """One tenant's allocation.

    ``share`` = V'/Va (its guaranteed fraction of what tenants get); ``limits`` are
    C' for IOPS and bandwidth per direction (0 = not planned, no limit); the
    weights are proportional to size (largest tenant = the maximum weight, none below the minimum).
    """

    tenant: Tenant
    share: float
    limits: Rates
    weight_v1: int
    weight_v2: int


@dataclass(frozen=True)
class QosPlan:
    """A complete plan: the inputs of the formula and every tenant's allocation.

    ``capability`` is C, ``reserve`` is C0 (the host's reserve), ``alpha`` the
    virtualisation loss, ``volume_gib`` the device size V (0 = not checked);
    ``nominal`` when the sizes are proportions only, not checked against the
    capacity of the device the plan is applied to.
    """

    capability: Rates
    reserve: Rates
    alpha: float
    volume_gib: float
    allocations: tuple[Allocation, ...]
    nominal: bool = False

    @property
    def tenants_gib(self) -> float:
        """Va: the sum of the tenants' sizes, GiB."""
        return sum(a.tenant.size_gib for a in self.allocations)


def allocation(capability: float, used: float, alpha: float, size: float, total: float) -> float:
    """C' = (C - C0) x (1 - alpha) x V' / Va (the NetEase QoS test, test 3 and test 4 formula).

    ``capability`` C and ``used`` C0 in IOPS or bytes/s; ``size`` V' and ``total``
    Va in the same size unit. Returns C' in the unit of C.
    """
    if total <= 0:
        raise UsageError("the tenants' total size must be positive")
    return (capability - used) * (1.0 - alpha) * size / total


def check_tenants(tenants: Sequence[Tenant], volume_gib: float = 0.0) -> None:
    """Raise UsageError (one line) unless the tenants can share a device of ``volume_gib``."""
    if not tenants:
        raise UsageError("a QoS plan needs at least one tenant: --tenant NAME:SIZE")
    if len(tenants) > MAX_TENANTS:
        raise UsageError(f"{len(tenants):,} tenants: a QoS plan holds at most {MAX_TENANTS:,}")
    names = Counter(t.name for t in tenants)
    for tenant in tenants:
        if not _NAME.match(tenant.name):
            raise UsageError(
                f"invalid tenant name {tenant.name[:60]!r}: use up to 48 letters, digits, -, _"
                " and ."
            )
        if not tenant.size_gib > 0 or not math.isfinite(tenant.size_gib):
            raise UsageError(f"tenant {tenant.name}: size must be positive")
    duplicates = sorted(n for n, count in names.items() if count > 1)
    if duplicates:
        raise UsageError(f"tenant {duplicates[0]} is given twice: tenant names must be unique")
    check_capacity(sum(t.size_gib for t in tenants), volume_gib)


def check_capacity(tenants_gib: float, volume_gib: float, device: str = "the device") -> None:
    """Raise UsageError (one line) when Va = ``tenants_gib`` exceeds the device's
    ``volume_gib`` (0 = not known: nothing to check)."""
    if volume_gib > 0 and tenants_gib > volume_gib * (1 + 1e-9):
        raise UsageError(
            f"the tenants' sizes ({tenants_gib:g} GiB) do not fit on {device}"
            f" ({volume_gib:.4g} GiB): shrink or drop tenants, or give --nominal-sizes"
            " when the sizes are proportions only"
        )


def weights(sizes: Sequence[float], low: int, high: int) -> list[int]:
    """Weights proportional to size: round(high x V'/max V'), clamped to [low, high]."""
    largest = max(sizes)
    return [max(low, min(high, round(high * s / largest))) for s in sizes]


def make_plan(
    capability: Rates | tuple[float, float],
    reserve: Rates | tuple[float, float],
    tenants: Sequence[Tenant],
    alpha: float = 0.0,
    volume_gib: float = 0.0,
    nominal: bool = False,
) -> QosPlan:
    """Plan the tenants' allocations. ``capability`` and ``reserve`` are :class:`Rates`,
    or (IOPS, bytes/s) for both directions; a capability of 0 leaves that figure
    unplanned (its allocations are 0 = no limit).

    Each tenant gets C' by :func:`allocation` for each figure (read and write IOPS
    and bandwidth), with C0 = the host reserve of that figure (the NetEase QoS test: the reserve
    the host is limited to when QoS is on).
    """
    capability = capability if isinstance(capability, Rates) else Rates.both(*capability)
    reserve = reserve if isinstance(reserve, Rates) else Rates.both(*reserve)
    check_tenants(tenants, volume_gib)
    for (label, cap), (_, res) in zip(capability.figures(), reserve.figures(), strict=True):
        if not (math.isfinite(cap) and math.isfinite(res)):
            raise UsageError(f"the {label} capability and reserve must be numbers (not {cap:g})")
    if not math.isfinite(volume_gib) or volume_gib < 0:
        raise UsageError(f"the volume size must be a number of GiB, not {volume_gib:g}")
    if not 0.0 <= alpha < 1.0:
        raise UsageError(f"alpha must be in [0, 1) (got {alpha:g})")
    if all(value <= 0 for _, value in capability.figures()):
        raise UsageError(
            "give the device's capability in IOPS, bytes/s or both: iops=N,bps=N"
            " (riops=, wiops=, rbps=, wbps= per direction)"
        )
    for (label, cap), (_, res) in zip(capability.figures(), reserve.figures(), strict=True):
        if cap <= 0 and res > 0:
            raise UsageError(f"a host {label} reserve needs the device's {label} capability")
        if cap > 0 and not 0 <= res < cap:
            raise UsageError(
                f"the host {label} reserve ({res:g}) must be below the capability ({cap:g})"
            )
    total = sum(t.size_gib for t in tenants)
    sizes = [t.size_gib for t in tenants]
    v1 = weights(sizes, V1_WEIGHT_MIN, V1_WEIGHT_MAX)
    v2 = weights(sizes, V2_WEIGHT_MIN, V2_WEIGHT_MAX)
    allocations = []
    for tenant, w1, w2 in zip(tenants, v1, v2, strict=True):
        figures = [
            allocation(cap, res, alpha, tenant.size_gib, total)
            for (_, cap), (_, res) in zip(capability.figures(), reserve.figures(), strict=True)
        ]
        for (label, cap), value in zip(capability.figures()[:2], figures, strict=False):
            if cap > 0 and value < 1:
                raise UsageError(
                    f"tenant {tenant.name} would get {value:.2f} {label} (below 1): too many"
                    " tenants or too large a reserve for this device"
                )
        limits = Rates(*figures)
        allocations.append(Allocation(tenant, tenant.size_gib / total, limits, w1, w2))
    return QosPlan(
        capability,
        reserve,
        alpha,
        volume_gib,
        tuple(allocations),
        nominal,
    )


def fit_alpha(capability: float, used: float, achieved: Sequence[float]) -> float:
    """The loss factor alpha from one concurrent measurement (the NetEase QoS test, test 4).

    ``achieved`` holds the measured C' of every running tenant (all of them: Va is
    the sum of their sizes, so sum V'/Va = 1). Summing the formula over
    the tenants gives sum C' = (C - C0)(1 - alpha), so

        alpha = 1 - sum(C') / (C - C0)

    the ratio-of-totals estimator: every I/O counts equally, whatever the tenant.
    Seed 004's sequential read (C=3888, C0=975, tenants 40/60/80 GiB achieving
    118/187/235 IOPS) gives alpha = 1 - 540/2913 = 0.8146 (the seed: 0.814).
    """
    if not achieved:
        raise UsageError("fitting alpha needs at least one measured tenant")
    if not all(math.isfinite(v) for v in (capability, used, *achieved)):
        raise UsageError("the capability, the host's use and the measured results must be numbers")
    if capability <= used:
        raise UsageError(f"the capability ({capability:g}) must exceed the host's use ({used:g})")
    if any(c < 0 for c in achieved):
        raise UsageError("measured results must not be negative")
    return 1.0 - sum(achieved) / (capability - used)


def predict(
    capability: float, used: float, alpha: float, sizes: Mapping[str, float]
) -> dict[str, float]:
    """Predicted C' of each tenant (name -> C' in the unit of C) by :func:`allocation`."""
    total = sum(sizes.values())
    return {name: allocation(capability, used, alpha, v, total) for name, v in sizes.items()}


def error_pct(planned: float, achieved: float) -> float:
    """Relative error of ``achieved`` against ``planned``: (achieved - planned) / planned x 100."""
    if planned == 0:
        raise UsageError("cannot compare against a planned value of 0")
    return (achieved - planned) / planned * 100.0


def jain_index(values: Sequence[float]) -> float:
    """Jain's fairness index J = (sum x)^2 / (n x sum x^2), in [1/n, 1].

    Source: R. Jain, D. Chiu, W. Hawe, "A Quantitative Measure of Fairness and
    Discrimination for Resource Allocation in Shared Computer Systems", DEC-TR-301
    (1984). For weighted allocations x_i is achieved_i / planned_i, so 1 means every
    tenant got the same fraction of its plan.
    """
    if not values:
        raise ValueError("Jain's index needs at least one value")
    squares = sum(v * v for v in values)
    if squares == 0:
        return 1.0
    return sum(values) ** 2 / (len(values) * squares)
