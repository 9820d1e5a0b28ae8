"""Purge: bring a target back to a fresh state before a PTS test (PTS 2.0.2, "Purge").

Order of preference (DESIGN.md): device-native purge, else discard, else zero
fill; files are recreated. volbench runs device-native commands only when the
user asks for one (``--purge nvme-format`` / ``nvme-sanitize`` / ``ata-secure-erase``
with ``--ata-password``), because they need tools and rights that differ per
device and some cannot be interrupted. By default a block device is discarded
with ``blkdiscard`` and, where discard is not supported, zero-filled with
``blkdiscard --zeroout`` (the kernel's BLKZEROOUT, offloaded where possible).
The caller must have passed the safety checks first.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from volbench.errors import TargetError
from volbench.model import TargetInfo
from volbench.targets.scratch import prepare_file

METHODS = ("auto", "nvme-format", "nvme-sanitize", "ata-secure-erase", "discard", "zero")

_SBIN = ("/usr/sbin", "/sbin", "/usr/bin", "/bin")


def _tool(name: str) -> str:
    found = shutil.which(name) or next(
        (os.path.join(d, name) for d in _SBIN if os.access(os.path.join(d, name), os.X_OK)), None
    )
    if found is None:
        raise TargetError(f"purge needs {name}, which is not installed (apt-get install it)")
    return found


def _run(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(list(command), capture_output=True, text=True, check=False)
    except OSError as exc:
        raise TargetError(f"cannot run {command[0]}: {exc.strerror}") from exc


def _native(target: TargetInfo, method: str, ata_password: str | None) -> list[list[str]]:
    """The commands of a device-native purge."""
    if method == "nvme-format":
        return [[_tool("nvme"), "format", target.path, "--ses=1", "--force"]]
    if method == "nvme-sanitize":
        return [[_tool("nvme"), "sanitize", target.path, "--sanact=2"]]
    if not ata_password:
        raise TargetError("ATA secure erase needs --ata-password (set temporarily, then erased)")
    hdparm = _tool("hdparm")
    return [
        [hdparm, "--user-master", "u", "--security-set-pass", ata_password, target.path],
        [hdparm, "--user-master", "u", "--security-erase", ata_password, target.path],
    ]


def purge(
    target: TargetInfo,
    method: str = "auto",
    ata_password: str | None = None,
    data_allowed: bool = False,
) -> str:
    """Purge ``target`` and return the method used, as recorded in the report.

    Files (volbench's own, or allowed with ``--force``) are emptied in place
    (truncated to 0 bytes: the filesystem frees every block, as a discard frees a
    device's) and filled again to the same size; the inode stays, so the target is
    still the one the run started on (:func:`volbench.targets.safety.check_round`).
    ``data_allowed`` (the user gave ``--destroy-data``) lets
    blkdiscard run over a signature it finds (``--force``). Raises
    :class:`TargetError` with the tool's message when the asked-for method fails.
    """
    if target.kind == "remote":  # on another host: its place's kind (volbench.places)
        raise TargetError(
            f"volbench cannot purge {target.path}: purge it on its host and add --no-purge "
            "(marked non-compliant)"
        )
    if target.kind == "file":
        path = Path(target.path)
        try:
            os.truncate(path, 0)
        except OSError as exc:
            raise TargetError(f"cannot empty {path} for the purge: {exc.strerror}") from exc
        prepare_file(path, target.capacity_bytes)
        return "file emptied and refilled"
    if method in ("nvme-format", "nvme-sanitize", "ata-secure-erase"):
        for command in _native(target, method, ata_password):
            done = _run(command)
            if done.returncode != 0:
                lines = (done.stderr or done.stdout).strip().splitlines()
                why = lines[-1] if lines else f"exit code {done.returncode}"
                raise TargetError(f"{method} of {target.path} failed: {why}")
        return method
    blkdiscard = [_tool("blkdiscard"), *(["--force"] if data_allowed else [])]
    if method in ("auto", "discard"):
        done = _run([*blkdiscard, target.path])
        if done.returncode == 0:
            return "discard (blkdiscard)"
        if method == "discard":
            raise TargetError(f"blkdiscard {target.path} failed: {done.stderr.strip()}")
    done = _run([*blkdiscard, "--zeroout", target.path])
    if done.returncode != 0:
        raise TargetError(f"zero fill of {target.path} failed: {done.stderr.strip()}")
    return "zero fill (blkdiscard --zeroout)"
