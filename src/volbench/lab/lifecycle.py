"""``lab up``, ``lab down`` and ``lab list``: a guest booted (KVM when it boots in
time, else TCG), waited for until fio's server answers, and left running; stopped
by its pidfile and its folder removed.

Nested KVM may hang in early boot (seen on this project's build machines: SeaBIOS
stops at "Booting from ROM"), so with ``accel`` ``auto`` a guest first boots under
KVM for at most :data:`KVM_BOOT_S`, then under TCG; a KVM that did not boot is
remembered for the machine's boot (``/proc/sys/kernel/random/boot_id``) in
``accel.json``, and later guests go straight to TCG.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from volbench.errors import UsageError
from volbench.fio.client import HostAddress
from volbench.fio.server import probe
from volbench.lab import filesystem as filesystems
from volbench.lab import guest as guests
from volbench.lab import io_max
from volbench.lab.backing import write_out
from volbench.lab.home import (
    guest_dir,
    lab_dir,
    lab_lock,
    private_file,
    private_folder,
    write_private,
)
from volbench.lab.init_script import FAILED, READY
from volbench.lab.initramfs import initramfs
from volbench.lab.kernel import Kernel, debian_kernel, given_kernel
from volbench.lab.machine import MEMORY_MIB, Guarded, Launch
from volbench.lab.shell import make_key
from volbench.lab.throttle import Limits

KVM_BOOT_S = 20.0
"""How long a guest may take to answer under KVM before TCG is tried."""
TCG_BOOT_S = 90.0
"""How long a guest may take to answer under TCG (about 6 s on an idle machine)."""
ADDRESSES = tuple(f"127.0.0.{n}" for n in range(60, 100))
"""Where guests' ports are forwarded: one address per guest (fio's client tells
hosts apart by address), below the 127.0.0.101.. of ssh tunnels."""
FIO_HOST_PORT = 8765
SHELL_HOST_PORT = 8766
MIN_DISK = 64 << 20
_TERMINAL = re.compile(r"\x1b(?:\[[0-9;?]*[A-Za-z]|c)")

Say = Callable[[str], None]


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def accelerators(wanted: str) -> list[str]:
    """The accelerators to try, in order: ``kvm``, ``tcg`` or ``auto`` (KVM when
    /dev/kvm can be opened and did not fail on this boot of the machine, then TCG)."""
    if wanted != "auto":
        return [wanted]
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return ["tcg"]
    try:
        memo = json.loads((lab_dir() / "accel.json").read_text())
    except (OSError, ValueError):
        memo = {}
    return ["tcg"] if memo.get(_boot_id()) == "tcg" else ["kvm", "tcg"]


def _remember_tcg() -> None:
    write_private(private_folder(lab_dir()) / "accel.json", json.dumps({_boot_id(): "tcg"}))


def _taken() -> set[str]:
    """Addresses of every guest folder (booting ones too: ``address`` file)."""
    found = set()
    for name in guests.names():
        with_address = guest_dir(name) / "address"
        if with_address.is_file():
            found.add(with_address.read_text().strip())
    return found


def _free(address: str) -> bool:
    for port in (FIO_HOST_PORT, SHELL_HOST_PORT):
        with socket.socket() as sock:
            try:
                sock.bind((address, port))
            except OSError:
                return False
    return True


def free_address(tried: frozenset[str] = frozenset()) -> str:
    """A loopback address no guest uses, where fio's and the shell's ports are free
    (none of ``tried``)."""
    taken = _taken() | tried
    for address in ADDRESSES:
        if address not in taken and _free(address):
            return address
    raise UsageError(f"no free address for a guest: at most {len(ADDRESSES)} (lab down one)")


def supports_direct(path: Path) -> bool:
    """Whether the filesystem of ``path`` opens it with O_DIRECT (tmpfs does not)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    except OSError:
        return False
    os.close(fd)
    return True


def _boot(launch: Launch, timeout_s: float) -> tuple[Guarded, float] | None:
    """qemu started and waited for until fio's server in the guest answers; None when
    it did not within ``timeout_s`` (qemu ended); UsageError when qemu stopped."""
    started = time.monotonic()
    qemu = Guarded(launch)
    serial = launch.folder / guests.SERIAL
    try:
        while (left := started + timeout_s - time.monotonic()) > 0:
            if qemu.pid is None or not guests.exists(qemu.pid):
                why = qemu.last_words() or "no message"
                raise UsageError(f"qemu ended during the boot: {why}")
            console = serial.read_text(errors="replace") if serial.is_file() else ""
            if FAILED in console:  # /init said why it starts no fio server
                failed = console[console.index(FAILED) :].splitlines()[0]
                raise UsageError(f"the guest could not start: {failed[len(FAILED) :].strip()}")
            ready = READY in console
            address = HostAddress(launch.address, launch.fio_port)
            if ready and probe(address, min(left, 5.0)).answers:
                return qemu, time.monotonic() - started
            time.sleep(0.2)
    except BaseException:
        _end(qemu, launch.folder)
        raise
    _end(qemu, launch.folder)
    return None


