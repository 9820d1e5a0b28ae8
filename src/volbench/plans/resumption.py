"""Continuing a run that did not finish: the plan and what it has done, from the store.

Every plan started by :func:`volbench.plans.runs.engine.execute` records its tests in
run order (``planned``, one fio process each) and whether it is adaptive. :func:`resume`
serves every plan: it refuses a run that cannot go on, checks that its targets are
still the ones it started on, and hands it to its plan's resumer, the ``resume``
member of its row in the table of plans (:data:`volbench.plans.kinds.KINDS`; the
resumers: :mod:`volbench.plans.resumers`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from volbench.errors import TargetError, UsageError
from volbench.model import RunRecord, RunStatus
from volbench.plans import kinds
from volbench.plans.placement.placed import Resuming
from volbench.plans.placement.preparation import PurgeSettings
from volbench.plans.runs.engine import local_targets
from volbench.plans.runs.execution import Outcome, Session
from volbench.targets.identity import describe, identify, same
from volbench.targets.safety import check_round


def resume(
    session: Session,
    run_ref: str,
    purging: PurgeSettings,
    destroy_data: Sequence[str] = (),
    force: bool = False,
    same_volume: bool = False,
) -> Outcome:
    """Continue the stored run ``run_ref`` (an id or ``latest``) from its last committed
    work, the way its plan's row of :data:`volbench.plans.kinds.KINDS` says (most
    plans: the tests they have not finished). UsageError when the run is
    completed, still running (a live owner), measured its targets alone (``--solo``),
    cannot be rebuilt, or its target changed (TargetError: not the same file or device,
    :mod:`volbench.targets.identity`; UsageError: size, or what its resumer checks). The
    target is prepared as for a new run (safety checks: ``destroy_data``, ``force``);
    a run on several places at once reconnects them all, tunnels open until it ends.
    ``same_volume``: a target whose identity changed is recorded as it is now, when its
    kind and size are those the run started on (:func:`_same_volume`)."""
    store = session.store
    record = store.get_run(run_ref, raw=False)
    if record.status is RunStatus.COMPLETED:
        raise UsageError(f"run {record.id} is completed: nothing to resume")
    owner = store.running_owner(record.id)
    if owner is not None:
        raise UsageError(
            f"run {record.id} is still running ({owner}): stop it first, then resume it"
        )
    if same_volume:
        record = _same_volume(session, record)
    for info in local_targets(record):  # before anything touches it (purge, cgroups)
        try:
            check_round(info, writes=False)
        except TargetError as exc:
            if "no longer what the run started on" not in str(exc):
                raise
            raise TargetError(
                f"{exc}. If it is the same volume attached again (a new device number or"
                f" diskseq), `volbench resume {record.id} --same-volume` goes on with it"
            ) from exc
    if record.settings.solo:
        raise UsageError(f"run {record.id} measured targets alone (--solo): start it again")
    how = Resuming(purging, tuple(destroy_data), force)
    return kinds.kind(record.plan).resume(session, record, how)


def _same_volume(session: Session, record: RunRecord) -> RunRecord:
    """``record`` with its target recorded as the path names it now, on the user's word
    that it is the same volume (a device removed and attached again gets a new diskseq,
    a reconnected disk a new number). Refused in one line unless the run has one target
    on this machine, of the same kind and size, and with the same source where both
    name one (a WWID or serial, a loop device's backing file and offset): a different
    source is a different volume. The change is said now and stored with the run's end."""
    then = record.target.identity
    if record.settings.places or record.settings.named or then is None:
        raise UsageError(
            f"run {record.id}: --same-volume takes a run on one target on this machine"
        )
    now = identify(then.path)
    if same(then, now):
        return record
    other_source = bool(now.source and then.source and now.source != then.source)
    if other_source or (now.kind, now.capacity_bytes) != (then.kind, then.capacity_bytes):
        raise UsageError(
            f"run {record.id}: {then.path} is now {describe(now)}, not the same kind,"
            f" size and source as {describe(then)}: it cannot be the same volume (start a"
            " new run)"
        )
    target = dataclasses.replace(record.target, identity=now)
    session.store.retarget_run(record.id, target)
    said = (
        f"target {then.path} recorded again as {describe(now)} (was {describe(then)}):"
        " the same volume, as --same-volume said"
    )
    session.reporter.note(f"run {record.id}: {said}")
    session.warn(said)
    return dataclasses.replace(record, target=target)
