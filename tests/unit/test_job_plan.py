"""Plan ``job`` above fio: a user's job files made a plan (tests, rounds, files, the
workload records), the text volbench gives fio, refusals, a dry run, and a run through
the one run engine that is interrupted and resumed, its fio answered from a recorded
output (fio's reading of the files is its recorded word: tests/fixtures/fio/jobfile)."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from recorded import FIO_FIXTURES, raw_document

from volbench.errors import UsageError
from volbench.fio.job import JobFile, render
from volbench.fio.job_check import read_debug
from volbench.fio.job_group import GroupJob, read, write
from volbench.fio.job_source import HostFacts, read_files
from volbench.fio.job_text import JobValueError
from volbench.fio.raw import RawRun
from volbench.fio.replay import ReplayRunner, job_sections
from volbench.model import RW, RunStatus, TargetInfo
from volbench.plans.dry_run import plan_preview
from volbench.plans.jobs import reading as job_reading
from volbench.plans.jobs import tests as job_tests
from volbench.plans.kinds import kind
from volbench.plans.placement.job_targets import NamedPath, prepare_named
from volbench.plans.placement.placed import placed
from volbench.plans.resumers import Tests, committed_tests
from volbench.plans.runs.engine import execute
from volbench.plans.runs.execution import Session
from volbench.plans.runs.preview import FIO_START_S
from volbench.plans.runs.reporter import NullReporter
from volbench.store.repository import Store

FOLDER = FIO_FIXTURES / "jobfile"
FILES = ["groups.fio", "named.fio"]
HOST = HostFacts(4096, 2048, 2)
ENV = {"BS": "8k"}


@pytest.fixture
def job_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The recorded job files in a folder of their own (with their ``data`` folder),
    fio's reading of them its recorded word, and what volbench would ask fio of the
    text it gives it kept in ``asked``."""
    folder = tmp_path / "here"
    shutil.copytree(FOLDER, folder)
    (folder / "data").mkdir()
    recorded = read_debug((FOLDER / "groups.parse.txt").read_text())
    monkeypatch.setattr(job_reading, "ask", lambda paths, cwd, env: recorded)
    monkeypatch.setattr(job_tests, "_fio_opens", lambda tests, files, cwd, env: None)
    return folder


def _plan(folder: Path, **options: Any) -> job_tests.JobPlan:
    return job_tests.plan(FILES, folder, ENV, host=HOST, **options)


def test_the_files_make_tests_rounds_and_targets(job_folder: Path) -> None:
    made = _plan(job_folder)
    spec = made.spec
    assert spec.together and spec.name == "job"
    assert [[w.name for w in r] for r in spec.rounds] == [
        ["read-a"],
        ["write", "write-beside"],
        ["named"],
    ]
    data = job_folder / "data"
    assert [(n.path, n.writes, n.size_bytes) for n in made.named] == [
        (f"{data}/shared.dat", True, 4 << 20),  # written by write, read by read-a and -b
        (f"{data}/own.dat", False, 2 << 20),  # read-b's 4m over its two files
        *((f"{data}/named.{j}.{f}", False, 1 << 20) for j in (0, 1) for f in (0, 1)),
    ]
    assert made.engines == "libaio,psync"
    read_a = spec.rounds[0][0]
    assert (read_a.rw, read_a.bs_bytes) == (RW.RANDREAD, 8192)
    assert (read_a.iodepth, read_a.numjobs) == (5, 1)  # QD 1 and QD 4: 5 outstanding
    assert (read_a.runtime_s, read_a.time_based, read_a.direct) == (1.0, True, True)
    assert (spec.rounds[1][0].rw, spec.rounds[1][0].iodepth, spec.rounds[1][0].numjobs) == (
        RW.RANDWRITE,
        1,
        2,
    )
    assert spec.rounds[2][0].rw is RW.READ and spec.rounds[2][0].ioengine == "psync"
    record = spec.options["job"]
    assert record["tests"][0] == {"name": "read-a", "jobs": ["read-a", "read-b"], "round": 0}
    kept = read(read_a.job_text or "")
    assert kept[1].options == (
        ("ioengine", "libaio"),
        ("direct", "1"),
        ("bs", "8k"),
        ("timeout", "1"),
        ("time_based", None),
        ("size", "4m"),
        ("rw", "randread"),
        ("iodepth", "4"),
    )
    assert kept[1].files == (f"{data}/shared.dat", f"{data}/own.dat")
    (named,) = read(spec.rounds[2][0].job_text or "")
    assert (named.directories, named.pattern, named.nrfiles) == (
        (str(data),),
        "named.$jobnum.$filenum",
        2,
    )