def _end(qemu: Guarded, folder: Path) -> None:
    qemu.abandon()
    if qemu.pid is not None:
        guests.stop(qemu.pid, folder)


MIN_MEMORY_MIB = 256
"""The least memory a guest boots with: the initramfs unpacked (about 90 MiB) and fio."""


def check_memory(memory_bytes: int) -> int:
    """``memory_bytes`` in whole MiB; UsageError below :data:`MIN_MEMORY_MIB`."""
    mib = memory_bytes >> 20
    if mib < MIN_MEMORY_MIB:
        raise UsageError(f"--memory {memory_bytes}: at least {MIN_MEMORY_MIB} MiB (e.g. 2g)")
    return mib


def check_disk_size(disk_bytes: int) -> None:
    """UsageError unless a guest's disk of ``disk_bytes`` is at least :data:`MIN_DISK`."""
    if disk_bytes < MIN_DISK:
        raise UsageError(f"--size {disk_bytes}: at least 64 MiB (give a unit, e.g. 1g)")


def up(
    name: str,
    limits: Limits,
    disk_bytes: int,
    kernel_path: str | None,
    accel: str,
    say: Say,
    disk: Path | None = None,
    disk_cache: str = "none",
    filesystem: str | None = None,
    memory_mib: int = MEMORY_MIB,
) -> guests.Guest:
    """Boot guest ``name`` with its disk (a sparse image of ``disk_bytes``, or at
    ``disk`` an image with every block written: on a backing device,
    :mod:`volbench.lab.backing`) limited as ``limits``, under QEMU's cache mode
    ``disk_cache`` (:data:`volbench.lab.guest.DISK_CACHES`; ``none`` on a filesystem
    without O_DIRECT is ``writeback``, and said); with ``filesystem``, the image
    formatted as it here (:mod:`volbench.lab.filesystem`) and mounted by the guest at
    :data:`volbench.lab.filesystem.MOUNT`; ``memory_mib`` of memory. Return the guest
    once fio's server in it answers. Nothing is left behind when the boot fails or is
    interrupted (qemu ended, the folder and image removed)."""
    folder = guest_dir(name)
    check_disk_size(disk_bytes)
    if filesystem is not None:
        filesystems.mkfs_command(filesystem, folder / guests.DISK)  # installed: before all
    if folder.exists():
        if guests.running_pid(folder) is not None:
            raise UsageError(f"lab guest {name} is up: `volbench lab down {name}` first")
        shutil.rmtree(folder)
    kernel = given_kernel(kernel_path) if kernel_path else debian_kernel(say)
    initrd = initramfs(kernel, say)
    private_folder(folder)
    try:
        return _up(
            name,
            folder,
            kernel,
            initrd,
            limits,
            disk_bytes,
            accel,
            say,
            disk,
            disk_cache,
            filesystem,
            memory_mib,
        )
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        if disk is not None:
            disk.unlink(missing_ok=True)
        raise


def _up(
    name: str,
    folder: Path,
    kernel: Kernel,
    initrd: Path,
    limits: Limits,
    disk_bytes: int,
    accel: str,
    say: Say,
    written: Path | None,
    disk_cache: str,
    filesystem: str | None,
    memory_mib: int,
) -> guests.Guest:
    address = _reserve(folder)
    make_key(folder)  # the shell channel's, for this boot (lab/shell.py)
    disk = written or folder / guests.DISK
    if written is not None:
        write_out(written, disk_bytes)
    else:
        with private_file(disk) as image:
            image.truncate(disk_bytes)
    if filesystem is not None:
        say(f"making {filesystem} on the guest's disk image (mounted at {filesystems.MOUNT})")
        filesystems.make(filesystem, disk)
    direct = disk_cache == "none" and supports_direct(disk)
    if disk_cache == "none" and not direct:
        say(f"{disk.parent} opens no file with O_DIRECT: the disk is cached (writeback)")
    for attempt in accelerators(accel):
        timeout = KVM_BOOT_S if attempt == "kvm" else TCG_BOOT_S
        say(f"booting {name} under {attempt} (up to {timeout:g} s)")
        launch = Launch(
            folder,
            kernel.image,
            initrd,
            disk,
            direct,
            address,
            FIO_HOST_PORT,
            SHELL_HOST_PORT,
            limits,
            attempt,
            f"lab-{name}-{attempt}",
            filesystem,
            memory_mib,
        )
        booted, address = _boot_on_a_free_address(launch, timeout)
        if booted is None:
            if attempt == "kvm":
                _remember_tcg()
            say(f"{name} did not answer under {attempt} in {timeout:g} s")
            continue
        qemu, seconds = booted
        assert qemu.pid is not None
        guest = guests.Guest(
            name,
            address,
            FIO_HOST_PORT,
            SHELL_HOST_PORT,
            attempt,
            limits,
            str(disk),
            disk_bytes,
            kernel.release,
            round(seconds, 2),
            qemu.pid,
            disk_cache="none" if direct else "writeback",
            filesystem=filesystem,
            mount=filesystems.MOUNT if filesystem is not None else None,
            memory_mib=memory_mib,
        )
        guests.save(guest)
        if limits.in_guest:  # the guest's kernel holds them: once it answers
            io_max.apply(name, limits)
        qemu.detach()
        return guest
    raise UsageError(f"lab guest {name} did not boot (its console said: {_last_line(folder)})")


