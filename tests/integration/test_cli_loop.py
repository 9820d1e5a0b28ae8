"""``volbench run quick`` on real block devices: loop devices over image files.

Every device is made by the ``loop_device`` fixture from an image file under the
test's tmp_path and detached by it afterwards; mounts are undone in ``finally``.
Blank devices are written; a device holding a filesystem is refused unless
``--destroy-data`` names it; a mounted one is always refused.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_harness import QUICK_TESTS, Volbench, fio_documents, only_error_line, raw_jobs, run_all

from volbench.fio.job_text import opened_file

MiB = 1 << 20
EXT4_MAGIC_OFFSET = 1024 + 0x38
"""Offset of ``s_magic`` (0xEF53, little endian) in an ext2/3/4 image."""

Loop = Callable[..., str]
Tool = Callable[[str], str]

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="loop devices need root"),
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed"),
]


@pytest.fixture
def ext4_image(system_tool: Tool) -> Callable[[Path], None]:
    """A ``loop_device`` setup that makes an ext4 filesystem on the image file."""
    mkfs = system_tool("mkfs.ext4")

    def setup(image: Path) -> None:
        subprocess.run([mkfs, "-q", "-F", str(image)], check=True, capture_output=True)

    return setup


def _has_ext4_magic(image: Path) -> bool:
    with image.open("rb") as f:
        f.seek(EXT4_MAGIC_OFFSET)
        return f.read(2) == b"\x53\xef"


def _image_of(device: str) -> Path:
    backing = Path("/sys/class/block") / os.path.basename(device) / "loop" / "backing_file"
    return Path(backing.read_text().strip())


def _assert_completed_on(
    volbench: Volbench, device: str, proc: subprocess.CompletedProcess[str]
) -> None:
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    document = json.loads(proc.stdout)
    assert document["status"] == "completed"
    assert document["target"]["path"] == device
    assert document["target"]["kind"] == "block"
    assert document["target"]["capacity_bytes"] == 48 * MiB
    assert [r["test"] for r in document["results"]] == list(QUICK_TESTS)
    assert all(r["iops"] > 0 for r in document["results"])
    # fio opened the device volbench checked and held, through its descriptor
    opened = [raw["global options"] for raw in fio_documents(document)]
    assert {opened_file(o) for o in opened} == {device}
    assert all(o["filename"].startswith("/proc/") for o in opened)
    assert {j["job options"]["size"] for j in raw_jobs(document)} == {str(32 * MiB)}
    assert volbench.stored()["id"] == document["id"]


def test_blank_loop_device_runs_quick(volbench: Volbench, loop_device: Loop) -> None:
    device = loop_device(48)
    _assert_completed_on(volbench, device, volbench.quick(device, "--format", "json"))


def test_ext4_is_refused_unless_destroy_data_names_it(
    volbench: Volbench, loop_device: Loop, ext4_image: Callable[[Path], None]
) -> None:
    device = loop_device(48, setup=ext4_image)
    image = _image_of(device)
    assert _has_ext4_magic(image)
    other = "/dev/volbench-not-this-device"
    plain, wrong = run_all(
        [
            (volbench, volbench.quick_args(device), None),
            (volbench, volbench.quick_args(device, f"--destroy-data={other}"), None),
        ]
    )
    assert only_error_line(plain, 2) == (
        f"volbench: error: refusing to write {device}: it holds an ext4 filesystem "
        f"(use --destroy-data={device} to overwrite it)"
    )
    assert only_error_line(wrong, 2) == (
        f"volbench: error: refusing to write {device}: it holds an ext4 filesystem; "
        f"--destroy-data={other} names another device "
        f"(use --destroy-data={device} to overwrite it)"
    )
    assert _has_ext4_magic(image)  # untouched
    assert volbench.stored_runs() == []

    proc = volbench.quick(device, f"--destroy-data={device}", "--format", "json")
    _assert_completed_on(volbench, device, proc)


def test_mounted_device_is_refused_even_with_destroy_data(
    volbench: Volbench,
    loop_device: Loop,
    ext4_image: Callable[[Path], None],
    system_tool: Tool,
    tmp_path: Path,
) -> None:
    device = loop_device(48, setup=ext4_image)
    where = tmp_path / "mnt"
    where.mkdir()
    subprocess.run([system_tool("mount"), "-t", "ext4", device, str(where)], check=True)
    try:
        plain, destroy = run_all(
            [
                (volbench, volbench.quick_args(device), None),
                (volbench, volbench.quick_args(device, f"--destroy-data={device}"), None),
            ]
        )
    finally:
        subprocess.run([system_tool("umount"), str(where)], check=False, capture_output=True)
    for proc in (plain, destroy):
        assert only_error_line(proc, 2) == (
            f"volbench: error: refusing to write {device}: it is mounted on {where} "
            f"(unmount it first)"
        )
    assert _has_ext4_magic(_image_of(device))
    assert volbench.stored_runs() == []
