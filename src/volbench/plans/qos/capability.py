"""Measuring a device's capability C for a QoS plan (``qos plan --measure DEV``).

Seed 004 measures reads and writes separately (C = 3888 IOPS reading, 156
writing). Stonewalled in one fio process and stored as a run like any other:
4 KiB random read at QD 32 for IOPS and 1 MiB sequential read at QD 8 for
bandwidth, then the same as writes (randwrite, write) when the safety rules
allow writing the device (an empty device, or ``--destroy-data DEV``). Otherwise
only reads are measured, and the write figures must be given with ``--capability``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from volbench.analysis.qos import Rates, check_capacity
from volbench.errors import FioError, TargetError
from volbench.model import RW, RunStatus, Workload
from volbench.plans.placement.preparation import prepare_target
from volbench.plans.runs.engine import execute
from volbench.plans.runs.execution import PlanSpec, Session
from volbench.targets.safety import check_write_allowed
from volbench.units import GiB

NAME = "qos-capability"
IOPS_TEST = "capability-iops"
BANDWIDTH_TEST = "capability-bandwidth"
WRITE_IOPS_TEST = "capability-write-iops"
WRITE_BANDWIDTH_TEST = "capability-write-bandwidth"


@dataclass(frozen=True)
class Capability:
    """C as measured: per direction (write figures 0 when writes were not allowed),
    the run that holds fio's output, and the device's capacity in bytes;
    ``refused`` says why writes were not measured ("" when they were)."""

    run_id: int
    rates: Rates
    capacity_bytes: int
    refused: str = ""


def plan(runtime_s: float, writes: bool = False) -> PlanSpec:
    """The capability tests, ``runtime_s`` seconds each: reads, and writes when asked."""
    tests: tuple[Workload, ...] = (
        Workload(IOPS_TEST, RW.RANDREAD, bs_bytes=4096, iodepth=32, runtime_s=runtime_s),
        Workload(BANDWIDTH_TEST, RW.READ, bs_bytes=1 << 20, iodepth=8, runtime_s=runtime_s),
    )
    if writes:
        tests += (
            Workload(WRITE_IOPS_TEST, RW.RANDWRITE, bs_bytes=4096, iodepth=32, runtime_s=runtime_s),
            Workload(
                WRITE_BANDWIDTH_TEST, RW.WRITE, bs_bytes=1 << 20, iodepth=8, runtime_s=runtime_s
            ),
        )
    return PlanSpec(NAME, (tests,), options={"runtime_s": runtime_s, "writes": writes})


def measure(
    session: Session,
    device: str,
    runtime_s: float,
    labels: Mapping[str, str],
    tenants_gib: float = 0.0,
    destroy_data: str | None = None,
) -> Capability:
    """Run the capability tests on ``device`` and return C; first, when ``tenants_gib``
    is given, check that Va fits on the device. Writes are measured only when the
    safety rules allow writing ``device`` (with ``destroy_data``, as for any plan)."""
    info = prepare_target(device, False, session.reporter)
    check_capacity(tenants_gib, info.capacity_bytes / GiB, device)
    refused = ""
    try:
        check_write_allowed(info.path, destroy_data=destroy_data)
    except TargetError as exc:
        refused = str(exc)
    outcome = execute(session, plan(runtime_s, writes=not refused), info, labels)
    if outcome.status is not RunStatus.COMPLETED:
        raise FioError(f"measuring {device} was {outcome.status.value}: no capability")
    by_name = {t.name: t for t in outcome.tests}
    written = {n: by_name[n] for n in (WRITE_IOPS_TEST, WRITE_BANDWIDTH_TEST) if n in by_name}
    rates = Rates(
        by_name[IOPS_TEST].iops,
        written[WRITE_IOPS_TEST].iops if written else 0.0,
        by_name[BANDWIDTH_TEST].bw_bytes_per_s,
        written[WRITE_BANDWIDTH_TEST].bw_bytes_per_s if written else 0.0,
    )
    return Capability(outcome.run_id, rates, info.capacity_bytes, refused)
