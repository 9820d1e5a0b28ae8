"""What the guest runs: ``/init`` (the initramfs's first process) and the handler of
the guest shell channel.

``/init`` mounts proc, sysfs and devtmpfs, loads the virtio modules (busybox
``insmod``, in dependency order), takes the hostname the kernel command line gives
(``volbench.hostname=``: it names the guest and its accelerator, ``lab-NAME-tcg``,
and is what fio's server says of itself), brings up ``eth0`` at QEMU user-mode
networking's fixed address (10.0.2.15/24, gateway 10.0.2.2: QEMU "Network
emulation", slirp), copies the shell channel's key from QEMU's firmware configuration
(``/sys/firmware/qemu_fw_cfg/by_name/NAME/raw``, the ``qemu_fw_cfg`` module: linux
``Documentation/ABI/testing/sysfs-firmware-qemu_fw_cfg``) to :data:`KEY_PATH`,
starts the shell channel on :data:`SHELL_PORT` (only when it has a key) and then
keeps ``fio --server`` on :data:`FIO_PORT` running for as long as the guest lives.

The shell channel (busybox ``nc -ll -p PORT -e HANDLER``: a process per connection):
the client sends the key as one line, then ONE line, a POSIX ``sh`` command; the
handler closes the connection unless the key is the guest's, else runs the command
with ``sh -c`` and its stdout is the connection's data until the command ends (stderr
is dropped, so the output is the command's alone).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from volbench.lab.filesystem import mount_lines

FIO_PORT = 8765
"""fio's server port inside the guest (fio's default)."""
SHELL_PORT = 8766
"""The shell channel's port inside the guest."""
GUEST_ADDRESS = "10.0.2.15"
"""The guest's address on QEMU's user-mode network (the first DHCP address)."""
READY = "volbench-lab: ready"
"""The line /init writes to the serial console once fio's server starts."""
FAILED = "volbench-lab: failed:"
"""What begins the line /init writes when the guest cannot be made ready (then no fio
server starts, and ``lab up`` reports the line)."""
HANDLER = "/etc/volbench-shell"
KEY_PATH = "/etc/volbench-key"
"""Where the guest keeps the shell channel's key."""
KEY_NAME = "opt/volbench/shell-key"
"""The key's name in QEMU's firmware configuration (``-fw_cfg``; user names start
with ``opt/``)."""
KEY_DIGITS = 64
"""The key's length: 32 random bytes as hex digits (lab/shell.py)."""


def shell_handler(key_path: str = KEY_PATH) -> str:
    """The handler of one connection: the key's line, compared with the key at
    ``key_path`` (none, or one of another length, matches nothing), then the command's
    line, run with ``sh -c``."""
    return f"""#!/bin/sh
cr=$(printf '\\r')
IFS= read -r given || exit 0
key=$(cat {key_path} 2>/dev/null)
[ ${{#key}} -eq {KEY_DIGITS} ] && [ "${{given%$cr}}" = "$key" ] || exit 0
IFS= read -r line || exit 0
exec sh -c "${{line%$cr}}" 2>/dev/null
"""


def init_script(
    modules: Sequence[str], filesystems: Mapping[str, Sequence[str]] | None = None
) -> str:
    """The ``/init`` of a guest loading ``modules`` (names, in load order, as
    ``/lib/modules/NAME.ko`` in the initramfs), and mounting its disk when its kernel
    command line names a filesystem, after loading that filesystem's ``filesystems``
    modules (:func:`volbench.lab.filesystem.mount_lines`)."""
    loads = "".join(f"insmod /lib/modules/{name}.ko\n" for name in modules)
    mounts = {kind: tuple(names) for kind, names in (filesystems or {}).items()}
    mount = mount_lines(mounts, FAILED) if filesystems is not None else ""
    return f"""#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/usr/bin:/bin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
{loads}{mount}name=$(sed -n 's/.*volbench\\.hostname=\\([A-Za-z0-9-]*\\).*/\\1/p' /proc/cmdline)
hostname "${{name:-volbench-lab}}"
ip link set lo up
tries=0
until ip link set eth0 up 2>/dev/null; do
  tries=$((tries + 1)); [ $tries -gt 50 ] && echo "volbench-lab: no eth0" && break; sleep 0.1
done
ip addr add {GUEST_ADDRESS}/24 dev eth0
ip route add default via 10.0.2.2
(umask 077; cat /sys/firmware/qemu_fw_cfg/by_name/{KEY_NAME}/raw > {KEY_PATH}) 2>/dev/null
key=$(cat {KEY_PATH} 2>/dev/null)
if [ ${{#key}} -eq {KEY_DIGITS} ]; then
  nc -ll -p {SHELL_PORT} -e {HANDLER} &
else
  echo "volbench-lab: no shell key (qemu_fw_cfg): the shell channel is off"
fi
echo "{READY}"
while true; do
  fio --server=ip:0.0.0.0,{FIO_PORT} >/dev/null 2>&1
  sleep 1
done
"""
