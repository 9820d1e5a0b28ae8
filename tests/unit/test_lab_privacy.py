"""The lab is its owner's alone: the guest's shell runs nothing without the guest's key
(the handler itself, run by a real ``sh``), the key reaches qemu through a file and in
no command line, and every folder and file of the lab is made 0700 or 0600 from its
creation on, whatever the umask (issue 31, item 5). The other-user half, with a real
guest, is tests/integration/test_lab.py."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from volbench.errors import UsageError
from volbench.lab import guest as guests
from volbench.lab import initramfs, lifecycle
from volbench.lab.home import private_file, private_folder, write_private
from volbench.lab.init_script import KEY_NAME, init_script, shell_handler
from volbench.lab.kernel import Kernel
from volbench.lab.machine import DETACH, GUARD, Launch, qemu_command
from volbench.lab.shell import KEY_FILE, Shell, make_key, read_key
from volbench.lab.throttle import Limits

KEY = "0123456789abcdef" * 4


@pytest.fixture
def lab(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("VOLBENCH_LAB_DIR", str(tmp_path / "lab"))
    return tmp_path / "lab"


@pytest.fixture
def open_umask() -> Iterator[None]:
    """umask 0 for the test: a file or folder not made with its own mode would be 0666
    or 0777."""
    saved = os.umask(0)
    try:
        yield
    finally:
        os.umask(saved)


def handle(tmp_path: Path, sent: bytes, key: str | None = KEY) -> tuple[str, bool]:
    """What the guest's shell handler prints for a connection that sent ``sent`` (the
    guest's key at a file of ``tmp_path``; none when ``key`` is None), and whether the
    command ran (it touches ``ran``)."""
    key_path = tmp_path / "volbench-key"
    key_path.unlink(missing_ok=True)
    if key is not None:
        key_path.write_text(key)
    ran = tmp_path / "ran"
    ran.unlink(missing_ok=True)
    done = subprocess.run(
        ["sh", "-c", shell_handler(str(key_path))],
        input=sent.replace(b"RUN", f"touch {ran}; echo hello".encode()),
        capture_output=True,
        timeout=10,
        check=False,
    )
    return done.stdout.decode(), ran.exists()


def test_the_guest_shell_runs_a_command_only_after_its_key(tmp_path: Path) -> None:
    assert handle(tmp_path, f"{KEY}\nRUN\n".encode()) == ("hello\n", True)
    assert handle(tmp_path, f"{KEY}\r\nRUN\r\n".encode()) == ("hello\n", True)
    assert handle(tmp_path, b"RUN\n") == ("", False)  # the old protocol: no key
    assert handle(tmp_path, f"{KEY[:-1]}0\nRUN\n".encode()) == ("", False)
    assert handle(tmp_path, f"{KEY}x\nRUN\n".encode()) == ("", False)
    assert handle(tmp_path, b"\nRUN\n", key=None) == ("", False)  # no key in the guest
    assert handle(tmp_path, b"\nRUN\n", key="") == ("", False)
    assert handle(tmp_path, b"abc\nRUN\n", key="abc") == ("", False)  # too short a key
    assert handle(tmp_path, b'x" ] || [ "\nRUN\n') == ("", False)


def test_init_starts_the_shell_only_with_a_key() -> None:
    text = init_script(["qemu_fw_cfg"])
    reads = text.index(f"/sys/firmware/qemu_fw_cfg/by_name/{KEY_NAME}/raw")
    starts = text.index("nc -ll -p")
    assert text.index("insmod /lib/modules/qemu_fw_cfg.ko") < reads < starts
    assert "the shell channel is off" in text[starts:]


def test_the_key_reaches_qemu_as_a_file(lab: Path, open_umask: None) -> None:
    folder = private_folder(lab / "guests" / "k")
    path = make_key(folder)
    assert path == folder / KEY_FILE
    assert path.stat().st_mode & 0o777 == 0o600
    key = read_key(folder)
    assert len(key) == 64 and int(key, 16) >= 0
    assert make_key(folder) and read_key(folder) != key  # a new one for each boot
    launch = Launch(
        folder,
        folder / "vmlinuz",
        folder / "initrd",
        folder / "disk.img",
        True,
        "127.0.0.60",
        8765,
        8766,
        Limits(),
        "tcg",
        "lab-k-tcg",
    )
    command = qemu_command(launch)
    assert command[command.index("-fw_cfg") + 1] == f"name={KEY_NAME},file={path}"
    assert not any(read_key(folder) in argument for argument in command)
    shell = Shell(("127.0.0.60", 8766), read_key(folder))
    assert read_key(folder) not in repr(shell)
    assert shell.request("cat /proc/stat") == f"{read_key(folder)}\ncat /proc/stat\n".encode()
    with pytest.raises(UsageError, match="one line"):
        shell.request("a\nb")
    path.write_text("short")
    with pytest.raises(UsageError, match="not a shell key"):
        read_key(folder)
    path.unlink()
    with pytest.raises(UsageError, match="cannot read the guest's shell key"):
        read_key(folder)


def modes(root: Path) -> dict[str, int]:
    """The permission bits of everything under ``root`` and of ``root``, by path."""
    found = {".": root.stat().st_mode & 0o777}
    for path in root.rglob("*"):
        found[str(path.relative_to(root))] = path.lstat().st_mode & 0o777
    return found


def test_the_labs_files_are_made_private(lab: Path, open_umask: None) -> None:
    folder = private_folder(lab / "guests" / "p")
    guest = guests.Guest(
        "p",
        "127.0.0.60",
        8765,
        8766,
        "tcg",
        Limits(),
        str(folder / guests.DISK),
        1 << 20,
        "6.1",
        1.0,
        1,
    )
    guests.save(guest)
    make_key(folder)
    with private_file(folder / guests.DISK) as disk:
        disk.truncate(1 << 20)
    write_private(folder / "address", "127.0.0.60")
    lifecycle._remember_tcg()
    with private_file(lab / ".address.lock", append=True):
        pass
    assert set(modes(lab).values()) == {0o700, 0o600}, modes(lab)
    assert {k for k, v in modes(lab).items() if v == 0o700} == {".", "guests", "guests/p"}


def test_wider_lab_files_of_before_are_narrowed(lab: Path) -> None:
    (lab / "guests" / "old").mkdir(parents=True, mode=0o755)
    os.chmod(lab, 0o755)
    record = lab / "guests" / "old" / "guest.json"
    record.write_text("{}")
    os.chmod(record, 0o644)
    private_folder(lab / "guests" / "old")
    with private_file(record):
        pass
    assert modes(lab) == {
        ".": 0o700,
        "guests": 0o700,
        "guests/old": 0o700,
        "guests/old/guest.json": 0o600,
    }


def test_what_qemu_makes_is_private(tmp_path: Path, open_umask: None) -> None:
    """The guard shell's umask is qemu's: a file its program makes is 0600."""
    made = tmp_path / "serial.log"
    guard = subprocess.Popen(
        ["sh", "-c", GUARD, "volbench-lab-guard", "sh", "-c", f"echo x > {made}"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert guard.stdout is not None and guard.stdin is not None
    assert int(guard.stdout.readline()) > 0  # the program's pid
    guard.stdin.write(DETACH)
    guard.stdin.close()
    assert guard.wait(timeout=10) == 0
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not (made.exists() and made.read_text()):
        time.sleep(0.02)
    assert made.read_text() == "x\n"
    assert made.stat().st_mode & 0o777 == 0o600


def test_an_initramfs_of_other_scripts_is_not_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    """One built before the key (a handler that runs any line) is built again."""
    kernel = Kernel(Path("/vmlinuz"), "6.1.0-56-amd64", None)
    before = initramfs.cache_key("/bin/true", "/bin/sh", kernel)
    monkeypatch.setattr(initramfs, "shell_handler", lambda: "#!/bin/sh\nread -r l; sh -c $l\n")
    assert initramfs.cache_key("/bin/true", "/bin/sh", kernel) != before


def test_a_link_planted_in_the_lab_folder_is_not_written_through(lab: Path) -> None:
    """A link where the lab keeps a guest's file (its serial log, guest.json): refused
    in one line, the file it points at unchanged; appending too."""
    folder = private_folder(lab / "guests" / "x")
    victim = lab.parent / "victim.txt"
    victim.write_text("keep")
    for name, append in (("guest.json", False), ("serial.log", True)):
        (folder / name).symlink_to(victim)
        with pytest.raises(UsageError, match="is a symbolic link"):
            private_file(folder / name, append=append)
    assert victim.read_text() == "keep"
