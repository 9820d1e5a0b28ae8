"""Where a run would go, looked at read-only (``--dry-run``): the counterpart of
:func:`volbench.plans.placement.placed.placed`, which prepares it.

A target is inspected, never made: a file the run would create is described, and what
the safety checks would refuse is said, not raised. On several places the first one
stands for all; a place on another host is not looked at, nor is a path of the same
name on this machine (a guest's ``/dev/vda`` may be this machine's own disk).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from volbench.errors import UsageError, VolbenchError
from volbench.fio.executable import ENGINE_ORDER, best_engine
from volbench.model import NamedTarget, TargetInfo
from volbench.places import table
from volbench.plans.placement.fleet_preparation import REMOTE_SIZE
from volbench.plans.placement.fleet_spec import REMOTE_ENGINE, Fleet
from volbench.plans.placement.job_targets import NamedPath, run_target
from volbench.plans.placement.named import named_by
from volbench.plans.placement.preparation import DEFAULT_FILE_BYTES
from volbench.targets.safety import check_write_allowed
from volbench.targets.target import inspect
from volbench.units import format_bytes


@dataclass(frozen=True)
class PlacePreview:
    """What the look found: the target a dry run shows (on several places, the
    first's), what a real run would do to it first or refuse (``notes``), and the
    files a job file's tests open themselves (``named``: the run's target stands for
    them); ``remote``: a place is on another host (the run's engine is then
    :data:`REMOTE_ENGINE`, as :meth:`volbench.plans.placement.placed.Placement.engine`)."""

    target: TargetInfo
    notes: tuple[str, ...] = ()
    named: tuple[str, ...] = ()
    remote: bool = False

    def engine(self, ioengine: str | None) -> tuple[str, list[str]]:
        """The ioengine the run would use and what is said of it: ``ioengine`` when
        given; a job file's own files: its job file decides (``-``); places on other
        hosts: :data:`REMOTE_ENGINE`, never a probe of this machine; else
        :func:`choose_engine`."""
        if self.named:
            return ioengine or "-", []
        if self.remote:
            return ioengine or REMOTE_ENGINE, []
        return choose_engine(self.target, ioengine)


def previewed_place(
    fleet: Fleet | None,
    target: str,
    writes: bool,
    size_bytes: int | None = None,
    destroy_data: Sequence[str] = (),
    force: bool = False,
    named: Sequence[NamedPath] = (),
) -> PlacePreview:
    """Look at where a run would go (the arguments of :func:`placed`): the files and
    devices a job file names (``named``), else the first of ``fleet``'s places (a place
    on another host is shown as a block device of ``size_bytes``, else of the size its
    kind gives: UsageError without either, as its run), else ``target``."""
    if named:
        notes: list[str] = []
        infos = []
        for one in named:
            destroy = named_by(destroy_data, one.path)
            info, found = preview_target(
                one.path, one.writes, one.size_bytes or size_bytes, destroy, force
            )
            infos.append(NamedTarget(info, one.writes))
            notes += found
        return PlacePreview(run_target(infos), tuple(notes), tuple(n.path for n in named))
    notes = []
    if fleet is not None:
        first = fleet.places[0]
        target = first.path
        many = len(fleet.places) > 1
        notes.append(
            f"{len(fleet.places)} places at once; job files of the first, {first.label}"
            if many
            else f"job files of {first.label}"
        )
        if first.host is not None:  # as it is prepared: its size given, or its kind's
            size = size_bytes if size_bytes is not None else table.default_size(fleet.places)
            if size is None:
                raise UsageError(REMOTE_SIZE)
            return PlacePreview(TargetInfo(target, "block", size), tuple(notes), remote=True)
    destroy = destroy_data[0] if destroy_data else None
    info, found = preview_target(target, writes, size_bytes, destroy, force)
    remote = fleet is not None and fleet.remote
    return PlacePreview(info, (*notes, *found), remote=remote)


def preview_target(
    path: str,
    writes: bool,
    size_bytes: int | None = None,
    destroy_data: str | None = None,
    force: bool = False,
) -> tuple[TargetInfo, list[str]]:
    """What the run's target is, read-only, and what a real run would do to it first
    (create a scratch file) or refuse (the safety checks' word)."""
    target = os.path.abspath(path)
    notes = []
    if writes:
        try:
            check_write_allowed(target, destroy_data=destroy_data, force=force)
        except VolbenchError as exc:
            notes.append(f"a real run would be refused: {exc}")
    if os.path.exists(target):
        return inspect(target), notes
    size = size_bytes or DEFAULT_FILE_BYTES
    notes.append(f"{target} does not exist: a run would create it ({format_bytes(size)} of data)")
    return TargetInfo(target, "file", size, created_by_volbench=True), notes


def choose_engine(target: TargetInfo, ioengine: str | None) -> tuple[str, list[str]]:
    """The ioengine a run would use: the one given, else the first that reads the
    target (a read-only probe), else (no target yet) the first fio is asked for."""
    if ioengine:
        return ioengine, []
    if os.path.exists(target.path):
        return best_engine(Path(target.path)), []
    return ENGINE_ORDER[0], [f"ioengine: {ENGINE_ORDER[0]} if it reads the new file, else the next"]
