"""The guest's initramfs: a newc cpio archive of busybox, fio with its libraries and
loader, the virtio modules in load order and /init; the modules' dependencies read
from their .modinfo ELF sections."""

from __future__ import annotations

import os
import stat
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from volbench.errors import UsageError
from volbench.lab.init_script import FAILED, FIO_PORT, SHELL_PORT, init_script
from volbench.lab.initramfs import Entry, contents, libraries, newc
from volbench.lab.kernel_modules import (
    GuestModule,
    GuestModules,
    depends,
    guest_modules,
    load_order,
    modinfo,
)


def read_newc(data: bytes) -> list[tuple[str, int, bytes, tuple[int, int]]]:
    """Members of a newc archive (name, mode, data, rdev), as the kernel reads them."""
    found = []
    at = 0
    while True:
        assert data[at : at + 6] == b"070701"
        fields = [int(data[at + 6 + 8 * i : at + 14 + 8 * i], 16) for i in range(13)]
        size, namesize = fields[6], fields[11]
        name = data[at + 110 : at + 110 + namesize - 1].decode()
        at += 110 + namesize
        at += -at % 4
        body = data[at : at + size]
        at += size + (-size % 4)
        if name == "TRAILER!!!":
            return found
        found.append((name, fields[1], body, (fields[9], fields[10])))


def test_newc_round_trip() -> None:
    entries = [
        Entry("bin", stat.S_IFDIR | 0o755),
        Entry("bin/a", stat.S_IFREG | 0o755, b"hello"),
        Entry("bin/sh", stat.S_IFLNK | 0o777, b"busybox"),
        Entry("dev/console", stat.S_IFCHR | 0o600, rdev=(5, 1)),
    ]
    data = b"".join(newc(entries))
    assert len(data) % 4 == 0
    assert read_newc(data) == [(e.path, e.mode, e.data, e.rdev) for e in entries]


def test_contents_hold_fio_libraries_loader_and_modules(tmp_path: Path) -> None:
    program = "/bin/true"  # dynamically linked, as fio is
    busybox = tmp_path / "busybox"
    busybox.write_bytes(b"static busybox")
    boot = (GuestModule("virtio", b"\x7fELF-a"), GuestModule("virtio_blk", b"\x7fELF-b"))
    ext4 = (GuestModule("jbd2", b"\x7fELF-j"), GuestModule("ext4", b"\x7fELF-e"))
    modules = GuestModules(boot, {"ext4": ext4})
    members = {e.path: e for e in contents(program, str(busybox), modules)}
    assert members["usr/bin/fio"].data == Path(program).read_bytes()
    assert members["bin/busybox"].data == b"static busybox"
    assert members["dev/console"].rdev == (5, 1)
    libs = libraries(program)
    assert any("ld-linux" in lib for lib in libs)
    assert any("libc.so" in lib for lib in libs)
    for lib in libs:
        assert members[lib.lstrip("/")].data == Path(lib).read_bytes()
        assert stat.S_ISDIR(members[str(Path(lib).parent).lstrip("/")].mode)
    assert members["lib/modules/virtio_blk.ko"].data == b"\x7fELF-b"
    assert members["lib/modules/ext4.ko"].data == b"\x7fELF-e"
    init = members["init"].data.decode()
    assert init.index("insmod /lib/modules/virtio.ko") < init.index("virtio_blk.ko")
    # the filesystem's modules only when the kernel command line asks for a mount
    mount = init[init.index("ext4)") : init.index("esac")]
    assert mount.index("insmod /lib/modules/jbd2.ko") < mount.index("ext4.ko")
    assert init.count("jbd2.ko") == 1


