"""The fio job builder: Workload fields -> fio options, sections, validation."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from volbench.errors import UsageError
from volbench.fio.job import JobFile, planned_seconds, render, validate, workload_options
from volbench.model import RW, Workload

# SNIA PTS ECW/CBW block-size mix (DESIGN.md): 0.5K 4%, 1-3.5K 1% each, 4K 67%,
# 8K 10%, 16K 7%, 32K 3%, 64K 3%.
PTS_BSSPLIT = (
    (512, 4),
    (1024, 1),
    (1536, 1),
    (2048, 1),
    (2560, 1),
    (3072, 1),
    (3584, 1),
    (4096, 67),
    (8192, 10),
    (16384, 7),
    (32768, 3),
    (65536, 3),
)
PTS_BSSPLIT_TEXT = (
    "512/4:1024/1:1536/1:2048/1:2560/1:3072/1:3584/1:4096/67:8192/10:16384/7:32768/3:65536/3"
)

Sections = list[tuple[str, list[tuple[str, str | None]]]]


def options(workload: Workload, ioengine: str = "libaio") -> dict[str, str | None]:
    opts = workload_options(workload, ioengine)
    keys = [k for k, _ in opts]
    assert len(keys) == len(set(keys)), f"an option is written twice: {keys}"
    return dict(opts)


def sections(text: str) -> Sections:
    """The job file's sections in order, each with its (key, value | None) lines."""
    found: Sections = []
    for line in text.splitlines():
        if not line or line.startswith(";"):
            continue
        if line.startswith("[") and line.endswith("]"):
            found.append((line[1:-1], []))
            continue
        key, sep, value = line.partition("=")
        found[-1][1].append((key, value if sep else None))
    return found


def test_defaults_of_a_random_read() -> None:
    assert options(Workload("r", RW.RANDREAD)) == {
        "rw": "randread",
        "bs": "4096",
        "ioengine": "libaio",
        "iodepth": "1",
        "numjobs": "1",
        "direct": "1",
        "offset": "0",
        "runtime": "60s",
        "time_based": None,
        "refill_buffers": None,
        "norandommap": None,
        "randrepeat": "0",
    }


def test_every_field_lands_as_its_fio_option() -> None:
    workload = Workload(
        "ecw",
        RW.RANDRW,
        bssplit=PTS_BSSPLIT,
        rwmixread_pct=65,
        iodepth=32,
        numjobs=4,
        direct=False,
        ioengine="psync",
        size_bytes=1 << 30,
        offset_bytes=4096,
        runtime_s=1.5,
        ramp_time_s=5,
        time_based=True,
        random_distribution="zoned:50/5:30/15:20/80",
        rate_iops=500,
        rate_bytes_per_s=10_000_000,
        refill_buffers=False,
    )
    assert options(workload, ioengine="io_uring") == {
        "rw": "randrw",
        "bssplit": PTS_BSSPLIT_TEXT,
        "rwmixread": "65",
        "ioengine": "psync",
        "iodepth": "32",
        "numjobs": "4",
        "direct": "0",
        "offset": "4096",
        "size": str(1 << 30),
        "runtime": "1500ms",
        "time_based": None,
        "ramp_time": "5s",
        "random_distribution": "zoned:50/5:30/15:20/80",
        "rate_iops": "500",
        "rate": "10000000",
        "norandommap": None,
        "randrepeat": "0",
    }


def test_bs_is_written_without_bssplit_only() -> None:
    assert options(Workload("w", RW.WRITE, bs_bytes=131072))["bs"] == "131072"
    split = options(Workload("w", RW.WRITE, bs_bytes=131072, bssplit=PTS_BSSPLIT))
    assert "bs" not in split
    assert split["bssplit"] == PTS_BSSPLIT_TEXT


@pytest.mark.parametrize(
    ("rw", "pct", "expected"),
    [
        (RW.RW, 70, "70"),
        (RW.RANDRW, 0, "0"),
        (RW.RANDRW, 100, "100"),
        (RW.RANDRW, None, "50"),  # fio's own default, written out
        (RW.READ, 70, None),
        (RW.WRITE, 70, None),
        (RW.RANDREAD, 70, None),
        (RW.RANDWRITE, 70, None),
    ],
)
def test_rwmixread_only_for_mixed_patterns(rw: RW, pct: int | None, expected: str | None) -> None:
    assert options(Workload("w", rw, rwmixread_pct=pct)).get("rwmixread") == expected


