"""A shared backing device for lab guests (instance storage): one loop device over an
image file in the lab's folder, formatted ext4 and mounted there, holding the guests'
disk images (``lab up NAME --backing B``) and the host's own test file, so that every
tenant of a QoS verification shares one device's capability C (NetEase QoS test:
VMs with instance storage on one host disk).

    backing/B/backing.json   what volbench made: image, loop device, mount point
    backing/B/device.img     the loop device's image (sparse, :data:`IMAGE_BYTES`)
    backing/B/mnt/disks/     one NAME.img per guest, every block written
    backing/B/mnt/host/      the host tenant's fio file

The loop device is attached with direct I/O (``losetup --direct-io=on``), so the
guests' and the host's I/O reaches the image file, not the loop's page cache. It is
made once (under a lock: guests may boot at once) and removed, unmounted and
detached, when no guest's image is left on it (:func:`release_unused`); only a loop
device whose backing file is the recorded image is ever detached.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from volbench import records
from volbench.errors import UsageError
from volbench.lab.home import (
    check_name,
    lab_dir,
    lab_lock,
    private_file,
    private_folder,
    write_private,
)

IMAGE_BYTES = 4 << 30
"""The backing image's size (sparse: only what the guests' images use takes room)."""
RECORD = "backing.json"
CHUNK = 1 << 20


@dataclass(frozen=True)
class Backing:
    """One backing device: its name, image file, loop device and mount point."""

    name: str
    image: str
    loop: str
    mount: str

    @property
    def disks(self) -> Path:
        """Where the guests' disk images are."""
        return Path(self.mount) / "disks"

    @property
    def host_dir(self) -> Path:
        """Where the host tenant's fio file is."""
        return Path(self.mount) / "host"

    def disk(self, guest: str) -> Path:
        """Guest ``guest``'s disk image on this device."""
        return self.disks / f"{check_name(guest)}.img"


def backings_dir() -> Path:
    return lab_dir() / "backing"


def _run(*command: str) -> str:
    """A tool's stdout; UsageError with its message when it fails."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UsageError(
            f"{command[0]} failed: {exc} (the lab's backing device needs root)"
        ) from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise UsageError(f"{' '.join(command[:2])} failed: {last}")
    return done.stdout.strip()


def _mounted(mount: str) -> bool:
    """Whether ``mount`` is a mount point now (``/proc/self/mountinfo``, field 5)."""
    text = Path("/proc/self/mountinfo").read_text()
    return any(line.split()[4] == mount for line in text.splitlines() if len(line.split()) > 4)


def _loop_file(loop: str) -> str:
    """The backing file of loop device ``loop`` ('' when it is not attached)."""
    try:
        return _run("losetup", "--list", "--noheadings", "--output", "BACK-FILE", loop)
    except UsageError:
        return ""


def load(name: str) -> Backing | None:
    """The backing device ``name`` as recorded (None: none made)."""
    path = backings_dir() / check_name(name) / RECORD
    try:
        return records.structure(json.loads(path.read_text()), Backing, str(path))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {path}: {exc} (`volbench lab down --all`)") from None


def _alive(backing: Backing) -> bool:
    return _loop_file(backing.loop) == backing.image and _mounted(backing.mount)


def ensure(name: str) -> Backing:
    """Backing device ``name``, made (image, loop device, ext4, mount) unless it is up;
    nothing is left behind when a step fails."""
    with lab_lock("backing"):
        found = load(name)
        if found is not None and _alive(found):
            return found
        if found is not None:
            _remove(found)
        folder = backings_dir() / check_name(name)
        private_folder(folder)
        image, mount = folder / "device.img", folder / "mnt"
        with private_file(image) as handle:
            handle.truncate(IMAGE_BYTES)
        loop = _run("losetup", "-f", "--show", "--direct-io=on", str(image))
        backing = Backing(name, str(image), loop, str(mount))
        write_private(folder / RECORD, json.dumps(records.json_object(backing), indent=1))
        try:
            _run("mkfs.ext4", "-q", "-F", "-L", f"vb-{name}"[:16], loop)
            private_folder(mount)
            _run("mount", loop, str(mount))
            private_folder(mount)  # the new filesystem's root (mkfs makes it 0755)
            private_folder(backing.disks)
            private_folder(backing.host_dir)
        except BaseException:
            _remove(backing)
            raise
        return backing


def write_out(path: Path, size: int) -> None:
    """A disk image of ``size`` bytes with every block written (reads of a sparse or
    fallocated file never reach the device, instance storage's do)."""
    zeros = bytes(CHUNK)
    with private_file(path) as handle:
        for offset in range(0, size, CHUNK):
            handle.write(zeros[: min(CHUNK, size - offset)])


def of_disk(disk: str) -> Backing | None:
    """The backing device holding guest disk image ``disk`` (None: its own folder)."""
    for backing in every():
        if Path(disk).parent == backing.disks:
            return backing
    return None


def every() -> list[Backing]:
    """Every recorded backing device."""
    root = backings_dir()
    names = (
        sorted(p.name for p in root.iterdir() if (p / RECORD).is_file()) if root.is_dir() else []
    )
    return [b for b in (load(n) for n in names) if b is not None]


def forget(guest: str) -> None:
    """Remove guest ``guest``'s image from every backing device (its ``lab down``)."""
    for backing in every():
        backing.disk(guest).unlink(missing_ok=True)


def release_unused() -> list[str]:
    """Unmount, detach and remove every backing device no guest image is left on;
    their names."""
    gone = []
    with lab_lock("backing"):
        for backing in every():
            if not (backing.disks.is_dir() and any(backing.disks.glob("*.img"))):
                _remove(backing)
                gone.append(backing.name)
    return gone


def _remove(backing: Backing) -> None:
    """Unmount (if mounted), detach the loop device (only if it is still this image's)
    and remove the backing's folder."""
    if _mounted(backing.mount):
        _run("umount", backing.mount)
    if _loop_file(backing.loop) == backing.image:
        _run("losetup", "-d", backing.loop)
    folder = Path(backing.image).parent
    for path in (Path(backing.image), folder / RECORD):
        path.unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        Path(backing.mount).rmdir()
        folder.rmdir()