def test_init_mounts_the_disk_the_command_line_names(tmp_path: Path) -> None:
    """/init, run by a shell with stand-ins for insmod and mount: with
    ``volbench.filesystem=ext4`` it loads ext4's modules and mounts /dev/vda on
    /mnt/vda; without it, neither; a mount that fails says why and starts no fio."""
    script = init_script(["virtio"], {"ext4": ("crc16", "ext4")})
    part = script[script.index("fs=$(") : script.index("name=$(")]
    log = tmp_path / "log"
    for line, wanted in (
        ("quiet volbench.filesystem=ext4 volbench.hostname=x", "mount -t ext4 /dev/vda /mnt/vda"),
        ("quiet volbench.hostname=x", ""),
    ):
        log.write_text("")
        text = part.replace("/proc/cmdline", str(tmp_path / "cmdline"))
        (tmp_path / "cmdline").write_text(line + "\n")
        stubs = (
            f'insmod() {{ echo "insmod $*" >> {log}; }}\n'
            f'mount() {{ echo "mount $*" >> {log}; }}\nmkdir() {{ :; }}\n'
        )
        done = subprocess.run(
            ["sh", "-c", stubs + text], capture_output=True, text=True, timeout=10
        )
        assert done.returncode == 0, done.stderr
        calls = log.read_text().splitlines()
        if wanted:
            assert calls == [
                "insmod /lib/modules/crc16.ko",
                "insmod /lib/modules/ext4.ko",
                wanted,
            ]
        else:
            assert calls == []
    failing = (
        'insmod() { :; }\nmount() { echo "bad superblock"; return 32; }\n'
        "mkdir() { :; }\nsleep() { exit 7; }\n"
    )
    (tmp_path / "cmdline").write_text("volbench.filesystem=ext4\n")
    text = part.replace("/proc/cmdline", str(tmp_path / "cmdline"))
    done = subprocess.run(["sh", "-c", failing + text], capture_output=True, text=True, timeout=10)
    assert done.returncode == 7
    assert done.stdout.strip() == (
        f"{FAILED} cannot mount /dev/vda as ext4 on /mnt/vda: bad superblock"
    )


def test_init_starts_fio_and_the_shell() -> None:
    text = init_script(["virtio"])
    assert f"fio --server=ip:0.0.0.0,{FIO_PORT}" in text
    assert f"nc -ll -p {SHELL_PORT} -e" in text
    assert "ip addr add 10.0.2.15/24 dev eth0" in text
    assert "ip route add default via 10.0.2.2" in text


def elf_module(fields: dict[str, str]) -> bytes:
    """A minimal ELF64 little-endian file with a ``.modinfo`` section, as a module."""
    info = b"".join(f"{k}={v}".encode() + b"\0" for k, v in fields.items())
    names = b"\0.modinfo\0.shstrtab\0"
    body_at = 64
    names_at = body_at + len(info)
    shoff = names_at + len(names)
    shoff += -shoff % 8
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", header, 0x28, shoff)
    struct.pack_into("<HHH", header, 0x3A, 64, 3, 2)
    sections = [
        struct.pack("<IIQQQQ", 0, 0, 0, 0, 0, 0) + bytes(24),
        struct.pack("<IIQQQQ", 1, 1, 0, 0, body_at, len(info)) + bytes(24),
        struct.pack("<IIQQQQ", 10, 3, 0, 0, names_at, len(names)) + bytes(24),
    ]
    padding = bytes(shoff - names_at - len(names))
    return bytes(header) + info + names + padding + b"".join(sections)


def test_modinfo_depends() -> None:
    elf = elf_module({"license": "GPL", "depends": "virtio,virtio-ring", "name": "virtio_blk"})
    assert modinfo(elf)["name"] == "virtio_blk"
    assert depends(elf) == ("virtio", "virtio_ring")
    assert depends(elf_module({"depends": ""})) == ()
    with pytest.raises(ValueError):
        modinfo(b"not an elf file at all, really")


def test_load_order_puts_dependencies_first() -> None:
    needs = {"a": ("b", "c"), "b": ("c",), "c": (), "d": ("c",)}
    assert load_order(["a", "d"], needs) == ["c", "b", "a", "d"]
    assert load_order(["a", "builtin"], needs) == ["c", "b", "a"]
    with pytest.raises(UsageError, match="loop"):
        load_order(["x"], {"x": ("y",), "y": ("x",)})


