"""Cache modes (the Azure VM disk post's host cache): direct I/O, buffered I/O, or both.

Buffered workloads (fio ``direct=0``) go through the host's page cache; their
names carry the prefix ``buffered.`` so that every stored result says how it
was measured. ``both`` runs every direct workload, then its buffered twin, in the
same round.
"""

from __future__ import annotations

import dataclasses

from volbench.errors import UsageError
from volbench.model import BUFFERED_PREFIX, Workload
from volbench.plans.runs.execution import PlanSpec

MODES = ("direct", "buffered", "both")


def buffered(workload: Workload) -> Workload:
    return dataclasses.replace(workload, name=BUFFERED_PREFIX + workload.name, direct=False)


def with_cache_mode(plan: PlanSpec, mode: str) -> PlanSpec:
    """``plan`` with its workloads in cache mode ``mode`` (direct leaves it as it is)."""
    if mode not in MODES:
        raise UsageError(f"unknown cache mode {mode!r}: use one of {', '.join(MODES)}")
    if mode == "direct":
        return plan
    if plan.next_round is not None:
        raise UsageError("an adaptive search (--find-max) runs with --cache direct only")
    rounds = tuple(
        tuple(buffered(w) for w in round_)
        if mode == "buffered"
        else (*round_, *(buffered(w) for w in round_))
        for round_ in plan.rounds
    )
    return dataclasses.replace(plan, rounds=rounds, options={**plan.options, "cache": mode})