def test_the_text_fio_runs(job_folder: Path) -> None:
    spec = _plan(job_folder).spec
    data = job_folder / "data"
    held = (("/proc/1/fd/7", f"{data}/shared.dat"),)
    files = tuple(n.path for n in _plan(job_folder).named)
    text = render(
        JobFile("", spec.rounds[1], "psync", Path("/runs/r/round-001"), held=held, files=files)
    )
    assert text.startswith("; written by volbench")
    assert "\n[global]\nthread\n" in text
    assert job_sections(text) == ("write", "write-beside")
    assert "[write-beside]\nnew_group\nioengine=libaio" in text  # its own reporting group
    assert "filename=/proc/1/fd/7\n" in text  # the held file, reached through volbench
    assert "write_bw_log=/runs/r/round-001/write\n" in text and "log_avg_msec=1000" in text
    for option in ("stonewall", "wait_for", "\nname=", "directory=", "exec_prerun"):
        assert option not in text, option
    named = render(JobFile("", spec.rounds[2], "psync", None, files=files))
    assert f"directory={data}\nfilename_format=named.$jobnum.$filenum\nnrfiles=2\n" in named
    with pytest.raises(JobValueError, match=r"would open .*shared\.dat, not a target the run"):
        render(JobFile("", spec.rounds[1], "psync", None, files=files[1:]))


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("exec_prerun=touch /tmp/x", "exec_prerun runs a command before the job: refused"),
        ("stonewall", "stonewall is volbench's to write"),
        ("write_bw_log=/tmp/log", "names a file outside the run's folder"),
        ("bs=${BS}", "holds '${' or a keyword fio would replace again"),
        ("filename=relative.dat", "is not an absolute path"),
        ("ioengine=external:/tmp/x.so", "loads a library into fio"),
    ],
)
def test_a_kept_text_from_the_store_is_checked_again(line: str, said: str) -> None:
    """What comes back from the store (a bundle, an edited database) is checked again
    as the plan checked it."""
    text = write([GroupJob((("rw", "read"),), ("/dev/vdb",))])
    with pytest.raises(JobValueError) as refused:
        read(text + line + "\n")
    assert said in str(refused.value)


def test_on_the_runs_targets_each_job_runs_on_every_place(job_folder: Path) -> None:
    spec = _plan(job_folder, replaced=True).spec
    assert not _plan(job_folder, replaced=True).named
    held = (("/proc/1/fd/3", "/dev/vdb"),)
    text = render(
        JobFile("", spec.rounds[1], "psync", None, targets=("/proc/1/fd/3", "/dev/vdc"), held=held)
    )
    sections = text.split("\n[")[2:]
    assert [s.split("]")[0] for s in sections] == ["write", "write", "write-beside", "write-beside"]
    assert "filename=/proc/1/fd/3\ndescription=volbench target: /dev/vdb" in sections[0]
    assert "filename=/dev/vdc" in sections[1] and "new_group" not in sections[1]
    assert "new_group" in sections[2] and "new_group" not in sections[3]  # one group per test


