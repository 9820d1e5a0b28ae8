"""What was written on a run's volume, from the store: every stored run on the same
volume (:func:`volbench.analysis.fitted_caps.volume_key`: a device's serial or WWID, a
loop device's backing file, a file's inode, a remote place's label such as
``lab://NAME:/dev/vda``), as the "blocks never written" check reads them
(:mod:`volbench.analysis.validity_unwritten`)."""

from __future__ import annotations

from volbench.analysis.fitted_caps import volume_key
from volbench.analysis.written_ranges import RunWrites
from volbench.model import RunRecord
from volbench.plans.pts.options import NAME as PTS
from volbench.plans.pts.options import PtsSetup
from volbench.records import RecordError
from volbench.report.validity_sheets import Verdicts
from volbench.store.repository import Store


def written_key(run: RunRecord) -> str | None:
    """What names ``run``'s volume for what was written on it: its volume key, and for
    a place whose disk is made anew (a lab guest's, every ``volbench lab up``) the disk
    it was (:func:`volbench.plans.placement.fleet_preparation.guest_disk`)."""
    key = volume_key(run)
    places = run.settings.places
    target = places[0].target if key is not None and len(places) == 1 else None
    source = target.identity.source if target and target.identity else None
    return key if source is None else f"{key} ({source})"


def run_writes(run: RunRecord) -> RunWrites:
    """What ``run`` (read with its results) did to its volume: its tests' rows, the
    scratch file volbench laid out for it, a PTS run's purge, and the tests of a job
    file whose random offsets came from fio's random map (no ``norandommap``)."""
    purge = None
    if run.plan == PTS:
        try:
            purge = run.setup(PtsSetup).purge_method
        except RecordError:
            purge = None
    random_map = frozenset(
        w.name
        for w in run.settings.planned or ()
        if w.job_text is not None and w.rw.is_random and "norandommap" not in w.job_text
    )
    return RunWrites(
        run.id,
        run.target.capacity_bytes,
        run.aggregate,
        laid_out=run.target.kind == "file" and run.target.created_by_volbench,
        purge=purge,
        random_map=random_map,
    )


def volume_history(store: Store, run: RunRecord) -> tuple[RunWrites, ...] | None:
    """The runs stored on ``run``'s volume up to ``run`` (it included, as given), the
    oldest first; None when volbench cannot name its volume again (several places or
    a job file's several files at once, an imported output): what was written on it
    before is not known."""
    key = written_key(run)
    if key is None:
        return None
    earlier = [r for r in store.list_runs() if r.id < run.id and written_key(r) == key]
    found = [run_writes(store.get_run(r.id, raw=False)) for r in sorted(earlier, key=_id)]
    return (*found, run_writes(run))


def _id(run: RunRecord) -> int:
    return run.id


def with_history(store: Store, run: RunRecord, verdicts: Verdicts) -> RunRecord:
    """``run``, what the runs stored on its volume wrote before it given to the command's
    ``verdicts`` (:func:`volume_history`: the "blocks never written" check reads it), for
    every view of it the command shows
    (:meth:`volbench.report.validity_sheets.Verdicts.give_volume`)."""
    verdicts.give_volume(run, volume_history(store, run))
    return run
