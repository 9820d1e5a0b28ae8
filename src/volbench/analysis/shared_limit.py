"""Shared limits: several targets that together do less than each does alone.

Seed 002: an Azure storage account caps the IOPS of all its disks together
(20,000 IOPS), so disks that each reach their own figure alone fall short when
driven at once. Seed 004: VMs on one host share one device. The finding compares,
per test, the aggregate of the targets measured at the same time with the sum of
what each did alone:

* ``together <= SHARED_RATIO x sum(alone)``: the aggregate stays well below the
  sum of the parts (it plateaus instead of adding up), and
* every target's own share while together is below ``SHARE_RATIO`` x its figure
  alone: each target could do more, so none of them is its own bottleneck.

Then the targets behave as if one limit of about ``together`` (per second) were
shared between them. Pure functions over the stored figures.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

SHARED_RATIO = 0.8
"""The aggregate must fall short of the sum alone by more than 20%."""

SHARE_RATIO = 0.9
"""Each target's share together must be under 90% of its figure alone."""


@dataclass(frozen=True)
class SharedLimit:
    """One test's figures (per second, in ``unit``) together and alone, per place."""

    test: str
    unit: str  # "IOPS" or "MB/s"
    together: float
    alone: Mapping[str, float]
    shares: Mapping[str, float]

    @property
    def sum_alone(self) -> float:
        return sum(self.alone.values())

    @property
    def found(self) -> bool:
        """True when the places share one limit (see the module's rules)."""
        if len(self.alone) < 2 or self.sum_alone <= 0:
            return False
        could_do_more = all(
            self.shares.get(place, 0.0) < SHARE_RATIO * value for place, value in self.alone.items()
        )
        return self.together <= SHARED_RATIO * self.sum_alone and could_do_more

    def sentence(self) -> str:
        """The finding in one sentence, with the numbers."""
        low, high = min(self.alone.values()), max(self.alone.values())
        each = f"{_fmt(low)}" if _fmt(low) == _fmt(high) else f"{_fmt(low)}-{_fmt(high)}"
        return (
            f"shared limit: {self.test}: the {len(self.alone)} targets together did "
            f"{_fmt(self.together)} {self.unit}, while alone each did {each} "
            f"(sum {_fmt(self.sum_alone)}, together = {self.together / self.sum_alone:.0%} "
            f"of it): they behave as if one limit of about {_fmt(self.together)} {self.unit} "
            "were shared between them"
        )


def _fmt(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def shared_limits(
    together: Mapping[str, float],
    alone: Mapping[str, Mapping[str, float]],
    shares: Mapping[str, Mapping[str, float]],
    unit: str = "IOPS",
) -> list[SharedLimit]:
    """Every test measured both together and alone: ``together[test]`` the aggregate,
    ``alone[test][place]`` each place alone, ``shares[test][place]`` each place's
    share together. Tests without figures alone are left out."""
    return [
        SharedLimit(test, unit, value, alone[test], shares.get(test, {}))
        for test, value in together.items()
        if alone.get(test)
    ]