def test_each_refused_option_is_one_line_before_fio_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(job_reading, "ask", _never)
    refused = {
        "exec_prerun=touch x": "exec_prerun runs a command before the job",
        "exec_postrun=touch x": "exec_postrun runs a command after the job",
        "ioengine=external:/tmp/e.so": "ioengine='external:/tmp/e.so' loads a library",
        "ioengine=/tmp/e.so": "ioengine='/tmp/e.so' loads a library",
        "ioengine=exec": "ioengine=exec runs programs",
        "ioengine=net": "ioengine='net' is not one volbench runs",
        "trigger=reboot": "trigger runs a command",
        "trigger-file=/tmp/t": "trigger-file runs a command when a file appears",
        "trigger-timeout=10": "trigger-timeout runs a command at a time",
        "write_iolog=/tmp/io.log": "write_iolog='/tmp/io.log' names a file outside",
        "read_iolog=../io.log": "read_iolog replays an iolog",
        "read_iolog=io.log": "`volbench run replay`",
        "write_bw_log=/var/tmp/bw": "write_bw_log='/var/tmp/bw' names a file outside",
        "write_lat_log=../lat": "write_lat_log='../lat' names a file outside",
        "write_iops_log=/tmp/iops": "write_iops_log='/tmp/iops' names a file outside",
        "write_hist_log=/tmp/h": "write_hist_log='/tmp/h' names a file outside",
        "merge_blktrace_file=/tmp/m": "merge_blktrace_file='/tmp/m' names a file outside",
        "cgroup=mine": "cgroup creates a cgroup",
        "ioscheduler=none": "ioscheduler changes the device's I/O scheduler",
        "unlink=1": "unlink deletes the job's files",
        "opendir=/mnt": "opendir opens every file under a folder",
        "iomem=mmaphuge:/mnt/huge/f": "mem='mmaphuge:/mnt/huge/f' uses a file",
        "buffer_pattern='/etc/shadow'": "buffer_pattern reads a file into the pattern",
        "profile=act": "profile adds the jobs of one of fio's profiles",
        "rw = write": "write rw=VALUE without a blank after =",
    }
    for number, (line, said) in enumerate(refused.items()):
        (tmp_path / f"j{number}.fio").write_text(f"[global]\nsize=1m\n[job]\n{line}\n")
        with pytest.raises(UsageError) as error:
            job_tests.plan([f"j{number}.fio"], tmp_path, {}, host=HOST)
        message = str(error.value)
        assert message.startswith(f"j{number}.fio:4: ") and said in message, message
        assert "\n" not in message


def _never(*args: object) -> None:
    raise AssertionError("fio was asked of a job file volbench refuses")


def test_a_dry_run_shows_one_job_file_per_round(job_folder: Path) -> None:
    made = _plan(job_folder)
    target = TargetInfo("files", "files", 1 << 20)
    dry = plan_preview(
        made.spec, target, "psync", job_folder / "runs", named=[n.path for n in made.named]
    )
    assert (dry.processes, dry.tests) == (3, 4)
    assert [f.label for f in dry.job_files] == ["read-a", "write + write-beside", "named"]
    assert dry.low_s == pytest.approx(3 * (1 + FIO_START_S))  # the round's tests at once
    assert not (job_folder / "runs").exists()


