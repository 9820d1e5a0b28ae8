"""``losetup`` for tests, retried while another test worker takes the free device first:
``losetup -f`` picks the first free loop device and then attaches it, so two workers
picking at once make one fail with "Device or resource busy"; and while a device just
detached is still being let go (the kernel detaches it once its last opener closes it,
and udev probes it on each change): attaching a named device then fails the same way,
for over 2 s on a busy machine (CI: a device detached after its fio was killed).

Every attach here holds one lock of the machine's test workers (``flock`` on
:data:`LOCK`), so a test that swaps the image under a device's name (:func:`reattach`:
detach and attach again) does it with no worker's ``losetup -f`` in between (CI: a
device detached for a swap was taken by another worker, and the swap found it busy for
10 s)."""

from __future__ import annotations

import contextlib
import fcntl
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

TRIES = 50
"""Up to 10 s (0.2 s apart): attaching is at once whenever the device is free."""
LOCK = Path(tempfile.gettempdir()) / "volbench-tests-losetup.lock"
"""The lock every test worker's attach holds."""


@contextlib.contextmanager
def claimed() -> Iterator[None]:
    """No other test worker attaches a loop device meanwhile."""
    with LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run(arguments: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(arguments), capture_output=True, text=True, check=False, timeout=60)


def losetup(arguments: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """``losetup ARGUMENTS`` (the command's path first), tried again on "busy"."""
    for _ in range(TRIES - 1):
        with claimed():
            done = _run(arguments)
        if done.returncode == 0 or "busy" not in done.stderr:
            return done
        time.sleep(0.2)
    with claimed():
        return _run(arguments)


def backing(device: str) -> Path | None:
    """The image loop ``device`` reads (None: not attached; the kernel's " (deleted)"
    after an image removed meanwhile left out)."""
    name = Path(device).name
    try:
        text = Path(f"/sys/class/block/{name}/loop/backing_file").read_text().strip()
    except OSError:
        return None
    return Path(text.removesuffix(" (deleted)"))


def reattach(
    device: str, old: Path, image: Path, options: Sequence[str] = ()
) -> subprocess.CompletedProcess[str]:
    """Loop ``device`` over ``image`` in place of ``old`` (detached first, and only while
    ``old`` is what it reads: a device another worker took is left alone), with no other
    worker's attach in between; tried again while the kernel lets ``old`` go."""
    with claimed():
        if backing(device) == old:
            _run(["losetup", "-d", device])
        command = ["losetup", *options, device, str(image)]
        for _ in range(TRIES * 4 - 1):  # 0.05 s apart: the device is ours once free
            done = _run(command)
            if done.returncode == 0 or "busy" not in done.stderr:
                return done
            time.sleep(0.05)
        return _run(command)
