"""Where the lab keeps its files: ``$VOLBENCH_LAB_DIR``, else ``lab`` in volbench's
data directory (``~/.local/share/volbench/lab`` on Linux).

    kernels/debian/    the extracted ``linux-image-*`` package (never installed)
    images/KEY/        a built initramfs, keyed by the fio binary and the kernel
    guests/NAME/       one guest: guest.json, qemu.pid, serial.log, qmp.sock, disk.img
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import platformdirs

from volbench import output_file
from volbench.errors import UsageError

ENV_VAR = "VOLBENCH_LAB_DIR"
_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,30}\Z")


def lab_dir() -> Path:
    """The lab's folder (not created here)."""
    given = os.environ.get(ENV_VAR)
    if given:
        return output_file.check_folder(given, f"the lab's folder ({ENV_VAR})")
    return output_file.check_folder(
        Path(platformdirs.user_data_dir("volbench")) / "lab", "the lab's folder (XDG_DATA_HOME)"
    )


def guests_dir() -> Path:
    """The folder holding one folder per guest."""
    return lab_dir() / "guests"


def check_name(name: str) -> str:
    """A guest's name: 1-31 lower-case letters, digits and ``-``, first a letter or
    digit (it names a folder, a host ``lab://NAME`` and the guest's hostname)."""
    if not _NAME.match(name):
        raise UsageError(
            f"invalid guest name {name[:40]!r}: use 1-31 lower-case letters, digits and -"
            " (e.g. gp2-100)"
        )
    return name


def guest_dir(name: str) -> Path:
    """The folder of guest ``name`` (checked; not created here)."""
    return guests_dir() / check_name(name)
