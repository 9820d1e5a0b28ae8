"""The kernel modules a guest needs, in the order to load them.

Debian's ``linux-image-*`` package builds virtio as modules (``CONFIG_VIRTIO_BLK=m``,
``CONFIG_VIRTIO_NET=m``, ``CONFIG_VIRTIO_PCI=m``) and ships no ``modules.dep``
(its postinst runs ``depmod``), so the dependencies are read from each module's own
``.modinfo`` ELF section (``depends=a,b``: what ``modinfo`` and ``depmod`` read,
linux ``scripts/mod/modpost.c``). Modules in ``modules.builtin`` need no loading.
"""

from __future__ import annotations

import lzma
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from volbench.errors import UsageError
from volbench.lab.filesystem import MODULES as FILESYSTEM_MODULES

NEEDED = ("virtio_pci", "virtio_blk", "virtio_net", "qemu_fw_cfg")
"""The drivers of the guest's disk (virtio-blk-pci) and network (virtio-net-pci), and
of QEMU's firmware configuration, through which the guest gets its shell channel's
key (``CONFIG_FW_CFG_SYSFS=m`` on Debian)."""


def module_name(path: str) -> str:
    """``kernel/drivers/block/virtio_blk.ko[.xz]`` -> ``virtio_blk`` (``-`` as ``_``,
    as the kernel names modules)."""
    base = path.rsplit("/", 1)[-1]
    return base.split(".ko", 1)[0].replace("-", "_")


def modinfo(elf: bytes) -> dict[str, str]:
    """The ``key=value`` strings of a module's ``.modinfo`` section (ELF64
    little-endian, as every x86-64 module); the last value of a repeated key."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2 or elf[5] != 1:
        raise ValueError("not an ELF64 little-endian file")
    shoff = struct.unpack_from("<Q", elf, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    sections = [struct.unpack_from("<IIQQQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    names_at = sections[shstrndx][4]
    for name, _kind, _flags, _addr, offset, size in sections:
        end = elf.index(b"\0", names_at + name)
        if elf[names_at + name : end] == b".modinfo":
            fields = elf[offset : offset + size].split(b"\0")
            pairs = (f.decode(errors="replace").partition("=") for f in fields if b"=" in f)
            return {key: value for key, _, value in pairs}
    return {}


def read_module(path: Path) -> bytes:
    """A module file's ELF bytes (``.ko``, or ``.ko.xz`` decompressed)."""
    data = path.read_bytes()
    if path.name.endswith(".ko.xz"):
        return lzma.decompress(data)
    if not path.name.endswith(".ko"):
        raise UsageError(f"{path}: a compressed module volbench cannot read (use .ko or .ko.xz)")
    return data


def depends(elf: bytes) -> tuple[str, ...]:
    """The modules a module needs loaded first (its ``depends=`` field)."""
    text = modinfo(elf).get("depends", "")
    return tuple(module_name(d) for d in text.split(",") if d)


def load_order(wanted: Iterable[str], needs: Mapping[str, tuple[str, ...]]) -> list[str]:
    """``wanted`` and everything they depend on, each after what it needs
    (depth first, in the order given); a module absent from ``needs`` is built in."""
    order: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in order or name not in needs:
            return
        if name in path:
            raise UsageError(f"kernel modules depend on each other in a loop: {' -> '.join(path)}")
        for dependency in needs[name]:
            visit(dependency, (*path, name))
        order.append(name)

    for name in wanted:
        visit(name, ())
    return order


@dataclass(frozen=True)
class GuestModule:
    """One module to load in the guest: its name and its (uncompressed) ELF bytes."""

    name: str
    elf: bytes


@dataclass(frozen=True)
class GuestModules:
    """The modules a guest's initramfs holds: ``boot``, loaded at every boot (the
    drivers of :data:`NEEDED` and their dependencies), and for each filesystem of
    :data:`volbench.lab.filesystem.MODULES` those loaded before the guest mounts
    its disk as it (each after what it depends on, none loaded twice), in order."""

    boot: tuple[GuestModule, ...]
    filesystems: dict[str, tuple[GuestModule, ...]]

    @property
    def every(self) -> list[GuestModule]:
        """Every module the initramfs holds, each once."""
        found = {m.name: m for m in self.boot}
        for modules in self.filesystems.values():
            found.update((m.name, m) for m in modules)
        return list(found.values())

    def mount_names(self) -> dict[str, tuple[str, ...]]:
        """Each filesystem's modules by name, in load order."""
        return {kind: tuple(m.name for m in ms) for kind, ms in self.filesystems.items()}


def guest_modules(modules_dir: Path | None) -> GuestModules:
    """The modules of :data:`NEEDED` and their dependencies from a kernel's
    ``/lib/modules/VERSION`` folder, in load order, and those of each filesystem a
    guest may mount (those the kernel has as modules: built in, a filesystem needs
    none); none when the folder is None or the drivers are built in. UsageError when
    a needed driver is neither."""
    if modules_dir is None or not modules_dir.is_dir():
        return GuestModules((), {kind: () for kind in FILESYSTEM_MODULES})
    builtin_file = modules_dir / "modules.builtin"
    builtin = builtin_file.read_text().split() if builtin_file.is_file() else []
    built_in = {module_name(line) for line in builtin}
    files = {module_name(str(p)): p for p in modules_dir.rglob("*.ko*")}
    missing = [n for n in NEEDED if n not in files and n not in built_in]
    if missing:
        raise UsageError(
            f"the kernel in {modules_dir} has no {', '.join(missing)} (neither a module nor"
            " built in): give --kernel of a kernel with virtio drivers and qemu_fw_cfg"
        )
    elves: dict[str, bytes] = {}
    needs: dict[str, tuple[str, ...]] = {}
    wanted = [*NEEDED, *(n for names in FILESYSTEM_MODULES.values() for n in names)]
    pending = [n for n in wanted if n in files]
    while pending:
        name = pending.pop()
        if name in elves or name not in files:
            continue
        elves[name] = read_module(files[name])
        needs[name] = depends(elves[name])
        pending.extend(needs[name])
    boot = load_order(NEEDED, needs)
    filesystems = {
        kind: tuple(
            GuestModule(name, elves[name]) for name in load_order(names, needs) if name not in boot
        )
        for kind, names in FILESYSTEM_MODULES.items()
    }
    return GuestModules(tuple(GuestModule(name, elves[name]) for name in boot), filesystems)
