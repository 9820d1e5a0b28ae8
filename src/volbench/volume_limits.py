"""The limits of a run's volume, from the store: the newest completed ``volbench run
limits`` run on the same volume (:func:`volbench.analysis.fitted_caps.volume_key`), its
fitted model as caps (:func:`volbench.analysis.fitted_caps.fitted_caps`) that every
other run's verdicts (``show``, ``explain``, ``check``, ``report``) name the limiter
from."""

from __future__ import annotations

from collections.abc import Sequence

from volbench.analysis.fitted_caps import fitted_caps, volume_key
from volbench.analysis.limit_evidence import KnownCap
from volbench.model import RunRecord, RunStatus
from volbench.plans import limits
from volbench.report.limits_card import fitted_model
from volbench.store.repository import Store

Caps = dict[int, tuple[KnownCap, ...]]


def volume_caps(store: Store, runs: Sequence[RunRecord]) -> Caps:
    """Each of ``runs`` (by id) with the caps of its volume's newest completed limits
    run (none: no such run, or a volume volbench cannot name again)."""
    keys = {run.id: volume_key(run) for run in runs}
    wanted = {key for key in keys.values() if key is not None}
    if not wanted:
        return {}
    found: dict[str, tuple[KnownCap, ...]] = {}
    for listed in store.list_runs(plan=limits.NAME, status=RunStatus.COMPLETED):
        key = volume_key(listed)  # newest first: the first of each volume
        if key in wanted and key not in found:
            fitted = fitted_model(store.get_run(listed.id))
            burst = fitted.burst[1] if fitted.burst else None
            writes = fitted.write_burst[1] if fitted.write_burst else None
            source = f"limits run {listed.id}"
            found[key] = fitted_caps(fitted.model, burst, source, writes, fitted.probes)
    return {run_id: found[key] for run_id, key in keys.items() if key in found}


def caps_of(store: Store, run: RunRecord) -> tuple[KnownCap, ...]:
    """The caps of ``run``'s volume (:func:`volume_caps`)."""
    return volume_caps(store, [run]).get(run.id, ())