class GroupingRunner(ReplayRunner):
    """fio as far as grouping goes: each section of the job file a job entry (the
    recorded randread one renamed), its groupid counted as fio does (``new_group``);
    ``stop_at``: the call that is interrupted (Ctrl-C, nothing printed)."""

    def __init__(self, stop_at: int | None = None) -> None:
        super().__init__(FIO_FIXTURES / "quick")
        self.template = raw_document("quick/round-000.json")
        self.calls: list[str] = []
        self.stop_at = stop_at

    def run(
        self,
        job_text: str,
        workdir: Path,
        on_status: Callable[..., None] | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> RawRun:
        workdir.mkdir(parents=True, exist_ok=True)
        self.calls.append(job_text)
        if len(self.calls) - 1 == self.stop_at:
            raise KeyboardInterrupt
        jobs, group = [], -1
        for block in re.split(r"\n\[", job_text)[2:]:
            name = block.split("]")[0]
            if not jobs or "\nnew_group\n" in block:
                group += 1
            jobs.append(
                {**copy.deepcopy(self.template["jobs"][1]), "jobname": name, "groupid": group}
            )
        return RawRun(json.dumps({**self.template, "jobs": jobs}), 0, "", False, ("fio",))


def test_a_run_interrupted_then_resumed_keeps_its_finished_groups(
    job_folder: Path, tmp_path: Path
) -> None:
    made = _plan(job_folder)
    runner = GroupingRunner(stop_at=1)
    with Store.open(str(tmp_path / "db.sqlite")) as store:
        session = Session(store, runner, NullReporter(), tmp_path / "runs")
        with placed(None, "", made.writes, NullReporter(), named=made.named) as place:
            rounds = place.rounds(made.spec)
            outcome = execute(
                session,
                rounds.plan,
                place.target,
                {},
                made.engines,
                round_runner=rounds.runner,
                places=place.settings,
            )
            assert outcome.status is RunStatus.INTERRUPTED
            assert [t.name for t in outcome.tests] == ["read-a"]
            run = store.get_run(str(outcome.run_id))
            assert [n.target.path for n in run.settings.named] == [n.path for n in made.named]
            assert [n.writes for n in run.settings.named] == [True] + [False] * 5
            runner.stop_at = None
            resumer = kind(run.plan).resume
            assert isinstance(resumer, Tests)
            done = resumer.run_again(session, run, place.target, place.round_runner)
        assert done.status is RunStatus.COMPLETED
        assert [t.name for t in done.tests] == ["write", "write-beside", "named"]
        run = store.get_run(str(outcome.run_id))
        assert [t.name for t in committed_tests(run)] == [
            "read-a",
            "write",
            "write-beside",
            "named",
        ]
        assert sorted({(r.round, r.test) for r in run.results}) == [
            (0, "read-a"),
            (1, "write"),
            (1, "write-beside"),
            (2, "named"),
        ]
        assert len(run.raw_outputs) == 3  # the round of two tests: one fio process
    assert len(runner.calls) == 4
    assert "[read-a]" not in runner.calls[2]  # resumed: only what was not stored
    assert "new_group" in runner.calls[2] and "[write-beside]" in runner.calls[2]


def test_a_test_larger_than_the_store_keeps_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A group whose jobs take more than a stored text (64 Ki characters) is one line
    before anything runs, not a run the store refuses at its start."""
    monkeypatch.setattr(
        job_tests, "read_checked", lambda p, cwd, env, host: read_files(p, env, host, cwd)
    )
    jobs = "".join(
        f'[j{n}]\nrw=read\ndescription={"x" * 60}\nbuffer_pattern="{"y" * 400}"\n'
        for n in range(160)
    )
    (tmp_path / "big.fio").write_text(f"[global]\nfilename=/dev/vdz\n{jobs}")
    with pytest.raises(UsageError, match=r"test j0: its jobs take 69,120 characters, more than"):
        job_tests.plan(["big.fio"], tmp_path, {}, host=HOST, replaced=True)


def test_files_to_make_that_do_not_fit_together_are_none_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three 1 MiB files a job names on a file system with 2.5 MiB free: each alone
    fits, all three do not; refused before any is made (not two made, then a refusal
    with the file system full)."""
    real = os.statvfs

    def statvfs(path: str) -> os.statvfs_result:
        found = real(path)
        fields = list(found)
        fields[0] = fields[1] = 4096  # f_bsize, f_frsize
        fields[4] = 640  # f_bavail: 2.5 MiB
        return os.statvfs_result(fields)

    monkeypatch.setattr(os, "statvfs", statvfs)
    named = [NamedPath(str(tmp_path / f"f{n}.dat"), True, 1 << 20) for n in range(3)]
    with pytest.raises(UsageError) as refused:
        prepare_named(named, NullReporter())
    assert str(refused.value) == (
        f"not enough space in {tmp_path} for the files the jobs name: 3.0 MiB needed, 2.5 MiB free"
    )
    assert not list(tmp_path.iterdir())
