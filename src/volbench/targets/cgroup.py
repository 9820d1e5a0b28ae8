"""Per-tenant I/O limits as cgroups that volbench creates (``volbench-p<plan>-<tenant>``).

Two kernel interfaces, chosen by what actually throttles on this host:

* cgroup v2 with the ``io`` controller enabled: ``io.max`` takes
  ``MAJ:MIN riops=N wiops=N rbps=N wbps=N`` and ``io.weight`` takes
  ``default N`` (1..10000) (kernel Documentation/admin-guide/cgroup-v2.rst, "IO").
* cgroup v1 ``blkio``: ``blkio.throttle.{read,write}_{iops,bps}_device`` take
  ``MAJ:MIN N``; ``blkio.weight`` (10..1000) exists only with a proportional
  scheduler (CFQ/BFQ) (kernel admin-guide/cgroup-v1/blkio-controller.rst).

Throttle rules are keyed by the whole disk's MAJ:MIN (the kernel refuses
partitions). Only directories named ``volbench-*`` are ever created or removed.

Which cgroups are volbench's: each one it creates carries the extended attribute
``trusted.volbench.plan`` (the plan's id) on its directory, set before any limit is
written; removal by plan or ``--all`` takes only directories that carry it. The
mark lives with the cgroup itself, so it cannot go stale or be lost with a data
folder (a registry file could: another user's ``$HOME`` under sudo, a deleted data
dir, a name re-created by someone else); ``trusted.*`` attributes can only be set
with CAP_SYS_ADMIN, so an unprivileged user cannot mark a cgroup for volbench to
remove, and cgroupfs (kernfs) keeps them on v1 and v2 hierarchies alike. A
``volbench-*`` directory without the mark (made by hand, or by an older volbench)
is never removed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from volbench.errors import TargetError
from volbench.store import owner as owners

PREFIX = "volbench-"
MARK = "trusted.volbench.plan"
"""Extended attribute on each cgroup directory volbench made: the plan's id."""
OWNER = "trusted.volbench.owner"
"""Extended attribute on a cgroup volbench made for one run only: the process that made
it (:meth:`volbench.store.owner.Owner.text`)."""
V1_DEFAULT_WEIGHT = 500
"""blkio.weight a new v1 cgroup starts with."""
V2_DEFAULT_WEIGHT = 100
"""io.weight a new v2 cgroup starts with."""
MOUNTS = Path("/proc/self/mounts")
SETTLE_S = 2.0
"""Seconds :func:`remove` waits for a busy cgroup whose processes are ending."""


@dataclass(frozen=True)
class Hierarchy:
    """A cgroup hierarchy that can throttle block I/O: ``version`` 1 (blkio) or 2 (io)."""

    root: Path
    version: int

    def path(self, name: str) -> Path:
        """The directory of volbench's cgroup for tenant ``name``."""
        return self.root / f"{PREFIX}{name}"


@dataclass(frozen=True)
class Limits:
    """One tenant's limits: IOPS and bytes/s per direction (0 = no limit), weight;
    ``group`` names its cgroup ``volbench-<group>`` when it is not the tenant's name
    (a plan's cgroups are ``volbench-p<plan id>-<tenant>``: :mod:`volbench.plans.qos.setup`)."""

    tenant: str
    read_iops: int
    write_iops: int
    read_bps: int
    write_bps: int
    weight_v1: int
    weight_v2: int
    group: str = ""

    @property
    def cgroup(self) -> str:
        """The cgroup's name after ``volbench-``."""
        return self.group or self.tenant


@dataclass(frozen=True)
class Written:
    """One line volbench wrote to one cgroup file (or why it could not)."""

    tenant: str
    file: str
    value: str


def _mounts(text: str) -> list[tuple[str, str, set[str]]]:
    """(mount point, type, options) of every line of /proc/self/mounts."""
    found = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 4:
            point = fields[1].replace("\\040", " ")
            found.append((point, fields[2], set(fields[3].split(","))))
    return found


def _read_words(path: Path) -> list[str]:
    try:
        return path.read_text().split()
    except OSError:
        return []


