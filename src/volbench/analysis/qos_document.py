"""QoS plans as JSON data (schema ``volbench.qos-plan/1``) and back. Pure.

``volbench qos plan --format json`` writes the document; ``qos apply`` and
``qos verify`` read it, and verify runs store it in their settings. A plan is
always recomputed from its inputs (capability, reserve, alpha, tenants and volume
size), so an edited or stale limit cannot disagree with the formula.
"""

from __future__ import annotations

from typing import Any

from volbench.analysis.qos import QosPlan, Tenant, make_plan
from volbench.errors import UsageError

PLAN_SCHEMA = "volbench.qos-plan/1"


def plan_document(plan: QosPlan) -> dict[str, Any]:
    """The plan as plain JSON data: inputs, then one entry per tenant (IOPS, bytes/s)."""
    return {
        "schema": PLAN_SCHEMA,
        "formula": "C' = (C - C0) x (1 - alpha) x V' / Va (seed 004)",
        "capability": {"iops": plan.capability_iops, "bps": plan.capability_bw_bytes_per_s},
        "host_reserve": {"iops": plan.reserve_iops, "bps": plan.reserve_bw_bytes_per_s},
        "alpha": plan.alpha,
        "volume_gib": plan.volume_gib,
        "nominal_sizes": plan.nominal,
        "tenants_gib": plan.tenants_gib,
        "tenants": [
            {
                "name": a.tenant.name,
                "size_gib": a.tenant.size_gib,
                "share": a.share,
                "iops": a.iops,
                "bw_bytes_per_s": a.bw_bytes_per_s,
                "weight_v1": a.weight_v1,
                "weight_v2": a.weight_v2,
            }
            for a in plan.allocations
        ],
    }


def _number(data: Any, *keys: str) -> float:
    value = data
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            raise UsageError(f"the QoS plan has no {'.'.join(keys)}: write it with `qos plan`")
        value = value[key]
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise UsageError(f"the QoS plan's {'.'.join(keys)} is not a number")
    return float(value)


def plan_from_document(data: Any) -> QosPlan:
    """Rebuild a plan from its document; one-line UsageError when it is not one."""
    if not isinstance(data, dict) or data.get("schema") != PLAN_SCHEMA:
        raise UsageError(
            f"not a volbench QoS plan (schema {PLAN_SCHEMA}): "
            "write one with `volbench qos plan ... --format json > plan.json`"
        )
    tenants_data = data.get("tenants")
    if not isinstance(tenants_data, list):
        raise UsageError("the QoS plan has no tenants list")
    tenants = [
        Tenant(str(t.get("name", "")) if isinstance(t, dict) else "", _number(t, "size_gib"))
        for t in tenants_data
    ]
    volume_gib = _number(data, "volume_gib")
    nominal = data.get("nominal_sizes", volume_gib > 0)  # before: V given = nominal sizes
    return make_plan(
        (_number(data, "capability", "iops"), _number(data, "capability", "bps")),
        (_number(data, "host_reserve", "iops"), _number(data, "host_reserve", "bps")),
        tenants,
        alpha=_number(data, "alpha"),
        volume_gib=volume_gib,
        nominal=nominal is True,
    )
