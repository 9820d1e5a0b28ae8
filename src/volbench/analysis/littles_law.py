"""Little's law applied to an fio result.

L = lambda x W (Little, "A Proof for the Queuing Formula L = lambda W", Operations
Research 9(3), 1961): the mean number of I/Os in flight equals the completion
rate (IOPS) times the mean time each I/O spends in the system (fio's total
latency ``lat``, submission to completion). With fio keeping iodepth x numjobs
I/Os queued, the implied figure should match the configured one. Much fewer in
flight means the host did not keep the queue full (CPU- or submission-bound);
the UCloud RSSD post's 32 jobs x QD 64 at 104k IOPS and ~19.7 ms (104,000 x 0.0197 = 2,048)
shows the law holding on a throttled disk: more queue only adds latency.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

TOLERANCE = 0.20
"""Relative difference above which the implied and configured figures disagree."""


@dataclass(frozen=True)
class LittleCheck:
    """Implied vs configured outstanding I/O for one test."""

    implied: float
    configured: int
    tolerance: float = TOLERANCE

    @property
    def ratio(self) -> float:
        """implied / configured (1.0 = the queue was kept exactly as full as asked)."""
        return self.implied / self.configured if self.configured else 0.0

    @property
    def flagged(self) -> bool:
        return abs(self.ratio - 1.0) > self.tolerance

    @property
    def verdict(self) -> str:
        """A short reading of the check for tables."""
        if not self.flagged:
            return "ok"
        if self.ratio < 1.0:
            return "host-bound: queue not kept full"
        return "more in flight than configured"


def implied_outstanding(pairs: Iterable[tuple[float, float]]) -> float:
    """Sum over directions of IOPS x mean latency (s): mean I/Os in flight.

    ``pairs`` are (IOPS, mean latency in ns) per direction; reads and writes are
    separate queues sharing the same in-flight budget, so their L add up.
    """
    return sum(iops * lat_ns / 1e9 for iops, lat_ns in pairs)


def check(pairs: Iterable[tuple[float, float]], configured: int) -> LittleCheck:
    """Little's-law check of a test with ``configured`` = iodepth x numjobs."""
    return LittleCheck(implied=implied_outstanding(pairs), configured=configured)