def find_hierarchy(mounts_text: str | None = None) -> Hierarchy:
    """The hierarchy that throttles I/O here: v2 when its root offers ``io``, else v1 blkio.

    Raises TargetError (one line) when neither is available.
    """
    text = MOUNTS.read_text() if mounts_text is None else mounts_text
    mounts = _mounts(text)
    for point, kind, _ in mounts:
        controllers = Path(point) / "cgroup.controllers"
        if kind == "cgroup2" and "io" in _read_words(controllers):
            return Hierarchy(Path(point), 2)
    for point, kind, options in mounts:
        throttle = Path(point) / "blkio.throttle.read_iops_device"
        if kind == "cgroup" and "blkio" in options and throttle.exists():
            return Hierarchy(Path(point), 1)
    raise TargetError(
        "no cgroup I/O controller on this host (neither cgroup v2 'io' nor v1 'blkio'"
        " throttling is mounted): QoS limits cannot be applied here"
    )


def require_root() -> None:
    if os.geteuid() != 0:
        raise TargetError("creating cgroups needs root: run volbench qos as root (sudo)")


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value + "\n")
    except OSError as exc:
        raise TargetError(
            f"cannot write {value!r} to {path}: {exc.strerror or exc}"
            " (is the device a whole disk with I/O control?)"
        ) from exc


def _lines(hierarchy: Hierarchy, devnum: str, limits: Limits) -> list[tuple[str, str]]:
    """(file, value) pairs realising ``limits`` for device ``devnum`` (``MAJ:MIN``):
    read limits to the read keys and files, write limits to the write ones."""
    per_direction = {
        "read": (limits.read_iops, limits.read_bps),
        "write": (limits.write_iops, limits.write_bps),
    }
    if hierarchy.version == 2:
        parts = [
            f"{key}={value if value > 0 else 'max'}"
            for key, value in (
                ("riops", limits.read_iops),
                ("wiops", limits.write_iops),
                ("rbps", limits.read_bps),
                ("wbps", limits.write_bps),
            )
        ]
        return [
            ("io.max", f"{devnum} {' '.join(parts)}"),
            ("io.weight", f"default {limits.weight_v2}"),
        ]
    lines = []
    for direction, (iops, bps) in per_direction.items():
        if iops > 0:
            lines.append((f"blkio.throttle.{direction}_iops_device", f"{devnum} {iops}"))
        if bps > 0:
            lines.append((f"blkio.throttle.{direction}_bps_device", f"{devnum} {bps}"))
    lines.append(("blkio.weight", str(limits.weight_v1)))
    return lines


def apply(
    hierarchy: Hierarchy,
    devnum: str,
    tenants: Sequence[Limits],
    plan: str,
    *,
    owned: bool,
) -> list[Written]:
    """Create ``volbench-<group>`` cgroups marked as plan ``plan``'s (:data:`MARK`) with
    their limits; return what was written. ``owned``: they are this process's, for its
    run only (:data:`OWNER`: removed by :func:`reclaim` once it has ended); else they
    stay until ``qos clear``.

    A weight file the kernel does not offer (v1 without CFQ/BFQ) is reported as
    ``not available`` instead of written. On any failure every cgroup created by
    this call is removed again before the error is raised.
    """
    created: list[Path] = []
    written: list[Written] = []
    try:
        if hierarchy.version == 2:
            _write(hierarchy.root / "cgroup.subtree_control", "+io")
        for limits in tenants:
            path = hierarchy.path(limits.cgroup)
            if path.exists():
                raise TargetError(
                    f"cgroup {path} exists already: remove it with `volbench qos clear PLAN` first"
                )
            path.mkdir()
            created.append(path)
            if owned:
                _set(path, OWNER, owners.current().text())
            _mark(path, plan)
            for name, value in _lines(hierarchy, devnum, limits):
                if name.endswith("weight") and not (path / name).exists():
                    written.append(Written(limits.tenant, name, "not available (no weight file)"))
                    continue
                _write(path / name, value)
                written.append(Written(limits.tenant, str(path / name), value))
    except BaseException:
        with contextlib.suppress(TargetError):  # the first error is the one to report
            remove(created)
        raise
    return written


