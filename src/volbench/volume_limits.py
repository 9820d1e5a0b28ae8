"""The limits of a run's volume, from the store: a completed ``volbench run limits`` run
on the same volume (:func:`volbench.analysis.fitted_caps.volume_key`), its fitted model
as caps (:func:`volbench.analysis.fitted_caps.fitted_caps`) that every other run's
verdicts (``show``, ``explain``, ``check``, ``report``) name the limiter from.

Which one: the newest that started no later than the run (the volume's limits when it
ran; a limits run is its own), else the oldest after it (none was measured before). A
volume's limits change (a disk resized, a plan changed): a run of last month is judged
by last month's limits, not by today's."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from volbench.analysis.fitted_caps import fitted_caps, volume_key
from volbench.analysis.limit_evidence import KnownCap
from volbench.model import RunRecord, RunStatus
from volbench.plans import limits
from volbench.report.limits_card import fitted_model
from volbench.store.repository import Store

Caps = dict[int, tuple[KnownCap, ...]]


def _started(run: RunRecord) -> datetime | None:
    """When ``run`` started (None: a time without its zone, or none)."""
    try:
        when = datetime.fromisoformat(run.started_at)
    except (TypeError, ValueError):
        return None
    return when if when.tzinfo is not None else None


def nearest(limit_runs: Sequence[RunRecord], run: RunRecord) -> RunRecord:
    """The limits run of ``limit_runs`` (one volume's, at least one) that judges ``run``
    (module docstring); by id where a start is unknown (the newest)."""
    at = _started(run)
    timed = [(when, r.id, r) for r in limit_runs if (when := _started(r)) is not None]
    if at is None or len(timed) < len(limit_runs):
        return max(limit_runs, key=lambda r: r.id)
    before = [t for t in timed if t[0] <= at]
    return max(before)[2] if before else min(timed)[2]


def volume_caps(store: Store, runs: Sequence[RunRecord]) -> Caps:
    """Each of ``runs`` (by id) with the caps of its volume's limits run nearest in time
    (module docstring; none: no such run, or a volume volbench cannot name again)."""
    keys = {run.id: volume_key(run) for run in runs}
    wanted = {key for key in keys.values() if key is not None}
    if not wanted:
        return {}
    measured: dict[str, list[RunRecord]] = {}
    for listed in store.list_runs(plan=limits.NAME, status=RunStatus.COMPLETED):
        key = volume_key(listed)
        if key is not None and key in wanted:
            measured.setdefault(key, []).append(listed)
    fitted: dict[int, tuple[KnownCap, ...]] = {}
    found: Caps = {}
    for run in runs:
        key = keys[run.id]
        if key is None or key not in measured:
            continue
        chosen = nearest(measured[key], run)
        if chosen.id not in fitted:
            fit = fitted_model(store.get_run(chosen.id))
            burst = fit.burst[1] if fit.burst else None
            writes = fit.write_burst[1] if fit.write_burst else None
            source = f"limits run {chosen.id}"
            fitted[chosen.id] = fitted_caps(fit.model, burst, source, writes, fit.probes)
        found[run.id] = fitted[chosen.id]
    return found


def caps_of(store: Store, run: RunRecord) -> tuple[KnownCap, ...]:
    """The caps of ``run``'s volume (:func:`volume_caps`)."""
    return volume_caps(store, [run]).get(run.id, ())
