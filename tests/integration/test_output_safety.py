"""Outputs never go to a device or into ``/dev`` (volbench/output_file.py): every route
by which a hostile or mistaken path sent the store, an export, a report, the site, the
runs folder, the lab's folder or the scratch file's side file onto a device, each tried
on a loop device over an image file holding ext4. The image's checksum is the same
after, each refusal is one line (exit 2), and nothing new appears in ``/dev``."""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_harness import Volbench, error_line

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="loop devices need root"),
]

FIO_OUTPUT = Path(__file__).parents[1] / "fixtures" / "fio" / "fio2_randread_4jobs.json"
Loop = Callable[..., str]


def _image(device: str) -> Path:
    backing = Path("/sys/class/block") / Path(device).name / "loop" / "backing_file"
    return Path(backing.read_text().strip())


def _sum(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def protected(loop_device: Loop, system_tool: Callable[[str], str]) -> Iterator[str]:
    """A loop device holding ext4 (a colleague's data); its image unchanged after the
    test and ``/dev`` holding none of the names the tests give (other tests on the
    machine make loop devices meanwhile)."""
    mkfs = system_tool("mkfs.ext4")
    device = loop_device(
        16,
        setup=lambda image: subprocess.run(
            [mkfs, "-q", "-F", str(image)], check=True, capture_output=True
        ),
    )
    image = _image(device)
    before = _sum(image)
    yield device
    assert _sum(image) == before, f"{device} was written"
    assert [n for n in os.listdir("/dev") if n.startswith("volbench")] == [], "made in /dev"


@pytest.fixture
def stored(volbench: Volbench) -> Volbench:
    """A store holding one run (a recorded fio output, imported)."""
    done = volbench("import", str(FIO_OUTPUT))
    assert done.returncode == 0, done.stderr
    return volbench


def test_the_store_on_a_device_is_refused(volbench: Volbench, protected: str) -> None:
    for given in (protected, f"sqlite:///{protected}"):
        done = volbench("import", str(FIO_OUTPUT), env={"VOLBENCH_DB": given})
        assert "is a device: give a file path" in error_line(done, 2), given
        done = volbench("import", str(FIO_OUTPUT), "--db", given)
        assert "is a device: give a file path" in error_line(done, 2), given


def test_the_store_through_a_link_to_a_device_is_refused(
    volbench: Volbench, protected: str, tmp_path: Path
) -> None:
    link = tmp_path / "results.db"
    link.symlink_to(protected)
    done = volbench("import", str(FIO_OUTPUT), "--db", str(link))
    assert f"{protected} is a device" in error_line(done, 2)


def test_a_store_or_data_folder_in_dev_is_refused(volbench: Volbench, protected: str) -> None:
    done = volbench("import", str(FIO_OUTPUT), env={"VOLBENCH_DB": "sqlite:////dev/volbench-x.db"})
    assert "on the filesystem of devices" in error_line(done, 2)
    env = {"XDG_DATA_HOME": "/dev", "VOLBENCH_DB": ""}
    done = volbench("import", str(FIO_OUTPUT), env=env)
    assert "volbench's data folder (XDG_DATA_HOME)" in error_line(done, 2)


@pytest.mark.parametrize("command", ["export", "pts-report", "report"])
def test_exports_and_reports_to_a_device_are_refused(
    stored: Volbench, protected: str, tmp_path: Path, command: str
) -> None:
    link = tmp_path / "out.json"
    link.symlink_to(protected)
    formats = ("--format", "json") if command != "report" else ()
    for target in (protected, str(link)):
        done = stored(command, "latest", *formats, "-o", target)
        line = error_line(done, 2)
        assert "is a device" in line or "is a symbolic link" in line, line
    suffix = ".html" if command == "report" else ".json"
    done = stored(command, "latest", *formats, "-o", f"/dev/volbench-x{suffix}")
    assert "on the filesystem of devices" in error_line(done, 2)


def test_the_site_and_the_folders_in_dev_are_refused(stored: Volbench, protected: str) -> None:
    done = stored("publish", "-o", "/dev/volbench-site")
    assert "on the filesystem of devices" in error_line(done, 2)
    quick = stored.quick_args(stored.home / "scratch.img")
    runs = [*quick[: quick.index("--runs-dir")], "--runs-dir", "/dev/volbench-runs"]
    assert "the runs folder (--runs-dir)" in error_line(stored(*runs), 2)
    lab = stored("lab", "list", env={"VOLBENCH_LAB_DIR": "/dev/volbench-lab"})
    assert "the lab's folder (VOLBENCH_LAB_DIR)" in error_line(lab, 2)


def test_a_side_file_planted_as_a_link_is_replaced_not_followed(
    volbench: Volbench, protected: str
) -> None:
    """The scratch file's side file is written to ``.NAME.volbench.json.tmp`` first: a
    link planted there is removed and the file made anew, the device untouched."""
    scratch = volbench.home / "scratch.img"
    planted = volbench.home / f".{scratch.name}.volbench.json.tmp"
    planted.symlink_to(protected)
    done = volbench.quick(scratch)
    assert done.returncode == 0, done.stderr
    assert not planted.is_symlink()
    assert (volbench.home / f".{scratch.name}.volbench.json").is_file()


def test_a_hosts_file_that_is_a_device_is_one_line(volbench: Volbench, protected: str) -> None:
    done = volbench("run", "quick", "--hosts-file", protected, "--dry-run")
    assert "host list " + protected in error_line(done, 2)
