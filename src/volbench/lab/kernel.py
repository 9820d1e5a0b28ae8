"""The guest's kernel: Debian's ``linux-image-amd64`` package, downloaded with
``apt-get download`` into the lab's folder and unpacked with ``dpkg-deb -x`` (never
installed on this machine), or a ``--kernel`` file of the user's.

``linux-image-amd64`` is a metapackage; the kernel is in the package it depends on
(``linux-image-6.1.0-56-amd64`` on Debian 12), named by ``apt-cache depends``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from volbench.errors import UsageError
from volbench.lab.home import lab_dir, lab_lock

METAPACKAGE = "linux-image-amd64"
_DEPENDS = re.compile(r"^\s*Depends:\s*(linux-image-[0-9][^\s<>]*)", re.MULTILINE)
_SETUP = "install Debian's apt tools, or give --kernel PATH"


@dataclass(frozen=True)
class Kernel:
    """A bootable kernel image, its release (``uname -r``: ``6.1.0-56-amd64``) and its
    ``/lib/modules/RELEASE`` folder (None: drivers built in)."""

    image: Path
    release: str
    modules: Path | None


def release_of(image: Path) -> str:
    """The release string a bzImage states (x86 boot protocol: the 16-bit
    ``kernel_version`` field at 0x20E points at a NUL-ended string 0x200 further,
    linux ``Documentation/arch/x86/boot.rst``)."""
    data = image.read_bytes()[:0x10000]
    if len(data) < 0x210 or data[0x202:0x206] != b"HdrS":
        raise UsageError(f"{image} is not an x86 Linux kernel image (bzImage)")
    at = int.from_bytes(data[0x20E:0x210], "little") + 0x200
    text = data[at : data.index(b"\0", at)].decode(errors="replace")
    return text.split()[0]


def given_kernel(path: str) -> Kernel:
    """A ``--kernel`` file, with its modules from ``/lib/modules/RELEASE`` on this
    machine when that folder exists."""
    image = Path(path).expanduser().absolute()
    if not image.is_file():
        raise UsageError(f"--kernel {path}: no such file (a bzImage, e.g. /boot/vmlinuz-...)")
    release = release_of(image)
    modules = Path("/lib/modules") / release
    return Kernel(image, release, modules if modules.is_dir() else None)


def _run(command: list[str], cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise UsageError(f"cannot run {command[0]}: {exc.strerror} ({_SETUP})") from exc
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        why = lines[-1].strip() if lines else f"exit code {done.returncode}"
        raise UsageError(f"`{' '.join(command)}` failed: {why} ({_SETUP})")
    return done.stdout


def package_name() -> str:
    """The versioned kernel package ``linux-image-amd64`` depends on."""
    match = _DEPENDS.search(_run(["apt-cache", "depends", METAPACKAGE]))
    if match is None:
        raise UsageError(f"apt knows no kernel package behind {METAPACKAGE} ({_SETUP})")
    return match[1]


def unpacked(root: Path) -> Kernel | None:
    """The kernel unpacked under ``root`` (``boot/vmlinuz-*``), if any."""
    images = sorted(root.glob("boot/vmlinuz-*"))
    if not images:
        return None
    release = images[-1].name.removeprefix("vmlinuz-")
    modules = root / "lib" / "modules" / release
    return Kernel(images[-1], release, modules if modules.is_dir() else None)


def _found(kernels: Path) -> Kernel | None:
    """The newest kernel already unpacked under ``kernels``, if any."""
    for folder in sorted(kernels.glob("linux-image-*"), reverse=True):
        kernel = unpacked(folder)
        if kernel is not None:
            return kernel
    return None


def debian_kernel(say: Callable[[str], None]) -> Kernel:
    """Debian's kernel, downloaded and unpacked once into ``kernels/PACKAGE`` of the
    lab's folder (a later call finds it there without asking apt). Guests brought up
    at once take turns (a lock in ``kernels/``, which labs may share): the first
    downloads, the others find its kernel, and no folder a guest boots from is
    replaced."""
    kernels = lab_dir() / "kernels"
    kernel = _found(kernels)
    if kernel is not None:
        return kernel
    with lab_lock("download", kernels):
        kernel = _found(kernels)
        if kernel is not None:
            return kernel
        package = package_name()
        say(f"downloading {package} (apt-get download) into {kernels}")
        with tempfile.TemporaryDirectory(dir=kernels, prefix=".download-") as work:
            folder = Path(work)
            _run(["apt-get", "download", package], cwd=folder)
            debs = sorted(folder.glob("*.deb"))
            if not debs:
                raise UsageError(f"apt-get download {package} left no .deb ({_SETUP})")
            say(f"unpacking {debs[0].name} (dpkg-deb -x)")
            _run(["dpkg-deb", "-x", str(debs[0]), str(folder / "root")])
            target = kernels / package
            shutil.rmtree(target, ignore_errors=True)  # a download cut off, holding no vmlinuz
            (folder / "root").rename(target)
    kernel = unpacked(target)
    if kernel is None:
        raise UsageError(f"{package} holds no boot/vmlinuz-* ({_SETUP})")
    return kernel
