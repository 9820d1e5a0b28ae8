"""Plan ``job``: a user's own fio job files, run as fio runs them, with everything volbench
adds to every plan (safety checks by identity, stored results and series, host
samples, stall watch, verdicts, the promise check, reports, resume).

Each group of jobs fio reports together is a test, each set of jobs fio runs together
a round: one fio process (:mod:`volbench.plans.jobs.groups`), so a finished group is
stored within a second of its end and ``volbench resume`` runs only the groups not
stored. A test keeps its jobs as fio reads them (:mod:`volbench.fio.job_group`); what
differs from one fio process over the whole files: a fio start (about 0.3 s) between
rounds, jobs run as threads (so they stop with volbench), each job named after its
test, and the seeds fio derives from a job's number where ``randseed`` is not given
(``randrepeat``: random offsets are those of the round's own fio).

The files each job opens are resolved and checked as a ``--target``
(:mod:`volbench.plans.placement.job_targets`); ``--target`` (one or several) and ``--hosts``
replace them: every job then runs on each target. The test's workload record
describes its jobs for checks and reports (:func:`summary`): what all its jobs state
alike, its outstanding I/Os summed over them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from volbench.errors import UsageError
from volbench.fio.job import JobFile, render
from volbench.fio.job_check import ask
from volbench.fio.job_group import DECIDED, GroupJob, write
from volbench.fio.job_group import read as read_group
from volbench.fio.job_rules import DEFAULT_ENGINE, canonical
from volbench.fio.job_source import HostFacts, Job, jobs
from volbench.fio.options import workload_record
from volbench.model import RW, Workload
from volbench.plans.jobs.groups import Group, clones, groups
from volbench.plans.jobs.reading import read_checked
from volbench.plans.placement.job_targets import NamedPath, named_paths
from volbench.plans.runs.execution import PlanSpec
from volbench.records import json_object, section
from volbench.store.limits import TEXT_CHARS

NAME = "job"


@dataclass(frozen=True)
class JobTest:
    """A test as recorded: its name, the names of its jobs and its round (from 0)."""

    name: str
    jobs: tuple[str, ...]
    round: int


@dataclass(frozen=True)
class JobOptions:
    """What a ``job`` run records of its plan: the job files as given, its tests, and
    whether the run's targets replaced the files the jobs name (``--target``, ``--hosts``)."""

    files: tuple[str, ...]
    tests: tuple[JobTest, ...]
    replaced: bool = False


@dataclass(frozen=True)
class JobPlan:
    """The plan of job files, the files and devices they name (none when the run's
    targets replace them) and the ioengines their jobs use (as recorded with a run)."""

    spec: PlanSpec
    named: tuple[NamedPath, ...]
    engines: str
    sources: tuple[tuple[str, int], ...] = ()
    """Each test's name and the place of its job file in the list given (0: the first)."""

    @property
    def writes(self) -> bool:
        return any(w.rw.writes for round_ in self.spec.rounds for w in round_)


def _common(records: Sequence[Mapping[str, object]], key: str) -> object | None:
    """The value every record states alike for ``key`` (None: not stated by all)."""
    values = [r.get(key) for r in records]
    return values[0] if values and all(v == values[0] for v in values) else None


