"""The job builder's second line of defence: no value can start a new line or option,
or make fio open another file than the one the safety checks looked at."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from volbench.fio.job import JobFile, render
from volbench.fio.job_text import (
    JobValueError,
    job_files,
    read_job,
    split_filenames,
    value_problem,
)
from volbench.model import RW, Workload

HOSTILE = (
    "/tmp/x\nfilename=/dev/loop5",
    "/tmp/x\rfilename=/dev/loop5",
    "/tmp/x\x00/dev/loop5",
    "/tmp/x\u2028filename=/dev/loop5",
    "/tmp/x\u0085filename=/dev/loop5",
    "/tmp/x\x1b[31m",
    "/dev/loop5;/tmp/x",
    "/dev/loop5#/tmp/x",
    "/dev/loop5 ",
    " /dev/loop5",
    "/dev/loop5\t",
    "/tmp/${HOME}",
    "/tmp/$ncpus",
    "/tmp/a\\",
    "",
)
WORKLOAD = Workload("a", RW.RANDWRITE, runtime_s=1)


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_paths_are_refused_everywhere_a_path_goes(value: str, tmp_path: Path) -> None:
    assert value_problem(value, path=True) is not None
    with pytest.raises(JobValueError):
        render(JobFile(value, (WORKLOAD,), "psync"))
    with pytest.raises(JobValueError):
        render(JobFile("", (WORKLOAD,), "psync", targets=("/tmp/ok", value)))
    if value and value == value.strip():  # a blank inside a log path is one fio keeps
        with pytest.raises(JobValueError):
            render(JobFile("/tmp/ok", (WORKLOAD,), "psync", log_dir=Path(value)))


@pytest.mark.parametrize(
    "engine", ["psync\nfilename=/dev/loop5", "libaio ", "external:/tmp/x.so", "a;b", "", "$x"]
)
def test_engines_must_be_plain_names(engine: str) -> None:
    with pytest.raises(JobValueError):
        render(JobFile("/tmp/ok", (WORKLOAD,), engine))
    with pytest.raises(JobValueError):
        render(JobFile("/tmp/ok", (Workload("a", RW.READ, ioengine=engine),), "psync"))


@pytest.mark.parametrize(
    "field",
    [
        {"random_distribution": "zipf:1.2\nfilename=/dev/loop5"},
        {"cpus_allowed": "0\nexec_prerun=id"},
        {"cpus_allowed": "0;x"},
    ],
)
def test_workload_strings_cannot_add_options(field: dict[str, str]) -> None:
    workload = Workload("a", RW.RANDREAD, **field)  # type: ignore[arg-type]
    with pytest.raises(JobValueError):
        render(JobFile("/tmp/ok", (workload,), "psync"))


@pytest.mark.parametrize("name", ["a\n", "a\nfilename=/dev/loop5", "a]\n[b", "global"])
def test_section_names_cannot_break_the_line(name: str) -> None:
    with pytest.raises(JobValueError):
        render(JobFile("/tmp/ok", (Workload(name, RW.READ),), "psync"))


@pytest.mark.parametrize(
    "extra", [{"exec_prerun": "id"}, {"filename": "/dev/loop5"}, {"size": "1m\nfilename=/x"}]
)
def test_only_known_global_options_with_plain_values(extra: dict[str, str]) -> None:
    with pytest.raises(JobValueError):
        render(JobFile("/tmp/ok", (WORKLOAD,), "psync", extra_global=extra))


def test_reader_reads_as_fio_does() -> None:
    text = (
        "[global]\nfilename=/tmp/a;b\n\n[x]\n  rw = read # comment\nthread\n"
        "[y]\nfilename=/c\\:d:/e\n"
    )
    sections = read_job(text)
    assert [s.name for s in sections] == ["global", "x", "y"]
    assert sections[0].get("filename") == "/tmp/a"
    assert sections[1].get("rw") == "read"
    assert sections[1].has("thread") and sections[1].get("thread") is None
    assert job_files(text) == {"x": ("/tmp/a",), "y": ("/c:d", "/e")}
    assert split_filenames("/dev/disk/by-path/pci-0000\\:00\\:1f.2-ata-1") == (
        "/dev/disk/by-path/pci-0000:00:1f.2-ata-1",
    )
    for bad in ("include /etc/passwd\n", "filename=/x\n", "[x]\nfilename=${HOME}\n"):
        with pytest.raises(JobValueError):
            read_job(bad)


def test_rendered_files_are_exactly_the_targets(tmp_path: Path) -> None:
    workloads = (WORKLOAD, Workload("b", RW.READ, runtime_s=1))
    one = render(JobFile("/dev/disk/by-path/p:1", workloads, "psync", log_dir=tmp_path))
    assert job_files(one) == {"a": ("/dev/disk/by-path/p:1",), "b": ("/dev/disk/by-path/p:1",)}
    two = render(JobFile("", workloads, "psync", tmp_path, targets=("/t/1", "/t/2")))
    assert job_files(two) == {"a": ("/t/1", "/t/2"), "b": ("/t/1", "/t/2")}


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_fio_reads_the_rendered_files_as_the_reader_does(tmp_path: Path) -> None:
    """Cross-check with fio itself: ``fio --showcmd`` prints the options it parsed."""
    odd = str(tmp_path / "a b:c=d[e]é,f")
    text = render(JobFile(odd, (WORKLOAD,), "psync"))
    (tmp_path / "job.fio").write_text(text)
    done = subprocess.run(
        ["fio", "--showcmd", str(tmp_path / "job.fio")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    shown = next(part for part in done.stdout.split(" --") if part.startswith("filename="))
    assert split_filenames(shown.removeprefix("filename=")) == (odd,)
    assert job_files(text) == {"a": (odd,)}
