"""IOMeter access specs -> fio workloads, spec files, and the worker-scaling sheet."""

from __future__ import annotations

from pathlib import Path

import pytest

from volbench.errors import UsageError
from volbench.fio.job import workload_options
from volbench.model import (
    RW,
    HostInfo,
    RunRecord,
    RunSettings,
    RunStatus,
    StoredResult,
    StoredWorkload,
    TargetInfo,
)
from volbench.plans import iometer
from volbench.report.iometer_sheets import iometer_sheet


def test_builtin_specs_map_to_fio_patterns() -> None:
    specs = {s.name: s for s in iometer.BUILTIN}
    assert specs["8k-random-read"].rw is RW.RANDREAD
    assert specs["8k-random-write"].rw is RW.RANDWRITE
    assert specs["8k-sequential-read"].rw is RW.READ
    assert specs["8k-sequential-write"].rw is RW.WRITE
    assert specs["iometer-default"].rw is RW.RANDRW


def test_workloads_one_per_spec_and_worker_count() -> None:
    spec = iometer.AccessSpec("mixed", 4096, read_pct=70, random_pct=50, align_bytes=4096)
    options = iometer.IometerOptions(specs=(spec,), workers=(2, 1), outstanding=4)
    loads = iometer.workloads(options)
    assert [w.name for w in loads] == ["mixed.w1", "mixed.w2"]
    opts = dict(workload_options(loads[1], "libaio"))
    assert opts["rw"] == "randrw"
    assert opts["rwmixread"] == "70"
    assert opts["percentage_random"] == "50"
    assert opts["blockalign"] == "4096"
    assert opts["numjobs"] == "2" and opts["iodepth"] == "4"
    full = iometer.IometerOptions(specs=(iometer.BUILTIN[0],), workers=(1,))
    assert "percentage_random" not in dict(workload_options(iometer.workloads(full)[0], "x"))


def test_spec_files_and_bad_specs(tmp_path: Path) -> None:
    good = tmp_path / "specs.toml"
    good.write_text(
        '[[spec]]\nname = "oltp-8k"\ntransfer = "8k"\nread_pct = 70\nrandom_pct = 100\n'
        'align = "4k"\n'
    )
    (spec,) = iometer.load_specs(good)
    assert spec == iometer.AccessSpec("oltp-8k", 8192, 70, 100, 4096)
    assert iometer.choose(["oltp-8k", "8k-random-read"], [spec])[0] is spec
    with pytest.raises(UsageError, match="unknown access spec 'nope'"):
        iometer.choose(["nope"])
    bad = tmp_path / "bad.toml"
    for text, message in (
        ("[[spec]]\nname = 'x'\n", "lacks 'transfer'"),
        ("nothing = 1\n", "holds no \\[\\[spec\\]\\] tables"),
        ("[[spec\n", "invalid TOML"),
        ("[[spec]]\nname='x'\ntransfer='8k'\nread_pct=120\nrandom_pct=0\n", "read_pct must be"),
    ):
        bad.write_text(text)
        with pytest.raises(UsageError, match=message):
            iometer.load_specs(bad)


