"""Measuring a device's capability C for a QoS plan (``qos plan --measure DEV``).

Two read-only fio tests, stonewalled in one fio process and stored as a run like
any other: 4 KiB random read at QD 32 for IOPS, and 1 MiB sequential read at
QD 8 for bandwidth. Reads only, so any device can be measured without risk; a
device that writes slower than it reads needs its write capability given with
``--capability`` instead (seed 004 measures read and write separately).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from volbench.analysis.qos import check_capacity
from volbench.errors import FioError
from volbench.model import RW, RunStatus, Workload
from volbench.plans.execution import PlanSpec, Session, execute
from volbench.plans.preparation import prepare_target
from volbench.units import GiB

NAME = "qos-capability"
IOPS_TEST = "capability-iops"
BANDWIDTH_TEST = "capability-bandwidth"


@dataclass(frozen=True)
class Capability:
    """C as measured: IOPS, bytes/s, the run that holds fio's output, and the
    device's capacity in bytes."""

    run_id: int
    iops: float
    bw_bytes_per_s: float
    capacity_bytes: int


def plan(runtime_s: float) -> PlanSpec:
    """The two capability tests, ``runtime_s`` seconds each."""
    tests = (
        Workload(IOPS_TEST, RW.RANDREAD, bs_bytes=4096, iodepth=32, runtime_s=runtime_s),
        Workload(BANDWIDTH_TEST, RW.READ, bs_bytes=1 << 20, iodepth=8, runtime_s=runtime_s),
    )
    return PlanSpec(NAME, (tests,), settings={"runtime_s": runtime_s})


def measure(
    session: Session,
    device: str,
    runtime_s: float,
    labels: Mapping[str, str],
    tenants_gib: float = 0.0,
) -> Capability:
    """Run the capability tests on ``device`` (reads only) and return C; first, when
    ``tenants_gib`` is given, check that Va fits on the device."""
    info = prepare_target(device, False, session.reporter)
    check_capacity(tenants_gib, info.capacity_bytes / GiB, device)
    outcome = execute(session, plan(runtime_s), info, labels)
    if outcome.status is not RunStatus.COMPLETED:
        raise FioError(f"measuring {device} was {outcome.status.value}: no capability")
    by_name = {t.name: t for t in outcome.tests}
    return Capability(
        outcome.run_id,
        by_name[IOPS_TEST].iops,
        by_name[BANDWIDTH_TEST].bw_bytes_per_s,
        info.capacity_bytes,
    )
