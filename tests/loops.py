"""``losetup`` for tests, retried while another test worker takes the free device first:
``losetup -f`` picks the first free loop device and then attaches it, so two workers
picking at once make one fail with "Device or resource busy"; and while a device just
detached is still being let go (the kernel detaches it once its last opener closes it,
and udev probes it on each change): attaching a named device then fails the same way,
for over 2 s on a busy machine (CI: a device detached after its fio was killed)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Sequence

TRIES = 50
"""Up to 10 s (0.2 s apart): attaching is at once whenever the device is free."""


def losetup(arguments: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """``losetup ARGUMENTS`` (the command's path first), tried again on "busy"."""
    for _ in range(TRIES - 1):
        done = subprocess.run(
            list(arguments), capture_output=True, text=True, check=False, timeout=60
        )
        if done.returncode == 0 or "busy" not in done.stderr:
            return done
        time.sleep(0.2)
    return subprocess.run(list(arguments), capture_output=True, text=True, check=False, timeout=60)
