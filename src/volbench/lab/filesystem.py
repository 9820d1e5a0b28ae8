"""A filesystem on a guest's disk: made on this machine in the guest's own disk image
(a regular file volbench created for the guest, never a device) before the guest
boots, and mounted by the guest's ``/init`` at :data:`MOUNT`, so that a cloud's
folder or file recipe (its fio ``directory=`` or file on a mounted volume) runs there
as on the cloud's VM.

``mkfs.ext4`` (e2fsprogs, mke2fs(8)) is given ``lazy_itable_init=0`` and
``lazy_journal_init=0``: the inode tables and the journal are written now, on this
machine, so the guest's kernel starts no ``ext4lazyinit`` thread writing them in the
background while a benchmark runs (ext4's documentation,
``Documentation/admin-guide/ext4.rst``, "init_itable").
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

from volbench.errors import UsageError

FILESYSTEMS = ("ext4",)
"""The filesystems ``lab up --filesystem`` makes."""
MOUNT = "/mnt/vda"
"""Where the guest mounts its disk's filesystem."""
CMDLINE_KEY = "volbench.filesystem"
"""The kernel command line's word that tells ``/init`` to mount the disk, and as what."""
MODULES = {"ext4": ("crc32c_generic", "ext4")}
"""What each filesystem needs loaded, besides the dependencies each module names
(``depends=``; ext4's are jbd2, mbcache, crc16). ext4 and jbd2 also ask for the
``crc32c`` checksum only by a soft dependency (``softdep=pre: crypto-crc32c``, which
nothing loads in a guest without modprobe): ``crc32c_generic`` provides it (a mount of
a filesystem with metadata checksums fails without it)."""


def mkfs_command(kind: str, image: Path) -> list[str]:
    """The command that makes a ``kind`` filesystem in ``image`` (one file)."""
    if kind not in FILESYSTEMS:
        raise UsageError(f"--filesystem {kind}: volbench makes {', '.join(FILESYSTEMS)}")
    program = shutil.which(f"mkfs.{kind}")
    if program is None:
        raise UsageError(f"mkfs.{kind} is not installed (apt-get install e2fsprogs)")
    extended = "lazy_itable_init=0,lazy_journal_init=0"
    return [program, "-q", "-F", "-L", "volbench-lab", "-E", extended, str(image)]


def make(kind: str, image: Path) -> None:
    """Make a ``kind`` filesystem in ``image``, a regular file (a device is refused:
    volbench formats only the image it made for the guest)."""
    try:
        mode = os.lstat(image).st_mode
    except OSError as exc:
        raise UsageError(f"cannot make a filesystem in {image}: {exc.strerror}") from exc
    if not stat.S_ISREG(mode):
        raise UsageError(f"refusing to format {image}: not a regular file (a guest's image)")
    done = subprocess.run(
        mkfs_command(kind, image), capture_output=True, text=True, check=False, timeout=300
    )
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        raise UsageError(f"mkfs.{kind} on the guest's image {image} failed: {why}")


def mount_lines(modules: dict[str, tuple[str, ...]], failed: str) -> str:
    """The part of ``/init`` that mounts the disk when the kernel command line says
    ``volbench.filesystem=KIND``: KIND's modules loaded (``modules``: KIND -> the
    names in load order, those the initramfs holds), ``/dev/vda`` mounted on
    :data:`MOUNT`; on a failure, ``failed`` and why on the console, and no fio server
    (``lab up`` reports the line)."""
    cases = "".join(
        f"  {kind}) {' '.join(f'insmod /lib/modules/{m}.ko;' for m in names) or ':'} ;;\n"
        for kind, names in sorted(modules.items())
    )
    key = CMDLINE_KEY.replace(".", "\\.")
    return f"""fs=$(sed -n 's/.*{key}=\\([a-z0-9]*\\).*/\\1/p' /proc/cmdline)
if [ -n "$fs" ]; then
  case "$fs" in
{cases}  esac
  mkdir -p {MOUNT}
  if ! why=$(mount -t "$fs" /dev/vda {MOUNT} 2>&1); then
    echo "{failed} cannot mount /dev/vda as $fs on {MOUNT}: $why"
    while true; do sleep 3600; done
  fi
fi
"""
