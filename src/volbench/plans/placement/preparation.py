"""Getting a target ready for a plan: safety first, then a scratch file if needed."""

from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path

from volbench.errors import TargetError
from volbench.fio.job_text import check_value
from volbench.model import TargetInfo
from volbench.places.table import purge
from volbench.plans.runs.reporter import Reporter
from volbench.targets.safety import canonical, check_write_allowed
from volbench.targets.scratch import prepare_file
from volbench.targets.target import inspect, require_capacity
from volbench.units import format_bytes

DEFAULT_FILE_BYTES = 1 << 30
"""Size of a scratch file target when the user gives none: 1 GiB."""


@dataclass(frozen=True)
class PurgeSettings:
    """How a target is purged before a plan that purges (PTS) writes it: the method
    (``--purge-method``), the ATA security password, whether ``--destroy-data`` named
    the device, and whether fio's outputs are replayed (nothing is purged then)."""

    method: str = "auto"
    ata_password: str | None = None
    data_allowed: bool = False  # --destroy-data was given for this device
    replay: bool = False  # fio's outputs are replayed: nothing writes, nothing to purge

    def apply(self, target: TargetInfo) -> str:
        """Purge ``target``; return the method used (as recorded in the run)."""
        if self.replay:
            return "none (replayed fio outputs)"
        return purge(target, self.method, self.ata_password, self.data_allowed)


def _is_block_device(path: Path) -> bool:
    try:
        return stat.S_ISBLK(path.stat().st_mode)
    except FileNotFoundError:
        return False
    except PermissionError as exc:
        raise TargetError(
            f"no permission to read {path}: run as root or pick another target"
        ) from exc


def prepare_target(
    path: str,
    writes: bool,
    reporter: Reporter,
    size_bytes: int | None = None,
    destroy_data: str | None = None,
    force: bool = False,
) -> TargetInfo:
    """Check and, for files, create the target; return what it is.

    Block devices are never created or resized: they are checked by the safety
    rules when the plan writes, and must hold ``size_bytes`` when one is given.
    A file target is created (filled with real data) at ``size_bytes`` or 1 GiB
    when missing, also for plans that only read (they need data to read); a file
    volbench did not create is only written with ``force``.
    """
    # fio runs in the run folder (relative paths move) and opens the path again every
    # round (links can be re-pointed): the canonical path is what the checks below look
    # at, what the job file names and what is checked again before every round
    # (TargetInfo.identity), so it must be one fio reads as written (no newline,
    # comment or $ expansion): checked before anything.
    target = Path(check_value("--target", canonical(path), path=True))
    if _is_block_device(target):
        if writes:
            check_write_allowed(str(target), destroy_data=destroy_data, force=force)
        info = inspect(str(target))
        if size_bytes is not None:
            require_capacity(info, size_bytes)
        return info
    if not writes and target.exists():  # read-only plans read what is there
        info = inspect(str(target))
        if size_bytes is not None:
            require_capacity(info, size_bytes)
        return info
    check_write_allowed(str(target), destroy_data=destroy_data, force=force)
    wanted = size_bytes or (target.stat().st_size if target.exists() else DEFAULT_FILE_BYTES)
    started = False

    def progress(done: int, total: int) -> None:
        nonlocal started
        if not started:  # only when data is written: a reused file reports nothing
            reporter.preparing(f"laying out {format_bytes(total)} scratch file {target}", total)
            started = True
        reporter.prepared(done)

    return prepare_file(target, wanted, force=force, progress=progress)