@pytest.mark.parametrize("rw", list(RW))
def test_norandommap_and_randrepeat_for_random_patterns_only(rw: RW) -> None:
    opts = options(Workload("w", rw))
    if rw.value.startswith("rand"):
        assert ("norandommap", None) in opts.items()
        assert opts["randrepeat"] == "0"
    else:
        assert "norandommap" not in opts
        assert "randrepeat" not in opts


@pytest.mark.parametrize("rw", [RW.READ, RW.RANDWRITE])
def test_refill_buffers_follows_its_flag(rw: RW) -> None:
    assert "refill_buffers" in options(Workload("w", rw))
    assert "refill_buffers" not in options(Workload("w", rw, refill_buffers=False))


def test_ioengine_default_and_override() -> None:
    assert options(Workload("w", RW.READ), ioengine="io_uring")["ioengine"] == "io_uring"
    assert options(Workload("w", RW.READ, ioengine="psync"), "io_uring")["ioengine"] == "psync"


@pytest.mark.parametrize(
    ("seconds", "text"), [(30, "30s"), (30.0, "30s"), (0.5, "500ms"), (1.25, "1250ms")]
)
def test_runtime_and_ramp_time_in_s_or_ms(seconds: float, text: str) -> None:
    opts = options(Workload("w", RW.READ, runtime_s=seconds, ramp_time_s=seconds))
    assert opts["runtime"] == text
    assert opts["ramp_time"] == text


def test_optional_options_are_left_out() -> None:
    opts = options(Workload("w", RW.READ, runtime_s=None, time_based=False, direct=False))
    assert opts["direct"] == "0"
    for key in ("runtime", "time_based", "ramp_time", "size", "random_distribution"):
        assert key not in opts
    for key in ("rate_iops", "rate"):
        assert key not in opts


def test_render_global_section_and_stonewall_on_every_section_but_the_first() -> None:
    workloads = (Workload("a", RW.WRITE), Workload("b", RW.RANDREAD), Workload("c", RW.RW))
    job = JobFile("/tmp/target.dat", workloads, "libaio", extra_global={"log_unix_epoch": "1"})
    found = sections(render(job))
    assert [name for name, _ in found] == ["global", "a", "b", "c"]
    assert dict(found[0][1]) == {
        "filename": "/tmp/target.dat",
        "group_reporting": "0",
        "lat_percentiles": "1",
        "thread": None,  # jobs as threads of fio's one process: they die with it
        "log_unix_epoch": "1",
    }
    for index, (name, lines) in enumerate(found[1:]):
        assert (("stonewall", None) in lines) == (index > 0), name
        rest = [line for line in lines if line != ("stonewall", None)]
        assert rest == workload_options(workloads[index], "libaio")


def test_log_options_only_with_a_log_dir(tmp_path: Path) -> None:
    workloads = (Workload("a", RW.WRITE), Workload("b", RW.RANDREAD))
    without = sections(render(JobFile("/tmp/t", workloads, "libaio")))
    assert not any("log" in key for _, lines in without for key, _ in lines)

    found = sections(render(JobFile("/tmp/t", workloads, "libaio", log_dir=tmp_path)))
    assert ("log_avg_msec", "1000") in found[0][1]
    for name, lines in found[1:]:
        opts = dict(lines)
        for log in ("write_iops_log", "write_bw_log", "write_lat_log"):
            assert opts[log] == str(tmp_path / name)


def test_render_needs_a_workload() -> None:
    with pytest.raises(UsageError):
        render(JobFile("/tmp/t", (), "libaio"))


def test_render_refuses_duplicate_names() -> None:
    job = JobFile("/tmp/t", (Workload("a", RW.READ), Workload("a", RW.WRITE)), "libaio")
    with pytest.raises(UsageError, match="duplicate workload name 'a'"):
        render(job)


@pytest.mark.parametrize("name", ["", "a b", "a/b", "a[1]", "x]", "a\nb"])
def test_render_refuses_invalid_names(name: str) -> None:
    with pytest.raises(UsageError, match="invalid workload name") as error:
        render(JobFile("/tmp/t", (Workload(name, RW.READ),), "libaio"))
    assert "\n" not in str(error.value)


