"""The virtualisation loss alpha of lab guests against the host alone, from a stored
``qos verify --guests --fit-alpha`` run (NetEase QoS test, test 4: C measured on the
host, the VMs' IOPS measured together while the host uses C0).

Such a run stores, besides each tenant's verified row, two more rounds of fio's own
figures: the host's fio alone on the shared backing device (test ``alone.host``:
C, nothing else running, no limit) and every guest at once with its limits lifted
(tests ``free.TENANT``; ``free.host`` the host in its reserve, C0, when the run had
``--with-host``). Then, as :func:`volbench.analysis.qos.fit_alpha`:

    alpha = 1 - sum(guests' IOPS) / (C - C0)

Pure: a RunRecord in.
"""

from __future__ import annotations

from dataclasses import dataclass

from volbench.analysis.qos import fit_alpha
from volbench.analysis.qos_results import HOST, VerifySetup
from volbench.model import RunRecord

ALONE = "alone.host"
"""Test name of the host's fio alone on the backing device (C)."""
FREE = "free."
"""Test-name prefix of the tenants' fio with the guests' limits lifted."""


@dataclass(frozen=True)
class GuestAlpha:
    """alpha of a guest run: C (IOPS of the host alone), C0 (the host's IOPS in its
    reserve while the guests ran, 0 without the host), each guest's IOPS (tenant,
    IOPS) with no limit, all at once, and alpha = 1 - sum / (C - C0)."""

    run_id: int
    capability_iops: float
    host_used_iops: float
    guests: tuple[tuple[str, float], ...]
    alpha: float

    def line(self) -> str:
        """One line: the fit with its figures."""
        summed = " + ".join(f"{name} {iops:,.0f}" for name, iops in self.guests)
        used = f" - C0 {self.host_used_iops:,.0f}" if self.host_used_iops else ""
        return (
            f"alpha = 1 - ({summed}) / (C {self.capability_iops:,.0f}{used}) = {self.alpha:.3f}"
            f" (guests without limits, all at once, against the host alone; run {self.run_id})"
        )


def _iops(run: RunRecord) -> dict[str, float]:
    found: dict[str, float] = {}
    for result in run.results:
        found[result.test] = found.get(result.test, 0.0) + result.iops
    return found


def guest_alpha(run: RunRecord) -> GuestAlpha | None:
    """alpha of stored verify run ``run`` (None: it did not fit alpha, or stopped
    before every round was stored)."""
    plan = VerifySetup.of(run).plan
    found = _iops(run)
    tenants = [a.tenant.name for a in plan.allocations]
    if ALONE not in found or any(FREE + t not in found for t in tenants):
        return None
    guests = tuple((t, found[FREE + t]) for t in tenants)
    used = found.get(FREE + HOST, 0.0)
    capability = found[ALONE]
    alpha = fit_alpha(capability, used, [iops for _, iops in guests])
    return GuestAlpha(run.id, capability, used, guests, alpha)
