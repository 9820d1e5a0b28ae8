"""Fixtures shared by the whole test suite.

Loop devices: tests that need a real block device use ``loop_device``, which
makes devices only from image files under the test's ``tmp_path`` and always
detaches exactly the devices it attached (never any other loop device).
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

import pytest

from loops import backing
from loops import losetup as losetup_retrying
from suite_order import FIRST_MODULES

MiB = 1024 * 1024
SHM = Path("/dev/shm")
"""Where ``loop_device(in_memory=True)`` puts its images (a tmpfs: memory)."""


def find_tool(name: str) -> str | None:
    """The path of a system tool, also looking in sbin directories not on PATH."""
    found = shutil.which(name)
    if found:
        return found
    for directory in ("/usr/sbin", "/sbin", "/usr/bin", "/bin"):
        candidate = os.path.join(directory, name)
        if os.access(candidate, os.X_OK):
            return candidate
    return None


class LoopFactory(Protocol):
    """``make(size_mib=64, *, setup=None, partitions=False, in_memory=False) ->
    "/dev/loopN"``."""

    def __call__(
        self,
        size_mib: int = 64,
        *,
        setup: Callable[[Path], object] | None = None,
        partitions: bool = False,
        in_memory: bool = False,
    ) -> str: ...


def _partition_names(device: str) -> list[str]:
    sysfs = Path("/sys/class/block") / os.path.basename(device)
    return sorted(p.name for p in sysfs.iterdir() if (p / "partition").exists())


def _detach(losetup: str, device: str, image: Path) -> None:
    """Detach ``device`` only if it is still backed by our ``image``."""
    current = backing(device)
    if current is None:
        return  # already gone
    if os.path.realpath(current) != os.path.realpath(image):
        return  # not ours any more: leave it alone
    partx = find_tool("partx")
    if partx and _partition_names(device):
        subprocess.run([partx, "-d", device], capture_output=True, check=False)
    subprocess.run([losetup, "-d", device], capture_output=True, check=False)


@pytest.fixture
def loop_device(tmp_path: Path) -> Iterator[LoopFactory]:
    """Factory for loop devices backed by image files in ``tmp_path``.

    ``setup(image)`` runs on the image *file* before it is attached (mkfs,
    sfdisk ...). ``partitions=True`` attaches with ``-P`` and, on kernels
    without a partition-table parser, adds the partitions with ``partx -a``.
    ``in_memory=True`` puts the image in /dev/shm instead where there is one (removed
    at the end): a device whose latency the machine's own disk, busy with other tests,
    does not set, so a cap measured on it is the cgroup's, not the disk's.
    Skips the test unless running as root with losetup available.
    """
    if os.geteuid() != 0:
        pytest.skip("loop devices need root")
    losetup = find_tool("losetup")
    if losetup is None:
        pytest.skip("losetup is not installed")
    created: list[tuple[str, Path]] = []
    in_shm: list[Path] = []
    counter = itertools.count()

    def make(
        size_mib: int = 64,
        *,
        setup: Callable[[Path], object] | None = None,
        partitions: bool = False,
        in_memory: bool = False,
    ) -> str:
        name = f"loop-{next(counter)}.img"
        if in_memory and SHM.is_dir():
            image = Path(tempfile.mkdtemp(prefix="volbench-test-", dir=SHM)) / name
            in_shm.append(image)
        else:
            image = tmp_path / name
        with image.open("wb") as f:
            f.truncate(size_mib * MiB)
        if setup is not None:
            setup(image)
        cmd = [losetup, "-f", "--show", "--direct-io=on"]
        cmd += ["-P"] if partitions else []
        proc = losetup_retrying([*cmd, str(image)])
        if proc.returncode != 0:
            pytest.skip(f"cannot attach a loop device: {proc.stderr.strip()}")
        device = proc.stdout.strip()
        created.append((device, image))
        partx = find_tool("partx")
        if partitions and not _partition_names(device) and partx:
            subprocess.run([partx, "-a", device], capture_output=True, check=False)
        return device

    try:
        yield make
    finally:
        for device, image in reversed(created):
            _detach(losetup, device, image)
        for image in in_shm:
            shutil.rmtree(image.parent, ignore_errors=True)


@pytest.fixture
def mkfs_ext4(system_tool: Callable[[str], str]) -> Callable[[Path], None]:
    """A ``loop_device`` ``setup`` that puts an ext4 filesystem on the image file."""
    tool = system_tool("mkfs.ext4")

    def setup(image: Path) -> None:
        subprocess.run([tool, "-q", "-F", str(image)], check=True, capture_output=True)

    return setup


@pytest.fixture
def system_tool() -> Callable[[str], str]:
    """``system_tool("mkfs.ext4")``: the tool's path; skips the test when it is absent."""

    def get(name: str) -> str:
        path = find_tool(name)
        if path is None:
            pytest.skip(f"{name} is not installed")
        return path

    return get


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """:data:`FIRST_MODULES` first; every other module after them, in collection order
    (a stable sort: each module's tests stay in their order)."""
    rank = {name: index for index, name in enumerate(FIRST_MODULES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