FORWARD_REFUSED = "Could not set up host forwarding rule"
"""QEMU's words when a forwarded port is taken: a guest of another lab folder (another
VOLBENCH_LAB_DIR) took the same address between the choice and qemu's start."""
ADDRESS_TRIES = 5


def _reserve(folder: Path, tried: frozenset[str] = frozenset()) -> str:
    with lab_lock("address"):  # guests booting at once take different addresses
        address = free_address(tried)
        write_private(folder / "address", address)
    return address


def _boot_on_a_free_address(
    launch: Launch, timeout_s: float
) -> tuple[tuple[Guarded, float] | None, str]:
    """:func:`_boot`, on another free address when the chosen one's ports were taken
    meanwhile (up to :data:`ADDRESS_TRIES` addresses); the address booted on."""
    tried: set[str] = set()
    while True:
        try:
            return _boot(launch, timeout_s), launch.address
        except UsageError as exc:
            if FORWARD_REFUSED not in str(exc) or len(tried) + 1 >= ADDRESS_TRIES:
                raise
        tried.add(launch.address)
        address = _reserve(launch.folder, frozenset(tried))
        launch = dataclasses.replace(launch, address=address)


def _last_line(folder: Path) -> str:
    """The serial console's last line (the boot's last word)."""
    try:
        text = (folder / guests.SERIAL).read_text(errors="replace")
    except OSError:
        return "nothing"
    text = _TERMINAL.sub("", text)  # SeaBIOS clears the screen with escape sequences
    lines = ["".join(c for c in line if c.isprintable()).strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    return lines[-1][:200] if lines else "nothing"


def down(name: str) -> bool:
    """Stop guest ``name`` (if its qemu runs) and remove its folder; whether it ran."""
    folder = guest_dir(name)
    if not folder.is_dir():
        raise UsageError(f"no lab guest {name} (see `volbench lab list`)")
    pid = guests.running_pid(folder)
    if pid is not None:
        guests.stop(pid, folder)
    shutil.rmtree(folder)
    return pid is not None


def down_all() -> list[str]:
    """Stop every guest and remove every guest folder; the names removed."""
    gone = guests.names()
    for name in gone:
        down(name)
    return gone


@dataclass(frozen=True)
class GuestState:
    """A row of ``lab list``: a guest folder and whether its qemu runs (``alive``),
    is gone (``dead``), or runs without a record yet (``booting``)."""

    name: str
    state: str
    pid: int | None
    address: str
    accel: str
    limits: str
    disk: str
    filesystem: str = ""
    """What is on the disk: ``ext4 on /mnt/vda`` (its filesystem, where the guest
    mounted it), ``raw`` (none)."""


def on_disk(guest: guests.Guest) -> str:
    """What is on the guest's disk, in words: ``ext4 on /mnt/vda``, or ``raw``."""
    return f"{guest.filesystem} on {guest.mount}" if guest.filesystem else "raw"


def listing() -> list[GuestState]:
    """Every guest folder, by name."""
    rows = []
    for name in guests.names():
        folder = guest_dir(name)
        pid = guests.running_pid(folder)
        try:
            guest = guests.load(name)
        except UsageError:
            state = "booting" if pid is not None else "dead"
            rows.append(GuestState(name, state, pid, "", "", "", str(folder / guests.DISK)))
            continue
        state = "alive" if pid is not None else "dead"
        rows.append(
            GuestState(
                name,
                state,
                pid,
                guest.address,
                guest.accel,
                guest.limits.text(),
                guest.disk,
                on_disk(guest),
            )
        )
    return rows
