"""A test of a user's job file as volbench keeps it (``Workload.job_text``) and runs it.

The text holds the test's jobs, each a section of its own with every option it runs
with (its global sections' options first, then its own, in order) but those volbench
decides itself (:data:`DECIDED`):

- which jobs run together (``stonewall``, ``new_group``, ``wait_for``): each of the
  file's groups is a test, a round of the run (:mod:`volbench.plans.jobs.tests`);
  :func:`group_lines` starts each test of a round with ``new_group``;
- ``thread``: volbench runs every job as a thread of fio, so it stops with volbench
  (:func:`volbench.fio.job.render`); ``name``: each job is reported under its test's
  name, its section's header; ``description``;
- the files, as a :class:`GroupJob` says: the files a ``filename=`` names (absolute
  paths, checked), or those fio names itself (``directory=`` and ``filename_format=``,
  the job's own name written in), or none where the run's targets take their place
  (``--target``, ``--hosts``: one job per target).

The text comes back from the store, so :func:`read` checks every line again as the
plan did (:func:`volbench.fio.job_rules.refusal`, :func:`value_problem`), and
:func:`group_lines` proves the files each job opens are among those the run checked.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from volbench.fio.job_files import format_name
from volbench.fio.job_rules import GROUPING, canonical, refusal
from volbench.fio.job_source import KEY, KEYWORDS
from volbench.fio.job_text import (
    JobValueError,
    escape_filename,
    held_description,
    split_filenames,
)
from volbench.fio.job_text import value_problem as text_problem

DECIDED = frozenset(
    {*GROUPING, "thread", "name", "description", "filename", "directory", "filename_format"}
    | {"nrfiles", "unique_filename", "opendir", "replay_redirect"}
)
"""Options a job's own lines may not hold in the kept text (volbench writes them)."""

LOGS = frozenset({"write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log"})
"""Per-interval logs: a job naming its own gets none of volbench's."""

Option = tuple[str, "str | None"]


def value_problem(value: str) -> str | None:
    """What makes ``value`` read otherwise by fio than written in a job file, or None:
    the job builder's rules (:func:`volbench.fio.job_text.value_problem`) but for a
    ``$`` fio leaves as it is (``${NAME}`` and its keywords are replaced already)."""
    problem = text_problem(value.replace("$", "S"))
    if problem is None and ("${" in value or any(k in value for k in KEYWORDS)):
        problem = "holds '${' or a keyword fio would replace again"
    return problem


@dataclass(frozen=True)
class GroupJob:
    """One job of a test: its options (key as written, value; None: a flag) and its
    files: ``files`` (absolute, a ``filename=``), else fio's own names in
    ``directories`` (absolute) after ``pattern`` (``$jobnum``/``$filenum`` left for
    fio) for ``nrfiles`` per clone; neither: the run's targets."""

    options: tuple[Option, ...]
    files: tuple[str, ...] = ()
    directories: tuple[str, ...] = ()
    pattern: str | None = None
    nrfiles: int = 1
    redirect: str | None = None
    """A replay's ``replay_redirect`` (absolute): the target all its I/O goes to."""

    def get(self, key: str) -> str | None:
        """The last value of canonical option ``key`` ("" for a flag), None if not set."""
        found = [("" if v is None else v) for k, v in self.options if canonical(k) == key]
        return found[-1] if found else None

    @property
    def numjobs(self) -> int:
        text = self.get("numjobs") or "1"
        return int(text) if text.isdigit() else 1

    def opened(self) -> tuple[str, ...]:
        """Every file the job opens (all its clones'); () where the targets take over."""
        if self.files or self.redirect:
            return (*self.files, *([self.redirect] if self.redirect else []))
        return tuple(
            f"{self.directories[jobnum % len(self.directories)]}/"
            + format_name(self.pattern, "", jobnum, filenum)
            for jobnum in range(self.numjobs if self.directories else 0)
            for filenum in range(self.nrfiles)
        )

    @property
    def logged(self) -> bool:
        """volbench adds its per-second logs: the job names none of its own."""
        return not any(canonical(k) in LOGS for k, _ in self.options)

    def lines(self, reach: Callable[[str], str] = str) -> list[str]:
        """The job's option lines, its files last (each given through ``reach``)."""
        lines = [key if value is None else f"{key}={value}" for key, value in self.options]
        if self.files:
            lines.append("filename=" + ":".join(escape_filename(reach(f)) for f in self.files))
        elif self.directories:
            lines += [
                "directory=" + ":".join(escape_filename(d) for d in self.directories),
                f"filename_format={self.pattern}",
                f"nrfiles={self.nrfiles}",
            ]
        if self.redirect:
            lines.append(f"replay_redirect={reach(self.redirect)}")  # fio takes it whole
        return lines


