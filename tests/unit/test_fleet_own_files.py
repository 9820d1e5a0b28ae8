"""A fleet whose jobs name their own files on other hosts (a cloud recipe's folders):
each job's share is stored under the place whose folder or file it opened."""

from __future__ import annotations

from pathlib import Path

from validity_facts import workload
from volbench.analysis.aggregate import place_tests
from volbench.fio.client import HostAddress
from volbench.fio.raw import RawRun
from volbench.fio_results import DirectionResult, FioOutput, JobResult
from volbench.model import Place
from volbench.plans.placement.fleet import _by_place
from volbench.plans.placement.fleet_spec import Fleet, OwnFile
from volbench.plans.runs.round import Process, _failures


def _job(name: str, options: dict[str, str]) -> JobResult:
    write = DirectionResult("write", 4096 * 100, 1000.0, 100.0, 409600.0, 100, None)
    return JobResult(name, 0, {"write": write}, 1.0, 1.0, 1000.0, 0, "127.0.0.61", options)


def test_each_share_is_its_places() -> None:
    fleet = Fleet(
        (Place("lab://fs", "/mnt/vda/nc"), Place("lab://fs", "/mnt/vda/file")),
        endpoints={"lab://fs": HostAddress("127.0.0.61", 8765, name="lab://fs")},
        files=(OwnFile("/mnt/vda/nc/w.0.0", True), OwnFile("/mnt/vda/file", True)),
    )
    assert fleet.place_of_file("lab://fs", "/mnt/vda/nc/w.1.0") == fleet.places[0]
    assert fleet.place_of_file("lab://fs", "/mnt/vda/ncx/w.0.0") is None
    assert fleet.place_of_file("lab://other", "/mnt/vda/file") is None
    jobs = (
        _job("w", {"directory": "/mnt/vda/nc", "filename_format": "w.$jobnum.$filenum"}),
        _job("w", {"directory": "/mnt/vda/nc", "filename_format": "w.$jobnum.$filenum"}),
        _job("w", {"filename": "/mnt/vda/file"}),
    )
    output = FioOutput("fio-3.33", 0, jobs)
    named = _by_place(fleet, fleet.places, output)
    assert [j.options.get("filename") for j in named.jobs] == [
        "/mnt/vda/nc",
        "/mnt/vda/nc",
        "/mnt/vda/file",
    ]
    assert named.jobs[0].options["directory"] == "/mnt/vda/nc"  # the rest as fio said
    shares = place_tests(named)[1]
    assert sorted((t.hostname, t.iops) for t in shares) == [
        ("127.0.0.61:/mnt/vda/file", 100.0),
        ("127.0.0.61:/mnt/vda/nc", 200.0),  # its two jobs' files merged: one share
    ]
    assert output.jobs[0].options.get("filename") is None  # fio's own output unchanged


def test_a_file_only_read_on_another_host_may_still_be_written() -> None:
    """fio lays out a file a job reads when it is missing or short, and volbench cannot
    look at it there: such a file is checked as written (its folder made in a lab
    guest's filesystem); a device only read is not written."""
    assert OwnFile("/mnt/vda/rc/reader1.0.0", writes=False).written
    assert not OwnFile("/dev/vda", writes=False).written
    assert OwnFile("/dev/vdb", writes=True).written


def test_a_round_whose_output_holds_no_job_failed() -> None:
    """fio's server drops every job of a job file it cannot read (a ``directory`` it
    lacks) and its client exits 0 with an output of no job: the round fails with the
    server's words, not a run stored as completed without the round's tests."""
    process = Process((workload(),), Path("/tmp/round"))
    said = "<lab-fs-tcg> fio: /mnt/vda/rc is not a directory"
    raw = RawRun("{}", 0, said + "\n<lab-fs-tcg> fio: job r dropped\n", False, ("fio",))
    assert _failures(process, raw, [], ran=False) == [
        f"fio ran none of the round's jobs: {said}; <lab-fs-tcg> fio: job r dropped"
    ]
    assert _failures(process, raw, [], ran=True) == []