def remove(paths: Sequence[Path], settle_s: float = SETTLE_S) -> list[str]:
    """Remove the given volbench cgroups (each must be empty of processes); return the
    ones removed. A cgroup stays busy until its last process that ended is reaped (by
    its parent, or by init when its parent ended first), so a busy one is tried again
    for ``settle_s`` seconds. Raises TargetError naming the first one still busy."""
    removed, busy = remove_idle(paths)
    deadline = time.monotonic() + settle_s
    while busy and time.monotonic() < deadline:
        time.sleep(0.05)
        again, busy = remove_idle([Path(p) for p in busy])
        removed += again
    if busy:
        raise TargetError(
            f"cgroup {busy[0]} still has processes: stop them, then `volbench qos clear`"
        )
    return removed


def remove_idle(paths: Sequence[Path]) -> tuple[list[str], list[str]]:
    """Remove every given volbench cgroup that has no processes; return (removed, busy)."""
    removed: list[str] = []
    busy: list[str] = []
    for path in paths:
        if not path.name.startswith(PREFIX):
            raise ValueError(f"refusing to remove {path}: not a volbench cgroup")
        try:
            path.rmdir()
            removed.append(str(path))
        except FileNotFoundError:
            continue
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                raise TargetError(f"cannot remove cgroup {path}: {exc.strerror or exc}") from exc
            busy.append(str(path))
    return removed, busy


def _mark(path: Path, plan: str) -> None:
    """Mark the new cgroup ``path`` as plan ``plan``'s (see the module docstring)."""
    _set(path, MARK, plan)


def _set(path: Path, name: str, value: str) -> None:
    try:
        os.setxattr(path, name, value.encode())
    except OSError as exc:
        raise TargetError(
            f"cannot mark cgroup {path} as volbench's ({name}): {exc.strerror or exc}"
            " (the cgroup filesystem must keep trusted.* extended attributes)"
        ) from exc


def owner_of(path: Path) -> owners.Owner | None:
    """The volbench process that made cgroup ``path`` for its run only; None when it
    records none (``qos apply``'s, an older volbench's)."""
    try:
        return owners.Owner.parse(os.getxattr(path, OWNER).decode(errors="replace"))
    except OSError:
        return None


def left_over(hierarchy: Hierarchy, plan: str | None = None) -> list[Path]:
    """volbench's cgroups (of plan ``plan`` when given) whose recorded owner has ended."""
    found = []
    for path in ours(hierarchy, plan):
        owner = owner_of(path)
        if owner is not None and not owners.alive(owner, None):
            found.append(path)
    return found


def reclaim(hierarchy: Hierarchy) -> list[str]:
    """Remove the idle cgroups a volbench process made for its run and left when it
    ended (SIGKILL: :func:`left_over`); a line for each, and for each one still busy
    (left, with what to do)."""
    lines = []
    for path in left_over(hierarchy):
        owner = owner_of(path)
        by = f"left by volbench {owner.describe() if owner else ''}, which has ended"
        removed, busy = remove_idle([path])
        if removed:
            lines.append(f"removed cgroup {path}, {by}")
        if busy:
            lines.append(
                f"cgroup {path}, {by}, still has processes: stop them, then `volbench qos clear`"
            )
    return lines


def plan_of(path: Path) -> str | None:
    """The plan id marked on cgroup ``path``; None when volbench did not make it."""
    try:
        return os.getxattr(path, MARK).decode(errors="replace")
    except OSError:
        return None


def ours(hierarchy: Hierarchy, plan: str | None = None) -> list[Path]:
    """volbench's cgroups in ``hierarchy``: directories named ``volbench-*`` that carry
    volbench's mark (of plan ``plan`` when given)."""
    found = []
    for path in sorted(hierarchy.root.glob(f"{PREFIX}*")):
        marked = plan_of(path) if path.is_dir() else None
        if marked is not None and plan in (None, marked):
            found.append(path)
    return found


def join(hierarchy: Hierarchy, group: str, pid: int) -> None:
    """Move process ``pid`` into cgroup ``volbench-<group>`` (its children follow it)."""
    _write(hierarchy.path(group) / "cgroup.procs", str(pid))
