"""Applying a QoS plan to a block device as cgroups, and clearing volbench's cgroups."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from dataclasses import dataclass

from volbench.analysis.qos import QosPlan, Rates, check_capacity
from volbench.analysis.qos_document import plan_document
from volbench.errors import TargetError
from volbench.targets import cgroup
from volbench.targets.blockdev import BlockDevice
from volbench.units import GiB

HOST = "host"
"""Tenant (test) name of the host's fio in ``qos verify --with-host``."""


@dataclass(frozen=True)
class Applied:
    """What ``apply_plan`` did: the hierarchy, the disk's MAJ:MIN and each line written."""

    hierarchy: cgroup.Hierarchy
    devnum: str
    written: tuple[cgroup.Written, ...]
    reclaimed: tuple[str, ...] = ()
    """What killed runs left that was removed first (:func:`volbench.targets.cgroup.reclaim`)."""


def device_number(path: str) -> str:
    """``MAJ:MIN`` of the whole block device at ``path`` (throttle rules are per disk)."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise TargetError(f"cannot use {path}: {exc.strerror or exc}") from exc
    if not stat.S_ISBLK(mode):
        raise TargetError(
            f"{path} is not a block device: cgroup I/O limits apply to block devices only"
        )
    device = BlockDevice.from_path(path)
    if device.is_partition:
        raise TargetError(
            f"{path} is a partition: cgroup throttling works per disk, use {device.disk.path}"
        )
    major, minor = device.devnum
    return f"{major}:{minor}"


def require_room(plan: QosPlan, device: str, nominal: bool = False) -> None:
    """Raise UsageError unless the plan's tenants (Va) fit on ``device``; nothing is
    checked when the sizes are nominal (the plan's, or ``nominal`` from the command)."""
    if not (nominal or plan.nominal):
        capacity = BlockDevice.from_path(device).capacity_bytes
        check_capacity(plan.tenants_gib, capacity / GiB, device)


def plan_id(plan: QosPlan) -> str:
    """The plan's id: the first 8 hex digits of SHA-256 over its JSON document (keys
    sorted). Two plans that differ in anything (tenants, sizes, limits) get different
    ids, so their cgroups never collide; the same plan file always gets the same id,
    so ``qos clear PLAN`` finds its cgroups."""
    text = json.dumps(plan_document(plan), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def group(plan: QosPlan, tenant: str) -> str:
    """The cgroup name (after ``volbench-``) of ``tenant`` of ``plan``: ``p<id>-<tenant>``."""
    return f"p{plan_id(plan)}-{tenant}"


def host_group(plan: QosPlan) -> str:
    """The host's cgroup name (after ``volbench-``) for ``plan``: ``p<id>-host``."""
    return group(plan, HOST)


def tenant_limits(plan: QosPlan, with_host: bool = False) -> list[cgroup.Limits]:
    """Integer limits per tenant (IOPS and bytes/s rounded; 0 = no limit), each in the
    cgroup :func:`group`, and, with ``with_host``, the host's reserve as one more
    (tenant ``host``, cgroup :func:`host_group`)."""
    limits = [
        _limits(a.tenant.name, a.limits, a.weight_v1, a.weight_v2, group(plan, a.tenant.name))
        for a in plan.allocations
    ]
    if with_host:
        if any(a.tenant.name == HOST for a in plan.allocations):
            raise TargetError(f"a tenant is named {HOST!r}: rename it to verify with the host")
        if all(value <= 0 for _, value in plan.reserve.figures()):
            raise TargetError("--with-host needs a plan with a host reserve (--host-reserve)")
        limits.append(
            _limits(
                HOST,
                plan.reserve,
                cgroup.V1_DEFAULT_WEIGHT,
                cgroup.V2_DEFAULT_WEIGHT,
                host_group(plan),
            )
        )
    return limits


def _limits(
    name: str, rates: Rates, weight_v1: int, weight_v2: int, group: str = ""
) -> cgroup.Limits:
    """Rates rounded to the integers the kernel takes (0 = no limit)."""
    return cgroup.Limits(
        name,
        round(rates.read_iops),
        round(rates.write_iops),
        round(rates.read_bps),
        round(rates.write_bps),
        weight_v1,
        weight_v2,
        group,
    )


def apply_plan(
    plan: QosPlan, device: str, with_host: bool = False, nominal: bool = False
) -> Applied:
    """Create one cgroup per tenant with its limits on ``device``; nothing is left
    behind when any step fails. The tenants must fit on it unless sizes are ``nominal``."""
    cgroup.require_root()
    hierarchy = cgroup.find_hierarchy()
    devnum = device_number(device)
    require_room(plan, device, nominal)
    reclaimed = cgroup.reclaim(hierarchy)
    limits = tenant_limits(plan, with_host)
    written = cgroup.apply(hierarchy, devnum, limits, plan_id(plan), owned=False)  # they stay
    return Applied(hierarchy, devnum, tuple(written), tuple(reclaimed))


def clear(plan: QosPlan | None = None) -> tuple[list[str], list[str]]:
    """Remove volbench's cgroups: those marked as ``plan``'s (its tenants and host),
    else every cgroup volbench marked as its own (other sessions' too: ``qos clear
    --all``); a ``volbench-*`` cgroup without the mark is left alone. Returns
    (removed, still busy with processes)."""
    cgroup.require_root()
    hierarchy = cgroup.find_hierarchy()
    return cgroup.remove_idle(cgroup.ours(hierarchy, None if plan is None else plan_id(plan)))
