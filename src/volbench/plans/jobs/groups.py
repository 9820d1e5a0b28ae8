"""A user's job file's jobs as tests: each group of jobs fio reports together is a test,
and each set of jobs fio runs together is a round (one fio process).

fio's rules (init.c ``add_job``): a job with ``stonewall`` (``wait_for_previous``) or
``new_group`` set, itself or by a global section, starts a new reporting group, unless
it is the first job; ``stonewall`` also waits for every job before it to end, and so
does the first job of every job file after the first. So a round is the jobs from one
``stonewall`` to the next, and its tests are its reporting groups (``new_group``
without ``stonewall`` runs a group beside the one before it).

A test is named after its first job (fio's name for a group under
``group_reporting``), in letters, digits and ``_ . -``; a name two tests would share
gets ``-gN``, N the group's number as fio counts them (from 0, over all the files), as
``volbench import`` tells such tests apart. ``wait_for`` naming a job of an earlier
round is met before its round starts; naming one of its own round, volbench cannot
keep it (each job of a test is named after the test): refused.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from volbench.errors import UsageError
from volbench.fio.bounds import MAX_NUMJOBS, MAX_POINTS
from volbench.fio.job_rules import flag
from volbench.fio.job_source import Job
from volbench.model import BUFFERED_PREFIX
from volbench.units import shown

NAME_CHARS = 64
"""The longest test name taken from a job's name (before a ``-gN``)."""
_SOLO = "solo."  # volbench.plans.placement.fleet_spec.SOLO_PREFIX (a run on several places)


@dataclass(frozen=True)
class Group:
    """One test: its name, its jobs, its round (from 0) and fio's number for it."""

    name: str
    jobs: tuple[Job, ...]
    round: int
    number: int


def _set(job: Job, key: str) -> bool:
    return job.has(key) and flag(job.get(key))


def groups(jobs: Sequence[Job]) -> tuple[Group, ...]:
    """The tests of ``jobs`` in order (see the module docstring)."""
    found: list[tuple[int, list[Job]]] = []
    round_no = -1
    for index, job in enumerate(jobs):
        first_of_file = index == 0 or jobs[index - 1].section.file != job.section.file
        stonewall = _set(job, "stonewall") or (first_of_file and job.section.file > 0)
        if index == 0 or stonewall:
            round_no += 1
        if index == 0 or stonewall or _set(job, "new_group"):
            found.append((round_no, []))
        found[-1][1].append(job)
    if len(found) > MAX_POINTS:
        raise UsageError(f"{len(found):,} groups of jobs: at most {MAX_POINTS:,} tests")
    names = _names([members[0] for _, members in found])
    made = tuple(
        Group(name, tuple(members), round_no, number)
        for number, (name, (round_no, members)) in enumerate(zip(names, found, strict=True))
    )
    _check_waits(made)
    return made


def _names(firsts: Sequence[Job]) -> list[str]:
    """Each group's test name from its first job (see the module docstring)."""
    plain = [_plain(job.reported) for job in firsts]
    names = [n if plain.count(n) == 1 else f"{n}-g{number}" for number, n in enumerate(plain)]
    for number, name in enumerate(names):  # a job named like another's -gN
        if names.count(name) > 1:
            names[number] = f"{name}-{number}"
    return names


def _plain(name: str) -> str:
    """A job's name as a test name: other characters as ``-``, starting with a letter or
    digit, not a name volbench gives its own tests (``buffered.``, ``solo.``)."""
    text = re.sub(r"[^A-Za-z0-9_.-]", "-", name)[:NAME_CHARS]
    if not text[:1].isalnum() or text.startswith((BUFFERED_PREFIX, _SOLO)) or text == "global":
        text = f"job-{text}"[:NAME_CHARS]
    return text


def _check_waits(made: Sequence[Group]) -> None:
    """``wait_for`` of every job: a job of an earlier round (met), else refused."""
    round_of: dict[str, int] = {}
    for group in made:
        for job in group.jobs:
            waited = job.get("wait_for") if job.has("wait_for") else None
            if waited:
                if waited not in round_of:
                    raise UsageError(
                        f"{job.where('wait_for')}: wait_for={shown(waited)}: no job of that name"
                        " before it (fio refuses it)"
                    )
                if round_of[waited] == group.round:
                    raise UsageError(
                        f"{job.where('wait_for')}: wait_for={shown(waited)} waits for a job fio"
                        " runs at the same time: volbench cannot keep that (use stonewall)"
                    )
            round_of.setdefault(job.reported, group.round)


def clones(group: Group) -> int:
    """How many jobs fio runs for the test (each job's ``numjobs``)."""
    total = 0
    for job in group.jobs:
        text = job.get("numjobs", "1") or "1"
        if not (text.isdigit() and 1 <= int(text) <= MAX_NUMJOBS):
            raise UsageError(
                f"{job.where('numjobs')}: numjobs={shown(text)}: from 1 to {MAX_NUMJOBS:,}"
            )
        total += int(text)
    if total > MAX_NUMJOBS:
        raise UsageError(f"test {group.name} runs {total:,} jobs: fio runs {MAX_NUMJOBS:,} at most")
    return total
