"""A guest disk limited by the guest's own kernel: cgroup v2 ``io.max`` (``lab limit
NAME --io-max``), as a container host limits its containers' volumes, beside QEMU's
throttle group (:mod:`volbench.lab.throttle`), as a cloud's hypervisor does.

The kernel's ``io.max`` (linux Documentation/admin-guide/cgroup-v2.rst, "IO Interface
Files") takes one line a device, ``MAJ:MIN riops=N wiops=N rbps=N wbps=N`` (``max``:
no limit), and holds the processes of its cgroup to them: reads and writes each a
budget of their own, IOPS and bytes a second, no burst and no I/O unit (blk-throttle,
block/blk-throttle.c). The guest (:mod:`volbench.lab.init_script`) mounts nothing of
cgroup2 itself: :func:`script` mounts it, enables the ``io`` controller, makes
:data:`GROUP` and moves its ``/init`` (which restarts fio's server) and every fio
process into it, so fio's jobs (threads of the server's process for each client) are
held, then writes the disk's line.
"""

from __future__ import annotations

from volbench.errors import FioError, UsageError
from volbench.lab.shell import run_in_guest
from volbench.lab.throttle import Limits

ROOT = "/sys/fs/cgroup"
GROUP = f"{ROOT}/volbench-io"
"""The guest's cgroup whose ``io.max`` holds fio."""
DISK = "vda"
"""The guest's limited disk (virtio-blk, the first)."""


def line(limits: Limits) -> str:
    """The ``io.max`` keys of ``limits`` (``riops=1000 wiops=max rbps=max wbps=12000000``):
    every key, ``max`` where no limit, so the line replaces the device's whole."""
    figures = {
        "riops": limits.iops_read,
        "wiops": limits.iops_write,
        "rbps": limits.bps_read,
        "wbps": limits.bps_write,
    }
    return " ".join(f"{key}={b.rate if b else 'max'}" for key, b in figures.items())


def check(limits: Limits) -> None:
    """UsageError unless ``io.max`` can hold ``limits``: each direction's IOPS and
    MB/s, without a burst or an I/O unit."""
    shared = limits.iops_total is not None or limits.bps_total is not None
    bursts = any(
        b is not None and b.burst
        for b in (limits.iops_read, limits.iops_write, limits.bps_read, limits.bps_write)
    )
    if shared or bursts or limits.iops_size:
        raise UsageError(
            "--io-max limits each direction's IOPS and MB/s only (cgroup v2 io.max): give"
            " --iops-read/--iops-write/--mbps-read/--mbps-write, without a burst or --io-unit"
        )


def script(limits: Limits | None) -> str:
    """The guest's one shell line that gives its disk ``limits`` through ``io.max``
    (None: no limit) and prints the device's ``io.max`` line as the kernel holds it."""
    keys = line(limits) if limits is not None else "riops=max wiops=max rbps=max wbps=max"
    return (
        f"grep -q ' {ROOT} cgroup2 ' /proc/mounts || mount -t cgroup2 none {ROOT};"
        f" echo +io > {ROOT}/cgroup.subtree_control; mkdir -p {GROUP};"
        f" for p in 1 $(pidof fio); do echo $p > {GROUP}/cgroup.procs; done;"
        f' echo "$(cat /sys/block/{DISK}/dev) {keys}" > {GROUP}/io.max;'
        f" cat {GROUP}/io.max"
    )


def apply(name: str, limits: Limits | None) -> str:
    """Give running guest ``name``'s disk ``limits`` through its kernel's ``io.max``
    (None: none); the line the kernel holds now. UsageError when the guest's kernel did
    not take them (no ``io`` controller: a kernel without blk-throttle)."""
    try:
        held = run_in_guest(name, script(limits)).strip()
    except FioError as exc:
        raise UsageError(f"lab guest {name}: io.max not set: {exc}") from exc
    wanted = line(limits) if limits is not None else ""
    if limits is not None and not all(part in held for part in wanted.split() if "max" not in part):
        raise UsageError(
            f"lab guest {name}: its kernel holds io.max {held or 'empty'!r}, not {wanted!r}"
            " (a guest kernel without the io controller: boot another --kernel)"
        )
    return held
