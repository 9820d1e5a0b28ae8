"""Where the lab keeps its files: ``$VOLBENCH_LAB_DIR``, else ``lab`` in volbench's
data directory (``~/.local/share/volbench/lab`` on Linux).

    kernels/debian/    the extracted ``linux-image-*`` package (never installed)
    images/KEY/        a built initramfs, keyed by the fio binary and the kernel
    guests/NAME/       one guest: guest.json, qemu.pid, serial.log, qmp.sock, disk.img,
                       shell.key (the key its shell channel asks for, lab/shell.py)

The lab's files are its owner's alone: every folder is made 0700 and every file 0600
as it is created (``mkdir``/``open`` with that mode, so there is no moment with wider
permissions; qemu's own files are made under ``umask 077``, lab/machine.py), and a
folder or file an older volbench left wider is narrowed when it is next used. The
guests' disks hold what runs wrote, and the shell key lets its holder run commands
as root in the guest.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import platformdirs

from volbench import output_file
from volbench.errors import UsageError

ENV_VAR = "VOLBENCH_LAB_DIR"
_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,30}\Z")
FOLDER_MODE = 0o700
FILE_MODE = 0o600


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


def private_folder(path: Path) -> Path:
    """``path``, the lab's folder or a folder in it, made (with every folder between
    them) so that only its owner can open it (:data:`FOLDER_MODE`); a folder that
    exists with other permissions is given that mode."""
    root = lab_dir()
    root.parent.mkdir(parents=True, exist_ok=True)
    parts = path.relative_to(root).parts
    for depth in range(len(parts) + 1):
        folder = root.joinpath(*parts[:depth])
        try:
            folder.mkdir(mode=FOLDER_MODE)
        except FileExistsError:
            if folder.stat().st_mode & 0o777 != FOLDER_MODE:
                os.chmod(folder, FOLDER_MODE)  # made by an older volbench, or by the user
    return path


def private_file(path: Path, append: bool = False) -> BinaryIO:
    """``path`` opened for writing (emptied, or at its end when ``append``), made so
    that only its owner can read it (:data:`FILE_MODE`, from its creation on), never
    through a final link nor onto a device (:func:`volbench.output_file.open_new`)."""
    handle = output_file.open_new(path, "the lab's file", FILE_MODE, append)
    try:
        if os.fstat(handle.fileno()).st_mode & 0o777 != FILE_MODE:
            os.fchmod(handle.fileno(), FILE_MODE)  # a file an older volbench made
    except BaseException:
        handle.close()
        raise
    return handle


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (:func:`private_file`)."""
    with private_file(path) as handle:
        handle.write(text.encode())


@contextlib.contextmanager
def lab_lock(what: str, folder: Path | None = None) -> Iterator[None]:
    """An exclusive lock for ``what`` (``lab up`` runs at once), held on
    ``.WHAT.lock`` in ``folder`` (default: the lab's folder; a folder that several
    labs share, such as a linked ``kernels/``, is locked in itself)."""
    where = private_folder(folder or lab_dir())
    with private_file(where / f".{what}.lock", append=True) as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
