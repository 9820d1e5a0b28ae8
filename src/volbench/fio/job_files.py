"""Which files a job of a user's job file opens, by fio's own rules (fio 3.x: options.c
``str_filename_cb``, ``get_next_str``, ``set_name_idx``; filesetup.c ``add_file``;
init.c ``add_job`` and ``make_filename``):

- each ``filename=`` adds its names (split at ``:`` not escaped as ``\\:``) to the files
  the section has; a job starts with the files of the global sections before it, so a
  job's own ``filename=`` adds to a global one, it does not replace it;
- a ``filename=`` name is put after the section's ``directory`` (its own, else the
  one in effect; the first of a ``:`` list) and a ``/``, absolute name or not;
- a job without files (and without ``read_iolog``) gets fio's own names: its name
  itself when ``nrfiles`` is 1 and that path exists and is not a regular file, else
  ``filename_format`` (default ``$jobname.$jobnum.$filenum``) for every clone
  (``numjobs``, jobnum 0..N-1) and file (``nrfiles``), after the clone's directory
  (the list's entry jobnum modulo its length);
- names that are not absolute are relative to the folder fio runs in.

Nothing here looks at the files beyond ``exists`` (given by the caller).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from volbench.errors import UsageError
from volbench.fio.job_rules import canonical
from volbench.fio.job_source import Job, Section
from volbench.fio.job_text import split_filenames
from volbench.units import shown

MAX_FILES = 4_096
"""The most files one job may open."""

_FORMAT_KEYS = ("$jobname", "$jobnum", "$filenum", "$clientuid")

Exists = Callable[[str], bool]
"""Whether a path exists and is not a regular file (``exists_and_not_regfile``)."""


@dataclass(frozen=True)
class JobFiles:
    """The files of one job as fio names them (relative to the folder fio runs in):
    ``listed`` by ``filename=`` (its globals' first), or, when none is, named by fio
    itself: ``directories`` (empty: fio's folder), ``pattern`` (``filename_format``, its
    ``$jobname`` left for the job's name; None: fio's default), ``nrfiles``, ``numjobs``.
    ``redirect``: a replay's ``replay_redirect`` (all its I/O goes there)."""

    listed: tuple[str, ...]
    directories: tuple[str, ...] = ()
    pattern: str | None = None
    nrfiles: int = 1
    numjobs: int = 1
    redirect: str | None = None

    @property
    def named_by_fio(self) -> bool:
        return not self.listed and self.redirect is None


def _count(job: Job, key: str) -> int:
    text = job.get(key, "1") or "1"
    if not (text.strip().isdigit() and 1 <= int(text) <= MAX_FILES):
        raise UsageError(
            f"{job.where(key)}: {key}={shown(text)}: give a whole number from 1 to {MAX_FILES:,}"
        )
    return int(text)


def _adds(section: Section, directory: str | None) -> tuple[list[str], str | None]:
    """The names ``section``'s ``filename=`` lines add, each after the directory in
    effect for it, and the directory in effect after the section."""
    own = [o.value for o in section.options if canonical(o.key) == "directory" and o.value]
    directory = own[-1] if own else directory
    names: list[str] = []
    for option in section.options:
        if canonical(option.key) == "filename" and option.value is not None:
            prefix = f"{split_filenames(directory)[0]}/" if directory else ""
            names += [prefix + name for name in split_filenames(option.value.strip())]
    return names, directory


def job_files(job: Job) -> JobFiles:
    """The files of ``job`` (see the module docstring)."""
    listed: list[str] = []
    directory: str | None = None
    for section in (*job.globals, job.section):
        names, directory = _adds(section, directory)
        listed += names
    if "-" in listed:
        raise UsageError(
            f"{job.where('filename')}: filename=- reads or writes fio's own stdin/stdout"
        )
    numjobs = _count(job, "numjobs")
    redirect = job.get("replay_redirect") or None
    if job.has("read_iolog") and redirect is None:
        raise UsageError(
            f"{job.where('read_iolog')}: read_iolog replays the files its iolog names, which"
            " volbench cannot check: give replay_redirect=DEVICE (the target it replays onto)"
        )
    return JobFiles(
        tuple(listed),
        split_filenames(directory) if directory else (),
        job.get("filename_format") or None,
        _count(job, "nrfiles"),
        numjobs,
        redirect,
    )


def format_name(pattern: str | None, jobname: str, jobnum: int, filenum: int) -> str:
    """fio's ``make_filename``: ``pattern``'s keywords (any case) replaced, or
    ``JOBNAME.JOBNUM.FILENUM`` without a pattern."""
    if not pattern:
        return f"{jobname}.{jobnum}.{filenum}"
    values = (jobname, str(jobnum), str(filenum), "")
    name = pattern
    for keyword, value in zip(_FORMAT_KEYS, values, strict=True):
        name = re.sub(re.escape(keyword), value.replace("\\", "\\\\"), name, flags=re.IGNORECASE)
    return name


def check_pattern(job: Job, pattern: str) -> None:
    """A ``filename_format`` volbench takes: fio's keywords but ``$clientuid`` (the
    address of fio's client), no other ``$``, no ``/`` (files in the directory itself)."""
    rest = pattern
    for keyword in _FORMAT_KEYS[:3]:
        rest = re.sub(re.escape(keyword), "", rest, flags=re.IGNORECASE)
    if "$" in rest or "/" in rest:
        raise UsageError(
            f"{job.where('filename_format')}: filename_format={shown(pattern)}: use $jobname,"
            " $jobnum and $filenum, and no /"
        )


def fio_names(files: JobFiles, jobname: str, exists: Exists) -> tuple[str, ...]:
    """The names fio gives the files of a job ``jobname`` without ``filename=``."""
    dirs = files.directories or ("",)
    prefix = [f"{d}/" if d else "" for d in dirs]
    if files.nrfiles == 1 and exists(jobname):
        return tuple(dict.fromkeys(prefix[n % len(dirs)] + jobname for n in range(files.numjobs)))
    if files.numjobs * files.nrfiles > MAX_FILES:
        raise UsageError(f"job {jobname} would open more than {MAX_FILES:,} files")
    return tuple(
        prefix[jobnum % len(dirs)] + format_name(files.pattern, jobname, jobnum, filenum)
        for jobnum in range(files.numjobs)
        for filenum in range(files.nrfiles)
    )


def opened(files: JobFiles, jobname: str, exists: Exists) -> tuple[str, ...]:
    """Every name the job opens: its listed files and a replay's target, else fio's."""
    if files.named_by_fio:
        return fio_names(files, jobname, exists)
    return tuple(dict.fromkeys((*files.listed, *([files.redirect] if files.redirect else []))))


def absolute(name: str, cwd: str) -> str:
    """``name`` (as fio is given it) as an absolute path, links and ``..`` resolved: what
    volbench checks (fio opens the name relative to the folder it runs in, ``cwd``)."""
    return os.path.realpath(os.path.join(cwd, name))


def exists_here(cwd: str) -> Exists:
    """fio's ``exists_and_not_regfile`` for names relative to ``cwd``."""

    def check(name: str) -> bool:
        path = os.path.join(cwd, name)
        return os.path.exists(path) and not os.path.isfile(path)

    return check


def listed_files(sections: Sequence[Section]) -> list[tuple[str, tuple[str, ...]]]:
    """Each section's own ``filename=`` names after its directory, in order, as fio adds
    them while it reads the sections (a section's name, its names): what fio's
    ``--debug=file`` says it added (:mod:`volbench.fio.job_check`)."""
    found = []
    directory: str | None = None
    file = -1
    for section in sections:
        if section.file != file:  # each job file starts without the globals before it
            directory, file = None, section.file
        names, after = _adds(section, directory)
        if section.is_global:
            directory = after
        found.append((section.name, tuple(names)))
    return found
