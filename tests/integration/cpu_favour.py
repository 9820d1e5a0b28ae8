"""A cgroup of the cpu controller with the largest CPU weight, for processes a test
must keep running on a busy machine (a lab guest's QEMU, whose one emulated vCPU
would otherwise wait behind the other test worker and any CPU hog; a QD 1 test there
then loses a few percent to the guest, not to the limiter under test).

The weight decides only when the CPUs are contended; it takes nothing from a machine
that is idle. The group is ``volbench-favour-PID-N``, removed after, with whatever
still runs in it moved back to the root group first.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

V1 = Path("/sys/fs/cgroup/cpu")
V2 = Path("/sys/fs/cgroup")
MAX_SHARES = 262144
"""cpu.shares at most (cgroup v1; kernel sched-design-CFS: 1 << 18)."""
MAX_WEIGHT = 10000
"""cpu.weight at most (cgroup v2, Documentation/admin-guide/cgroup-v2.rst)."""

Favour = Callable[[int], None]


def _root_and_file() -> tuple[Path, str, str] | None:
    if (V1 / "cpu.shares").exists() or (V1 / "cgroup.procs").exists():
        return V1, "cpu.shares", str(MAX_SHARES)
    controllers = V2 / "cgroup.subtree_control"
    if controllers.exists() and "cpu" in controllers.read_text().split():
        return V2, "cpu.weight", str(MAX_WEIGHT)
    return None


@contextlib.contextmanager
def favoured() -> Iterator[Favour]:
    """``favour(pid)`` moves a process (all its threads) into the group; a no-op where
    no cpu controller is at hand (the test then runs at the machine's mercy)."""
    found = _root_and_file() if os.geteuid() == 0 else None
    if found is None:
        yield lambda pid: None
        return
    root, weight, most = found
    group = root / f"volbench-favour-{os.getpid()}-{time.monotonic_ns()}"
    group.mkdir()
    try:
        (group / weight).write_text(most)

        def favour(pid: int) -> None:
            with contextlib.suppress(ProcessLookupError, OSError):
                (group / "cgroup.procs").write_text(str(pid))

        yield favour
    finally:
        for _ in range(50):
            with contextlib.suppress(OSError):
                for pid in (group / "cgroup.procs").read_text().split():
                    with contextlib.suppress(OSError):
                        (root / "cgroup.procs").write_text(pid)
                group.rmdir()
            if not group.exists():
                break
            time.sleep(0.1)
