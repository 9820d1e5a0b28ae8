"""The guest's qemu: its command line, and starting it so that it never outlives a
``lab up`` that did not finish.

qemu starts under a guard shell of its own session (Ctrl-C goes to volbench alone,
which ends qemu itself)::

    sh -c 'umask 077; exec 3<&0 </dev/null; "$@" 3<&- >/dev/null & echo $!; read -r x <&3;
           [ "$x" = detach ] || kill -TERM $!' volbench-lab-guard qemu-system-x86_64 ...

The guard sets ``umask 077`` first, so that what qemu makes in the guest's folder (its
pidfile, the serial console's log, the QMP socket) is its owner's alone from the start
(lab/home.py). The guard reads volbench's pipe: once the guest answers, volbench writes
``detach`` and the guard exits, leaving qemu to live on (``lab down`` ends it later
by its pidfile). If volbench ends first, however it ends (an error, Ctrl-C, SIGKILL),
the pipe closes without ``detach`` and the guard sends qemu SIGTERM. (A
``PR_SET_PDEATHSIG`` on qemu, as fio gets, could not be undone after the boot: only
the process itself can clear it.)
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from volbench.errors import UsageError
from volbench.lab.filesystem import CMDLINE_KEY
from volbench.lab.guest import PIDFILE, QMP, SERIAL
from volbench.lab.home import private_file
from volbench.lab.init_script import FIO_PORT, GUEST_ADDRESS, KEY_NAME, SHELL_PORT
from volbench.lab.shell import KEY_FILE
from volbench.lab.throttle import Limits

QEMU = "qemu-system-x86_64"
MEMORY_MIB = 512
"""The guest's memory unless ``lab up --memory`` says: the initramfs (about 90 MiB
unpacked) and fio's buffers (a job's ``iodepth`` x ``bs`` x ``numjobs``)."""
GUARD = (
    'umask 077; exec 3<&0 </dev/null; "$@" 3<&- >/dev/null & echo $!; read -r x <&3; '
    '[ "$x" = detach ] || kill -TERM $! 2>/dev/null'
)
DETACH = b"detach\n"


@dataclass(frozen=True)
class Launch:
    """Everything one qemu start needs: the guest's folder (pidfile, serial log, QMP
    socket), kernel and initramfs, disk image (``direct``: opened with O_DIRECT),
    the loopback ``address`` its ports are forwarded on, the host ports of fio's
    server and the shell channel, the disk's limits, ``kvm`` or ``tcg``, hostname,
    the filesystem on the disk to mount, the guest's memory (MiB)."""

    folder: Path
    kernel: Path
    initrd: Path
    disk: Path
    direct: bool
    address: str
    fio_port: int
    shell_port: int
    limits: Limits
    accel: str
    hostname: str
    filesystem: str | None = None
    """The filesystem the guest's /init mounts its disk as (None: none, a raw disk)."""
    memory_mib: int = MEMORY_MIB


def _checked(path: Path) -> str:
    """A path for qemu's ``key=value`` options, which read ``,`` as a separator."""
    text = str(path)
    if "," in text:
        raise UsageError(f"{text}: the lab's folder may hold no ',' (set VOLBENCH_LAB_DIR)")
    return text


def qemu_command(launch: Launch) -> list[str]:
    """qemu's arguments: no default devices, serial console to a file, the disk as a
    raw image behind a throttle filter of group ``tg0`` on a virtio-blk-pci device,
    user-mode networking (no access to the host's networks: ``restrict=on``) with
    fio's and the shell's ports forwarded from ``address``, a QMP socket, and the
    shell channel's key as a firmware configuration file (read by qemu from the key's
    file in the folder: the key itself is in no command line)."""
    folder = launch.folder
    throttle = ",".join(
        f"x-{key}={value}" for key, value in launch.limits.qemu().properties().items()
    )
    forward = ",".join(
        f"hostfwd=tcp:{launch.address}:{host}-{GUEST_ADDRESS}:{guest}"
        for host, guest in ((launch.fio_port, FIO_PORT), (launch.shell_port, SHELL_PORT))
    )
    direct = "on" if launch.direct else "off"
    append = f"console=ttyS0 panic=-1 quiet volbench.hostname={launch.hostname}"
    if launch.filesystem is not None:
        append += f" {CMDLINE_KEY}={launch.filesystem}"
    return [
        QEMU,
        "-nodefaults",
        "-nographic",
        "-no-reboot",
        "-accel",
        launch.accel,
        "-m",
        str(launch.memory_mib),
        "-smp",
        "1",
        "-serial",
        f"file:{_checked(folder / SERIAL)}",
        "-pidfile",
        _checked(folder / PIDFILE),
        "-qmp",
        f"unix:{_checked(folder / QMP)},server=on,wait=off",
        "-kernel",
        _checked(launch.kernel),
        "-initrd",
        _checked(launch.initrd),
        "-append",
        append,
        "-fw_cfg",
        f"name={KEY_NAME},file={_checked(folder / KEY_FILE)}",
        "-netdev",
        f"user,id=net0,restrict=on,{forward}",
        "-device",
        "virtio-net-pci,netdev=net0,romfile=",
        "-object",
        "throttle-group,id=tg0" + (f",{throttle}" if throttle else ""),
        "-blockdev",
        f"driver=file,node-name=disk-file,filename={_checked(launch.disk)},cache.direct={direct}",
        "-blockdev",
        "driver=raw,node-name=disk-raw,file=disk-file",
        "-blockdev",
        "driver=throttle,node-name=disk,throttle-group=tg0,file=disk-raw",
        "-device",
        "virtio-blk-pci,drive=disk",
    ]


class Guarded:
    """A qemu started under the guard shell (module docstring); qemu's messages go
    to ``qemu.log`` in the guest's folder."""

    def __init__(self, launch: Launch) -> None:
        self.log = launch.folder / "qemu.log"
        with private_file(self.log) as log:
            try:
                self.guard = subprocess.Popen(
                    ["sh", "-c", GUARD, "volbench-lab-guard", *qemu_command(launch)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    start_new_session=True,
                )
            except OSError as exc:
                raise UsageError(f"cannot start sh: {exc.strerror}") from exc
        assert self.guard.stdout is not None
        line = self.guard.stdout.readline().strip()
        self.pid = int(line) if line.isdigit() else None

    def detach(self) -> None:
        """Let qemu live on after volbench: the guard exits without ending it."""
        self._finish(DETACH)

    def abandon(self) -> None:
        """End the guard without ``detach``: it sends qemu SIGTERM."""
        self._finish(b"")

    def _finish(self, word: bytes) -> None:
        stdin = self.guard.stdin
        if stdin is not None and not stdin.closed:
            try:
                stdin.write(word)
                stdin.close()
            except BrokenPipeError:
                pass
        try:
            self.guard.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.guard.kill()  # the guard shell this object started
            self.guard.wait()

    def last_words(self) -> str:
        """qemu's last message line (why it ended), or ''."""
        try:
            lines = [line for line in self.log.read_text(errors="replace").splitlines() if line]
        except OSError:
            return ""
        return lines[-1].strip() if lines else ""