SPEC = "[[spec]]\nname='x'\ntransfer='8k'\nread_pct=50\nrandom_pct=0\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("spec = [[1]]\n", "access spec 1 in .*: a \\[\\[spec\\]\\] table, not list"),
        ("spec = [1]\n", "a \\[\\[spec\\]\\] table, not int"),
        (SPEC.replace("read_pct=50", "read_pct = inf"), "read_pct must be a whole number"),
        (SPEC.replace("read_pct=50", "read_pct = nan"), "read_pct must be a whole number"),
        (SPEC.replace("read_pct=50", "read_pct = 50.5"), "read_pct must be a whole number"),
        (SPEC.replace("read_pct=50", "read_pct = true"), "read_pct must be a whole number"),
        (SPEC.replace("'8k'", "'" + "9" * 5000 + "'"), "transfer: invalid size .*at most 40"),
        (SPEC.replace("'8k'", "'4g'"), "transfer must be from 1 byte to 2,147,479,552"),
        (SPEC.replace("'8k'", "[1]"), "transfer must be a size"),
        (SPEC.replace("name='x'", "name=1"), "name must be text"),
        (SPEC.replace("name='x'", "name='" + "x" * 65 + "'"), "up to 64 letters"),
        (SPEC + "extra = 1\n", "unknown key 'extra'"),
        ("a = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deep"),
        ("[[spec]]\n" * 300, "holds 300 \\[\\[spec\\]\\] tables: at most 256"),
    ],
)
def test_hostile_spec_files_are_one_line(tmp_path: Path, text: str, message: str) -> None:
    """Regression (issue 22): `spec = [[1]]` and `read_pct = inf` were tracebacks."""
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    with pytest.raises(UsageError, match=message):
        iometer.load_specs(bad)


def test_spec_files_not_utf8_or_too_large(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"[[spec]]\nname = '\xff'\n")
    with pytest.raises(UsageError, match="not UTF-8"):
        iometer.load_specs(bad)
    bad.write_bytes(b"#" * (iometer.MAX_FILE_BYTES + 1))
    with pytest.raises(UsageError, match="larger than 1 MiB"):
        iometer.load_specs(bad)


def test_worker_counts_and_tests_are_bounded() -> None:
    """Regression (issue 22): `--workers 1..99999999` was a MemoryError."""
    spec = (iometer.BUILTIN[0],)
    with pytest.raises(UsageError, match="from 1 to 4,096"):
        iometer.workloads(iometer.IometerOptions(specs=spec, workers=(4097,)))
    many = iometer.IometerOptions(specs=iometer.BUILTIN * 20, workers=tuple(range(1, 257)))
    with pytest.raises(UsageError, match="at most 4,096"):
        iometer.workloads(many)


def _result(test: str, workers: int, iops: float) -> StoredResult:
    return StoredResult(
        round=0,
        test=test,
        direction="write",
        workload=StoredWorkload(rw="write", bs_bytes=8192, iodepth=1, numjobs=workers),
        iops=iops,
        bw_bytes_per_s=iops * 8192,
        io_bytes=0,
        runtime_ms=30000,
        lat_kind="lat",
        lat_mean_ns=workers / iops * 1e9,
        lat_min_ns=None,
        lat_max_ns=5e6,
        lat_stddev_ns=None,
        lat_p50_ns=None,
        lat_p90_ns=None,
        lat_p99_ns=None,
        lat_p999_ns=None,
        lat_p9999_ns=None,
        usr_cpu_pct=0,
        sys_cpu_pct=0,
        jobs=workers,
    )


def test_seed_002_worker_table_reads_as_saturation_after_two_workers() -> None:
    # the Azure VM disk post: Azure temporary disk, 8 KiB sequential write, 1..4 workers
    figures = {1: 8300, 2: 16300, 3: 16500, 4: 16500}
    run = RunRecord(
        id=1,
        plan="iometer",
        status=RunStatus.COMPLETED,
        started_at="",
        ended_at=None,
        target=TargetInfo("D:", "file", 0),
        host=HostInfo.from_record({}),
        labels={},
        settings=RunSettings(),
        results=tuple(_result(f"8k-sequential-write.w{w}", w, i) for w, i in figures.items()),
    )
    sheet = iometer_sheet(run)
    assert [r["iops"] for r in sheet.rows] == list(figures.values())
    assert [r["scaling"] for r in sheet.rows] == ["1.00x", "1.96x", "1.99x", "1.99x"]
    assert sheet.notes[1] == (
        "8k-sequential-write: 2 worker(s) reach 95% of the peak 16,500 IOPS (16,300 IOPS); "
        "more workers add little"
    )