def _whole(records: Sequence[Mapping[str, object]], key: str) -> int | None:
    """A whole number all records state alike, else None."""
    value = _common(records, key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _each(records: Sequence[Mapping[str, object]], key: str, default: float) -> list[float]:
    """Each record's number for ``key`` (``default`` where it states none)."""
    found = [r.get(key) for r in records]
    return [float(v) if isinstance(v, int | float) else default for v in found]


def summary(group: Group, text: str) -> Workload:
    """The workload record of test ``group`` (kept text ``text``): fio's defaults where
    its jobs state nothing (rw read, bs 4 KiB, iodepth 1, buffered, psync); what all its
    jobs state alike; ``rw`` the directions and randomness of all of them; iodepth x
    numjobs what they keep outstanding together (Little's law and the verdicts read
    that): every clone at the common iodepth, or, where the jobs' own differ and their
    sum does not share out evenly, all of it as one job's; time-based when all are, for
    the longest runtime."""
    records = [
        workload_record(group.name, {k: v or "" for k, v in job.effective().items()})
        for job in group.jobs
    ]
    patterns = [str(r.get("rw") or "read") for r in records]
    reads = any(p in ("read", "randread", "rw", "randrw") for p in patterns)
    written = any(p not in ("read", "randread") for p in patterns)
    random = any(p.startswith("rand") for p in patterns)
    rw = {
        (True, True): RW.RANDRW if random else RW.RW,
        (False, True): RW.RANDWRITE if random else RW.WRITE,
    }.get((reads, written), RW.RANDREAD if random else RW.READ)
    counts = _each(records, "numjobs", 1)
    outstanding = sum(qd * n for qd, n in zip(_each(records, "iodepth", 1), counts, strict=True))
    runtimes = [r.get("runtime_s") for r in records]
    known = _each(records, "runtime_s", 0.0)
    timed = all(t is not None for t in runtimes)
    engine = _common(records, "ioengine")
    depth, clones = int(outstanding), 1
    if outstanding % sum(counts) == 0:
        depth, clones = int(outstanding // sum(counts)), int(sum(counts))
    return Workload(
        group.name,
        rw,
        bs_bytes=_whole(records, "bs_bytes") or _whole(records[:1], "bs_bytes") or 4096,
        rwmixread_pct=_whole(records, "rwmixread_pct") if rw in (RW.RW, RW.RANDRW) else None,
        iodepth=depth,
        numjobs=clones,
        direct=all(r.get("direct") for r in records),
        ioengine=engine if isinstance(engine, str) else DEFAULT_ENGINE,
        size_bytes=_whole(records, "size_bytes"),
        offset_bytes=_whole(records, "offset_bytes") or 0,
        runtime_s=max(known) if timed and known else None,
        ramp_time_s=max(_each(records, "ramp_time_s", 0.0)),
        time_based=timed and all(r.get("time_based") for r in records),
        rate_iops=_whole(records, "rate_iops"),
        rate_bytes_per_s=_whole(records, "rate_bytes_per_s"),
        refill_buffers=all(r.get("refill_buffers") for r in records),
        job_text=text,
    )


def _kept(job: Job, files: GroupJob | None) -> GroupJob:
    """``job`` as its test keeps it: its options but those volbench decides, and its
    files (None: the run's targets take their place)."""
    options = tuple((o.key, o.value) for o in job.lines() if canonical(o.key) not in DECIDED)
    if files is None:
        return GroupJob(options)
    return GroupJob(
        options, files.files, files.directories, files.pattern, files.nrfiles, files.redirect
    )


def plan(
    paths: Sequence[str],
    cwd: Path,
    env: Mapping[str, str],
    *,
    replaced: bool = False,
    remote: bool = False,
    host: HostFacts | None = None,
) -> JobPlan:
    """The plan of the job files ``paths`` (relative to ``cwd``, where volbench was
    started, with the environment ``env``): read and checked with fio's own reading,
    each group a test, each job on the files it names (``replaced``: on the run's
    targets; ``remote``: those are on other hosts, or, not ``replaced``, the files
    the jobs name are, by absolute paths, on each of them)."""
    sections = read_checked(paths, cwd, env, host or HostFacts.here())
    every = jobs(sections)
    if replaced:
        by_job: dict[int, GroupJob] = {}
        named: list[NamedPath] = []
    else:
        by_job, named = named_paths(every, str(cwd), here=not remote)
    index = {id(job): number for number, job in enumerate(every)}
    tests: list[Workload] = []
    made = groups(every)
    for group in made:
        clones(group)
        for job in group.jobs:
            _check_replaced(job, replaced, remote)
        kept = [_kept(job, by_job.get(index[id(job)])) for job in group.jobs]
        text = write(kept)
        if len(text) > TEXT_CHARS:
            raise UsageError(
                f"test {group.name}: its jobs take {len(text):,} characters, more than the"
                f" store keeps of one test ({TEXT_CHARS:,}): split the group"
            )
        tests.append(summary(group, text))
    rounds = tuple(
        tuple(t for t, g in zip(tests, made, strict=True) if g.round == number)
        for number in range(made[-1].round + 1)
    )
    record = JobOptions(
        tuple(paths),
        tuple(JobTest(g.name, tuple(j.reported for j in g.jobs), g.round) for g in made),
        replaced,
    )
    spec = PlanSpec(NAME, rounds, options={NAME: json_object(record)}, together=True)
    if named:
        _fio_opens(tests, tuple(n.path for n in named), cwd, env)
    engines = sorted({str(j.effective().get("ioengine") or DEFAULT_ENGINE) for j in every})
    sources = tuple((g.name, g.jobs[0].section.file) for g in made)
    return JobPlan(spec, tuple(named), ",".join(engines), sources)


def _check_replaced(job: Job, replaced: bool, remote: bool) -> None:
    """A job whose files the run's targets replace may not replay an iolog (its files
    are the iolog's), nor, on other hosts, write an iolog there."""
    if replaced and job.has("read_iolog"):
        raise UsageError(
            f"{job.where('read_iolog')}: read_iolog replays onto the iolog's own files: give no"
            " --target (the job file's replay_redirect is checked) or leave the replay out"
        )
    if remote and job.has("write_iolog"):
        raise UsageError(
            f"{job.where('write_iolog')}: write_iolog would be written on the other host, outside"
            " the run's folder: refused"
        )


def _fio_opens(
    tests: Sequence[Workload], files: tuple[str, ...], cwd: Path, env: Mapping[str, str]
) -> None:
    """UsageError unless fio, reading the job file volbench will give it, adds exactly
    the files each job was given (fio's own split of ``filename=``)."""
    text = render(JobFile("", tuple(tests), DEFAULT_ENGINE, files=files))
    found = ask(["-"], cwd, env, stdin=text)
    wanted = [list(job.files) for test in tests for job in _read(test)]
    said = [section.files for section in found if section.name != "global"]
    if said != wanted:
        raise UsageError(
            "fio would open other files than volbench checked (please report this):"
            f" {said!r:.300} for {wanted!r:.300}"
        )


def _read(test: Workload) -> tuple[GroupJob, ...]:
    return read_group(test.job_text or "")


def recorded_rounds(
    options: Mapping[str, Any], planned: Sequence[Workload]
) -> tuple[tuple[Workload, ...], ...]:
    """The rounds of a ``job`` run from its recorded tests (their round numbers)."""
    record = section(options, NAME, JobOptions)
    if record is None:
        raise UsageError("its job file's tests were not recorded: start it again")
    round_of = {t.name: t.round for t in record.tests}
    numbers = sorted({round_of.get(w.name, -1) for w in planned})
    return tuple(tuple(w for w in planned if round_of.get(w.name, -1) == n) for n in numbers)


def cwd() -> Path:
    """The folder volbench was started in: where fio run by hand would run."""
    return Path(os.getcwd())