def test_render_refuses_the_reserved_name_global() -> None:
    with pytest.raises(UsageError):
        render(JobFile("/tmp/t", (Workload("global", RW.READ),), "libaio"))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"iodepth": 0}, "w: iodepth must be at least 1 (got 0)"),
        ({"numjobs": 0}, "w: numjobs must be at least 1 (got 0)"),
        ({"numjobs": -2}, "w: numjobs must be at least 1 (got -2)"),
        ({"bs_bytes": 0}, "w: block size must be positive (got 0)"),
        ({"bssplit": ((4096, 67), (8192, 32))}, "w: bssplit percentages must add up to 100"),
        ({"bssplit": ((4096, 67), (8192, 34))}, "w: bssplit percentages must add up to 100"),
        ({"rwmixread_pct": -1}, "w: rwmixread must be 0..100 (got -1)"),
        ({"rwmixread_pct": 101}, "w: rwmixread must be 0..100 (got 101)"),
        ({"runtime_s": 0}, "w: runtime must be at least 1 ms (got 0 s)"),
        ({"runtime_s": 0.0004}, "w: runtime must be at least 1 ms (got 0.0004 s)"),
        ({"runtime_s": -5.0}, "w: runtime must be at least 1 ms (got -5.0 s)"),
        ({"ramp_time_s": -1.0}, "w: ramp time must not be negative (got -1.0 s)"),
        ({"offset_bytes": -4096}, "w: offset must not be negative (got -4096)"),
        ({"rate_iops": 0}, "w: rate_iops must be positive (got 0)"),
        ({"rate_bytes_per_s": -1}, "w: rate must be positive (got -1)"),
        (
            {"bssplit": ((4096, 150), (8192, -50))},
            "w: bssplit block sizes and percentages must be positive",
        ),
        ({"runtime_s": None}, "w: a time-based workload needs a runtime"),
        ({"size_bytes": 0}, "w: size must be positive (got 0)"),
    ],
)
def test_validate_errors(changes: dict[str, Any], message: str) -> None:
    workload = dataclasses.replace(Workload("w", RW.RANDRW), **changes)
    with pytest.raises(UsageError) as error:
        validate(workload)
    assert str(error.value) == message
    with pytest.raises(UsageError):  # the builder validates too
        workload_options(workload, "libaio")


@pytest.mark.parametrize(
    "changes",
    [
        {"rwmixread_pct": 0},
        {"rwmixread_pct": 100},
        {"bssplit": PTS_BSSPLIT, "bs_bytes": 0},
        {"runtime_s": None, "time_based": False},
        {"runtime_s": 0.001},
    ],
)
def test_validate_accepts_edge_values(changes: dict[str, Any]) -> None:
    validate(dataclasses.replace(Workload("w", RW.RANDRW), **changes))


def test_planned_seconds_adds_ramp_and_runtime() -> None:
    workloads = [
        Workload("a", RW.READ, runtime_s=60, ramp_time_s=5),
        Workload("b", RW.READ, runtime_s=None, time_based=False),
        Workload("c", RW.READ, runtime_s=0.5),
    ]
    assert planned_seconds(workloads) == 65.5


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_rendered_job_file_is_accepted_by_fio(tmp_path: Path) -> None:
    workloads = (
        Workload("seq-write", RW.WRITE, bs_bytes=1 << 20, iodepth=32, size_bytes=1 << 24),
        Workload(
            "ecw",
            RW.RANDRW,
            bssplit=PTS_BSSPLIT,
            rwmixread_pct=65,
            iodepth=4,
            numjobs=2,
            offset_bytes=1 << 20,
            runtime_s=1.5,
            ramp_time_s=1,
            random_distribution="zoned:50/5:30/15:20/80",
            rate_iops=1000,
        ),
        Workload("rand-read", RW.RANDREAD, direct=False, rate_bytes_per_s=1 << 20),
    )
    job = JobFile(str(tmp_path / "target.dat"), workloads, "psync", log_dir=tmp_path / "logs")
    job_path = tmp_path / "job.fio"
    job_path.write_text(render(job))
    done = subprocess.run(
        ["fio", "--parse-only", str(job_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "dropped" not in done.stdout + done.stderr


def test_colons_in_the_target_path_are_escaped_for_fio(tmp_path: Path) -> None:
    target = tmp_path / "pci-0000:00:1f.2.dat"
    workload = Workload(
        "w", RW.WRITE, bs_bytes=4096, size_bytes=65536, time_based=False, runtime_s=None
    )
    text = render(JobFile(str(target), (workload,), "psync"))
    assert f"filename={tmp_path}/pci-0000\\:00\\:1f.2.dat" in text.splitlines()
    job = tmp_path / "colon.fio"
    job.write_text(text)
    subprocess.run(["fio", "--output-format=json", str(job)], check=True, capture_output=True)
    assert target.stat().st_size == 65536  # one file, not three split at the colons


def test_cpus_allowed_pins_the_job_only_when_given() -> None:
    assert options(Workload("w", RW.READ, cpus_allowed="1"))["cpus_allowed"] == "1"
    assert "cpus_allowed" not in options(Workload("w", RW.READ))
