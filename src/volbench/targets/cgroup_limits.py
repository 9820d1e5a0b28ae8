"""The limits of the cgroup this process (and so fio, its child) runs in: the CPU
quota with how often it held the cgroup back, and the block I/O caps on a device.

Read-only: nothing here creates or changes a cgroup (:mod:`volbench.targets.cgroup`
makes the QoS plan's). A limit set on an ancestor binds every cgroup below it, so
each is read along the path from the process's cgroup up to the hierarchy's root and
the smallest wins. Sources of the file formats:

- ``/proc/self/cgroup`` (cgroups(7)): ``ID:CONTROLLERS:PATH``; cgroup v2 is ``0::PATH``.
- v1 ``cpu`` (kernel Documentation/scheduler/sched-bwc.rst): ``cpu.cfs_quota_us``
  (-1: none) per ``cpu.cfs_period_us``; ``cpu.stat`` ``nr_periods``, ``nr_throttled``,
  ``throttled_time`` (ns); ``cpuacct.usage`` (ns, the cpuacct controller).
- v2 (Documentation/admin-guide/cgroup-v2.rst): ``cpu.max`` ``$MAX $PERIOD`` (``max``:
  none); ``cpu.stat`` ``usage_usec``, ``nr_periods``, ``nr_throttled``,
  ``throttled_usec``; ``io.max`` lines ``MAJ:MIN rbps=N wbps=N riops=N wiops=N``.
- v1 ``blkio`` (admin-guide/cgroup-v1/blkio-controller.rst):
  ``blkio.throttle.{read,write}_{iops,bps}_device`` lines ``MAJ:MIN N``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from volbench.targets.kernel_file import kernel_text

PROC_SELF = Path("/proc/self")


def parse_membership(text: str) -> dict[str, str]:
    """Controller -> cgroup path from /proc/self/cgroup text (v2's line under ``""``)."""
    found: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(",") if parts[1] else [""]:
            found[controller] = parts[2]
    return found


def parse_mounts(text: str) -> dict[str, Path]:
    """Controller -> mount point of its v1 hierarchy (v2's under ``""``), from
    /proc/self/mounts text."""
    found: dict[str, Path] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 4:
            continue
        point = Path(fields[1].replace("\\040", " "))
        if fields[2] == "cgroup2":
            found.setdefault("", point)
        elif fields[2] == "cgroup":
            for option in fields[3].split(","):
                found.setdefault(option, point)
    return found


@dataclass(frozen=True)
class Hierarchies:
    """Where this process's cgroup of each controller is (its directory)."""

    dirs: dict[str, Path]
    """Controller -> directory (v1); ``""`` -> the v2 directory."""
    roots: dict[str, Path]

    def path_up(self, controller: str) -> list[Path]:
        """The cgroup directory of ``controller`` and its ancestors up to the root."""
        found = self.dirs.get(controller)
        root = self.roots.get(controller)
        if found is None or root is None:
            return []
        chain = [found]
        while chain[-1] != root and root in chain[-1].parents:
            chain.append(chain[-1].parent)
        return chain


def hierarchies(proc_self: Path = PROC_SELF, mounts_text: str | None = None) -> Hierarchies:
    """This process's cgroup directories (``proc_self``: whose /proc to read)."""
    membership = parse_membership(kernel_text(proc_self / "cgroup") or "")
    mounts = parse_mounts(
        mounts_text if mounts_text is not None else kernel_text(proc_self / "mounts") or ""
    )
    dirs, roots = {}, {}
    for controller, path in membership.items():
        point = mounts.get(controller)
        if point is not None:
            dirs[controller] = point / path.lstrip("/")
            roots[controller] = point
    return Hierarchies(dirs, roots)


def _number(text: str | None) -> int | None:
    value = (text or "").strip()
    return int(value) if value.lstrip("-").isdigit() else None


def _stat(text: str | None) -> dict[str, int]:
    found = {}
    for line in (text or "").splitlines():
        key, _, value = line.partition(" ")
        if value.strip().isdigit():
            found[key] = int(value)
    return found


@dataclass(frozen=True)
class CpuQuota:
    """The CPU quota that binds this process (cores), and the cgroup that sets it."""

    cores: float
    group: Path
    version: int


def cpu_quota(found: Hierarchies) -> CpuQuota | None:
    """The smallest CPU quota on this process's cgroup path (None: no quota)."""
    best: CpuQuota | None = None
    for group in found.path_up("cpu"):
        quota = _number(kernel_text(group / "cpu.cfs_quota_us"))
        period = _number(kernel_text(group / "cpu.cfs_period_us"))
        if quota and quota > 0 and period and (best is None or quota / period < best.cores):
            best = CpuQuota(quota / period, group, 1)
    for group in found.path_up(""):
        words = (kernel_text(group / "cpu.max") or "").split()
        if len(words) == 2 and words[0].isdigit() and words[1].isdigit() and int(words[1]) > 0:
            cores = int(words[0]) / int(words[1])
            if best is None or cores < best.cores:
                best = CpuQuota(cores, group, 2)
    return best


@dataclass(frozen=True)
class CpuStat:
    """Counters of the quota's cgroup: CFS periods, periods throttled, CPU time used
    (ns; None where the kernel does not say)."""

    periods: int
    throttled: int
    usage_ns: int | None


def cpu_stat(quota: CpuQuota, found: Hierarchies) -> CpuStat | None:
    """The counters of ``quota``'s cgroup now (None when it cannot be read)."""
    stat = _stat(kernel_text(quota.group / "cpu.stat"))
    if "nr_periods" not in stat:
        return None
    usage: int | None = None
    if quota.version == 2:
        usage = stat["usage_usec"] * 1000 if "usage_usec" in stat else None
    else:  # cpuacct sits in its own hierarchy, or beside cpu in a shared one
        same = quota.group / "cpuacct.usage"
        relative = quota.group.relative_to(found.roots["cpu"]) if "cpu" in found.roots else None
        other = found.roots.get("cpuacct")
        usage = _number(kernel_text(same))
        if usage is None and other is not None and relative is not None:
            usage = _number(kernel_text(other / relative / "cpuacct.usage"))
    return CpuStat(stat["nr_periods"], stat.get("nr_throttled", 0), usage)


@dataclass(frozen=True)
class IoCaps:
    """Block I/O caps on one device from the cgroup path (None: no cap)."""

    read_iops: int | None = None
    write_iops: int | None = None
    read_bps: int | None = None
    write_bps: int | None = None

    def any(self) -> bool:
        return any(
            v is not None for v in (self.read_iops, self.write_iops, self.read_bps, self.write_bps)
        )


def _smaller(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


_V1_FILES = (
    ("read_iops", "blkio.throttle.read_iops_device"),
    ("write_iops", "blkio.throttle.write_iops_device"),
    ("read_bps", "blkio.throttle.read_bps_device"),
    ("write_bps", "blkio.throttle.write_bps_device"),
)
_V2_KEYS = {"riops": "read_iops", "wiops": "write_iops", "rbps": "read_bps", "wbps": "write_bps"}


def io_caps(devnum: str, found: Hierarchies) -> IoCaps:
    """The caps on device ``devnum`` (``MAJ:MIN`` of a whole disk) binding this process."""
    caps: dict[str, int | None] = dict.fromkeys(_V2_KEYS.values())
    for group in found.path_up("blkio"):
        for field, name in _V1_FILES:
            for line in (kernel_text(group / name) or "").splitlines():
                key, _, value = line.partition(" ")
                if key == devnum and value.strip().isdigit():
                    caps[field] = _smaller(caps[field], int(value))
    for group in found.path_up(""):
        for line in (kernel_text(group / "io.max") or "").splitlines():
            words = line.split()
            if not words or words[0] != devnum:
                continue
            for item in words[1:]:
                key, _, value = item.partition("=")
                if key in _V2_KEYS and value.isdigit():
                    caps[_V2_KEYS[key]] = _smaller(caps[_V2_KEYS[key]], int(value))
    return IoCaps(**caps)


def device_number(device: str, sys_root: Path = Path("/sys")) -> str | None:
    """``MAJ:MIN`` of a block device by its sysfs name (``sda``), None when unknown."""
    text = kernel_text(sys_root / "class" / "block" / device / "dev")
    return text.strip() if text else None