def test_guest_modules_from_a_kernel_folder(tmp_path: Path) -> None:
    drivers = tmp_path / "kernel" / "drivers"
    drivers.mkdir(parents=True)
    for name, needs in {
        "virtio": "virtio_ring",
        "virtio_ring": "",
        "virtio_pci": "virtio,virtio_ring",
        "virtio_blk": "virtio",
        "qemu_fw_cfg": "",
    }.items():
        (drivers / f"{name}.ko").write_bytes(elf_module({"depends": needs}))
    (tmp_path / "modules.builtin").write_text("kernel/drivers/net/virtio_net.ko\n")
    fs = tmp_path / "kernel" / "fs"
    fs.mkdir()
    for name, needs in {"ext4": "jbd2,mbcache,virtio_ring", "jbd2": "", "mbcache": ""}.items():
        (fs / f"{name}.ko").write_bytes(elf_module({"depends": needs}))
    found = guest_modules(tmp_path)
    boot = [m.name for m in found.boot]
    assert boot == ["virtio_ring", "virtio", "virtio_pci", "virtio_blk", "qemu_fw_cfg"]
    # ext4's soft dependency crc32c_generic is not in this kernel: built in, left out;
    # virtio_ring, loaded at boot, is not loaded again before the mount
    assert found.mount_names() == {"ext4": ("jbd2", "mbcache", "ext4")}
    assert sorted(m.name for m in found.every) == sorted([*boot, "jbd2", "mbcache", "ext4"])
    assert guest_modules(None).every == []
    (tmp_path / "modules.builtin").write_text("")
    with pytest.raises(UsageError, match="virtio_net"):
        guest_modules(tmp_path)
    (drivers / "qemu_fw_cfg.ko").unlink()  # no key for the shell channel: refused
    (tmp_path / "modules.builtin").write_text("kernel/drivers/net/virtio_net.ko\n")
    with pytest.raises(UsageError, match="has no qemu_fw_cfg"):
        guest_modules(tmp_path)


def _fake_apt(bin_dir: Path, log: Path) -> None:
    """apt-cache, apt-get and dpkg-deb stand-ins: a slow download, logged."""
    tools = {
        "apt-cache": "echo '  Depends: linux-image-6.1.0-99-amd64'",
        "apt-get": f'echo "$$" >> {log}; sleep 0.5; : > linux-image-6.1.0-99-amd64_1_amd64.deb',
        "dpkg-deb": 'mkdir -p "$3/boot" && : > "$3/boot/vmlinuz-6.1.0-99-amd64"',
    }
    bin_dir.mkdir()
    for name, body in tools.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)


def test_guests_brought_up_at_once_download_the_kernel_once(tmp_path: Path) -> None:
    """Three ``lab up`` at once on a fresh machine, in labs sharing one ``kernels/``
    folder (as the test modules share pytest's cache): one downloads, the others wait
    for it and find its kernel (no rename onto a folder another just filled)."""
    log = tmp_path / "downloads.log"
    _fake_apt(tmp_path / "bin", log)
    shared = tmp_path / "kernels"
    shared.mkdir()
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}"}
    code = "from volbench.lab.kernel import debian_kernel; print(debian_kernel(print).image)"
    started = []
    for n in range(3):
        lab = tmp_path / f"lab{n}"
        lab.mkdir()
        (lab / "kernels").symlink_to(shared)
        started.append(
            subprocess.Popen(
                [sys.executable, "-c", code],
                env={**env, "VOLBENCH_LAB_DIR": str(lab)},
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    for process in started:
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        image = Path(out.splitlines()[-1])
        assert image.parts[-3:] == ("linux-image-6.1.0-99-amd64", "boot", "vmlinuz-6.1.0-99-amd64")
    assert len(log.read_text().split()) == 1
    assert not list(shared.glob(".download-*"))