def check_option(key: str, value: str | None) -> None:
    """JobValueError unless ``key=value`` may be kept as it is (see the module docstring)."""
    if not KEY.match(key):
        raise JobValueError(f"invalid fio option name {key[:60]!r}")
    name = canonical(key)
    if name in DECIDED:
        raise JobValueError(f"{key} is volbench's to write in a test's jobs")
    why = refusal(name, value)
    if why is not None:
        raise JobValueError(f"{why}: refused")
    problem = None if value is None else value_problem(value)
    if problem is not None:
        raise JobValueError(f"{key}={value[:60] if value else ''!r} {problem}: refused")


def write(jobs: Sequence[GroupJob]) -> str:
    """The kept text of a test of ``jobs`` (each checked)."""
    for job in jobs:
        for key, value in job.options:
            check_option(key, value)
        if job.pattern is not None:
            _check_pattern(job.pattern)
    return "".join("[job]\n" + "".join(f"{line}\n" for line in job.lines()) for job in jobs)


def _check_pattern(pattern: str) -> None:
    """A kept ``filename_format``: fio reads it as written, ``$jobnum`` and ``$filenum``
    its only keywords (the job's name is written in), no ``/``."""
    rest = re.sub(r"\$(jobnum|filenum)", "", pattern, flags=re.IGNORECASE)
    if value_problem(pattern) is not None or "/" in pattern or "$" in rest:
        raise JobValueError(f"filename_format {pattern[:60]!r} is not one volbench writes")


def read(text: str) -> tuple[GroupJob, ...]:
    """The jobs of a kept text, every line checked again (JobValueError)."""
    jobs: list[tuple[list[Option], dict[str, str]]] = []
    for line in text.splitlines():
        if line == "[job]":
            jobs.append(([], {}))
            continue
        if not jobs:
            raise JobValueError("a test's text starts with [job]")
        key, equals, value = line.partition("=")
        if key in ("filename", "directory", "filename_format", "nrfiles", "replay_redirect"):
            jobs[-1][1][key] = value
            continue
        check_option(key, value if equals else None)
        jobs[-1][0].append((key, value if equals else None))
    return tuple(_job(options, files) for options, files in jobs)


def _job(options: list[Option], files: Mapping[str, str]) -> GroupJob:
    """A job read back, its file lines checked: absolute paths fio reads as written."""
    names = split_filenames(files.get("filename", ""))
    dirs = split_filenames(files.get("directory", ""))
    redirect = files.get("replay_redirect") or None
    if redirect is not None and ":" in redirect:
        raise JobValueError(f"replay_redirect {redirect[:60]!r} holds ':'")
    for path in (*names, *dirs, *([redirect] if redirect else [])):
        if not path.startswith("/") or escape_filename(path) != path.replace(":", "\\:"):
            raise JobValueError(f"a test's file {path[:60]!r} is not an absolute path")
    pattern = files.get("filename_format")
    if pattern is not None:
        _check_pattern(pattern)
    nrfiles = files.get("nrfiles", "1")
    if not nrfiles.isdigit() or not 1 <= int(nrfiles) <= 4096:
        raise JobValueError(f"nrfiles {nrfiles[:20]!r} is not one volbench writes")
    if bool(dirs) != (pattern is not None) or (names and dirs):
        raise JobValueError("a test's job names its files once: filename= or directory=")
    return GroupJob(tuple(options), names, dirs, pattern, int(nrfiles), redirect)


def group_lines(
    name: str,
    text: str,
    targets: Sequence[str],
    held: Mapping[str, str],
    allowed: Callable[[str], bool],
    new_group: bool,
    logs: Callable[[int], list[str]],
) -> list[str]:
    """The job sections of one test ``name`` (kept ``text``) in a round's job file:
    each job as it was kept, its files given as fio reaches them (``held``: the path of
    the checked file -> the descriptor's path volbench gives fio), or, where it names
    none, once per place of ``targets`` (given as fio reaches them), described as the
    target held behind. ``new_group`` starts the test's own reporting group (a second
    test of a round); ``logs(place)`` gives each job's per-second log lines. Every file
    must pass ``allowed`` (the run's checked targets), else JobValueError."""
    lines: list[str] = []
    reach = {path: fio for fio, path in held.items()}
    for number, job in enumerate(read(text)):
        opened = job.opened()
        for path in opened:
            if not allowed(path):
                raise JobValueError(
                    f"test {name} would open {path}, not a target the run checked: refused"
                )
        if not opened and not targets:
            raise JobValueError(f"test {name} names no file and the run gave it no target")
        for place, target in enumerate(targets if not opened else (None,)):
            lines += ["", f"[{name}]"]
            if new_group and number == 0 and place == 0:
                lines.append("new_group")
            lines += job.lines(lambda path: reach.get(path, path))
            if job.directories:  # the names checked: fio's server would prefix them with
                lines.append("unique_filename=0")  # the client's address (fio HOWTO)
            if target is not None:
                lines.append(f"filename={escape_filename(target)}")
                if target in held:
                    lines.append(f"description={held_description(held[target])}")
            if job.logged:
                lines += logs(place)
    return lines
