"""QoS plans as JSON data (schema ``volbench.qos-plan/1``) and back. Pure.

``volbench qos plan --format json`` writes the document; ``qos apply`` and
``qos verify`` read it, and verify runs store it in their settings. A plan is
always recomputed from its inputs (capability, reserve, alpha, tenants and volume
size), so an edited or stale limit cannot disagree with the formula. Capability
and reserve hold ``riops``, ``wiops``, ``rbps``, ``wbps`` (the cgroup v2 io.max
keys); a plan written before per-direction figures holds ``iops`` and ``bps``,
read as the same figure for both directions.
"""

from __future__ import annotations

import math
from typing import Any

from volbench.analysis.qos import MAX_TENANTS, QosPlan, Rates, Tenant, make_plan
from volbench.errors import UsageError

PLAN_SCHEMA = "volbench.qos-plan/1"
MAX_NUMBER = 1e15
"""The largest figure a plan document may hold (IOPS, bytes/s, GiB): finite, and far
above any device's."""


def plan_document(plan: QosPlan) -> dict[str, Any]:
    """The plan as plain JSON data: inputs, then one entry per tenant (IOPS, bytes/s)."""
    return {
        "schema": PLAN_SCHEMA,
        "formula": "C' = (C - C0) x (1 - alpha) x V' / Va (NetEase QoS test)",
        "capability": _rates(plan.capability),
        "host_reserve": _rates(plan.reserve),
        "alpha": plan.alpha,
        "volume_gib": plan.volume_gib,
        "nominal_sizes": plan.nominal,
        "tenants_gib": plan.tenants_gib,
        "tenants": [
            {
                "name": a.tenant.name,
                "size_gib": a.tenant.size_gib,
                "share": a.share,
                "read_iops": a.limits.read_iops,
                "write_iops": a.limits.write_iops,
                "read_bw_bytes_per_s": a.limits.read_bps,
                "write_bw_bytes_per_s": a.limits.write_bps,
                "weight_v1": a.weight_v1,
                "weight_v2": a.weight_v2,
            }
            for a in plan.allocations
        ],
    }


def _rates(rates: Rates) -> dict[str, float]:
    return {
        "riops": rates.read_iops,
        "wiops": rates.write_iops,
        "rbps": rates.read_bps,
        "wbps": rates.write_bps,
    }


def _rates_from(data: Any, key: str) -> Rates:
    """Per-direction figures, or the older ``iops``/``bps`` for both directions."""
    if isinstance(data.get(key), dict) and "iops" in data[key] and "riops" not in data[key]:
        return Rates.both(_number(data, key, "iops"), _number(data, key, "bps"))
    return Rates(*(_number(data, key, name) for name in ("riops", "wiops", "rbps", "wbps")))


def _number(data: Any, *keys: str) -> float:
    value = data
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            raise UsageError(f"the QoS plan has no {'.'.join(keys)}: write it with `qos plan`")
        value = value[key]
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise UsageError(f"the QoS plan's {'.'.join(keys)} is not a number")
    number = float(value) if isinstance(value, float) or abs(value) <= MAX_NUMBER else math.inf
    if not (math.isfinite(number) and abs(number) <= MAX_NUMBER):
        raise UsageError(f"the QoS plan's {'.'.join(keys)} is not a finite number up to 1e15")
    return number


def _name(tenant: Any) -> str:
    name = tenant.get("name", "") if isinstance(tenant, dict) else ""
    if not isinstance(name, str):
        raise UsageError("the QoS plan has a tenant whose name is not text")
    return name


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
    if len(tenants_data) > MAX_TENANTS:
        raise UsageError(f"the QoS plan has {len(tenants_data):,} tenants: at most {MAX_TENANTS:,}")
    tenants = [Tenant(_name(t), _number(t, "size_gib")) for t in tenants_data]
    volume_gib = _number(data, "volume_gib")
    nominal = data.get("nominal_sizes", volume_gib > 0)  # before: V given = nominal sizes
    return make_plan(
        _rates_from(data, "capability"),
        _rates_from(data, "host_reserve"),
        tenants,
        alpha=_number(data, "alpha"),
        volume_gib=volume_gib,
        nominal=nominal is True,
    )
