"""The files and devices a user's job file names, resolved and checked as ``--target``.

Every job's files are found by fio's rules (:mod:`volbench.fio.job_files`), relative
to the folder volbench is started in (where fio run by hand would run), and resolved
to what they are: absolute, every link and ``..`` resolved
(:func:`volbench.targets.safety.canonical`). That path is what the safety checks look
at, what fio is given (a job's ``filename=`` is written again with it) and what is
checked again by identity before every round (:class:`volbench.plans.runs.engine.Guard`).
Files fio names itself (``directory``, ``filename_format``) are given to fio as its
folder and pattern, the folder resolved: such a file may not be a link.

Each is then prepared as a ``--target`` is
(:func:`volbench.plans.placement.preparation.prepare_target`): a device written needs
``--destroy-data`` when it holds data, the machine's own disk and devices in use are
refused, a file volbench did not make is written only with ``--force``, and a missing
file is made as a scratch file of real data, as large as its jobs ask (``filesize``,
else ``size`` over its files), else ``--size``, else 1 GiB. A job that only reads an
existing file smaller than it asks for would have fio lay the rest out: that file counts
as written.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from volbench.errors import UsageError
from volbench.fio.job_files import (
    MAX_FILES,
    absolute,
    check_pattern,
    exists_here,
    fio_names,
    format_name,
    job_files,
)
from volbench.fio.job_group import GroupJob
from volbench.fio.job_rules import writes
from volbench.fio.job_source import Job
from volbench.fio.options import fio_size
from volbench.model import NamedTarget, TargetInfo
from volbench.places.remote import remote_path
from volbench.plans.placement.named import named_by
from volbench.plans.placement.preparation import DEFAULT_FILE_BYTES, prepare_target
from volbench.plans.runs.reporter import Reporter
from volbench.store.limits import TEXT_CHARS, joined
from volbench.units import format_bytes


@dataclass(frozen=True)
class NamedPath:
    """A file or device the job file names: its canonical path, whether a job writes
    it, and the bytes a job asks of it (None: not stated as a plain size)."""

    path: str
    writes: bool
    size_bytes: int | None = None


def _size_each(job: Job, count: int) -> int | None:
    """The bytes a job asks of each of its ``count`` files: ``filesize``, else ``size``
    over them (plain fio sizes only)."""
    kb_base = 1000 if job.get("kb_base") == "1000" else 1024
    filesize = job.get("filesize")
    if filesize:
        return fio_size(filesize, kb_base)
    size = fio_size(job.get("size") or "", kb_base)
    return size // max(count, 1) if size else None


def _on_host(name: str) -> str:
    """A file a job names on another host: absolute, normalised (nothing of it can be
    resolved from here: the host's own fio checks it, :mod:`volbench.fio.remote_path`)."""
    return remote_path(name)


def _fio_named(job: Job, cwd: str, here: bool = True) -> tuple[GroupJob, tuple[str, ...]]:
    """The files of a job fio names itself (``directory``, ``filename_format``); on
    another host (not ``here``), named as given, unchecked here."""
    files = job_files(job)
    pattern = files.pattern or "$jobname.$jobnum.$filenum"
    check_pattern(job, pattern)
    literal = re.sub(re.escape("$jobname"), lambda _: job.name, pattern, flags=re.IGNORECASE)
    if not here:
        dirs = tuple(_on_host(d) for d in (files.directories or (".",)))
    else:
        dirs = tuple(absolute(d, cwd) for d in (files.directories or (".",)))
    if files.numjobs * files.nrfiles > MAX_FILES:
        raise UsageError(f"{job.section.where}: job {job.name} opens more than {MAX_FILES:,} files")
    for folder in dirs if here else ():
        if not os.path.isdir(folder):
            what = "is not a folder" if os.path.exists(folder) else "does not exist"
            raise UsageError(f"{job.where('directory')}: directory {folder} {what} (fio needs one)")
    paths = tuple(
        dict.fromkeys(
            os.path.join(dirs[jobnum % len(dirs)], format_name(literal, "", jobnum, filenum))
            for jobnum in range(files.numjobs)
            for filenum in range(files.nrfiles)
        )
    )
    for path in paths if here else ():
        if os.path.islink(path):
            raise UsageError(
                f"{job.section.where}: {path}, a file fio names itself, is a link: name the"
                " file it points to with filename="
            )
    return GroupJob((), (), dirs, literal, files.nrfiles), paths


def resolve(job: Job, cwd: str, here: bool = True) -> tuple[GroupJob, tuple[str, ...]]:
    """How the kept text names ``job``'s files (:class:`GroupJob` without options) and
    every file it opens, canonical (see the module docstring); on another host (not
    ``here``), absolute and normalised, nothing of them looked at here."""
    files = job_files(job)
    exists = exists_here(cwd) if here else (lambda _: False)
    if files.named_by_fio and not (files.nrfiles == 1 and exists(job.name)):
        return _fio_named(job, cwd, here)
    names = files.listed or (fio_names(files, job.name, exists) if files.named_by_fio else ())
    where = (lambda name: absolute(name, cwd)) if here else _on_host
    paths = tuple(dict.fromkeys(where(name) for name in names))
    redirect = where(files.redirect) if files.redirect else None
    every = (*paths, *([redirect] if redirect else []))
    return GroupJob((), paths, redirect=redirect), every


def named_paths(
    jobs: Sequence[Job], cwd: str, here: bool = True
) -> tuple[dict[int, GroupJob], list[NamedPath]]:
    """Each job's files (by its place in ``jobs``) and the files and devices of all of
    them, in order, each written when a job writes it (or fio would lay it out); on
    other hosts (not ``here``: the same paths on each), as named."""
    by_job: dict[int, GroupJob] = {}
    found: dict[str, NamedPath] = {}
    for index, job in enumerate(jobs):
        kept, paths = resolve(job, cwd, here)
        by_job[index] = kept
        written = writes(job.effective())
        asked = _size_each(job, kept.nrfiles if kept.directories else len(paths))  # a clone's
        for path in paths:
            before = found.get(path, NamedPath(path, False))
            size = max(filter(None, (before.size_bytes, asked)), default=None)
            found[path] = NamedPath(path, before.writes or written, size)
    if not here:
        return by_job, list(found.values())
    return by_job, [_laid_out(named) for named in found.values()]


def _laid_out(named: NamedPath) -> NamedPath:
    """``named``, written when it is an existing regular file smaller than asked."""
    if named.writes or named.size_bytes is None or not os.path.isfile(named.path):
        return named
    if os.path.getsize(named.path) >= named.size_bytes:
        return named
    return NamedPath(named.path, True, named.size_bytes)


def prepare_named(
    paths: Sequence[NamedPath],
    reporter: Reporter,
    size_bytes: int | None = None,
    destroy_data: Sequence[str] = (),
    force: bool = False,
) -> tuple[NamedTarget, ...]:
    """Each of ``paths`` checked and ready as a ``--target`` (see the module docstring):
    a missing file made at the size its jobs ask, else ``size_bytes``, else 1 GiB. The
    missing files of one file system must fit in its free space together, or none is
    made (16 jobs' files would fill it one by one, then fail at the next)."""
    new_sizes = {
        named.path: named.size_bytes or size_bytes or DEFAULT_FILE_BYTES
        for named in paths
        if not os.path.lexists(named.path)
    }
    _check_room(new_sizes)
    prepared = []
    for named in paths:
        size = new_sizes.get(named.path)
        info = prepare_target(
            named.path, named.writes, reporter, size, named_by(destroy_data, named.path), force
        )
        prepared.append(NamedTarget(info, named.writes))
    return tuple(prepared)


def _check_room(new_sizes: dict[str, int]) -> None:
    """Refuse when the files to make in existing folders, summed per file system, need
    more bytes than it has free (as a scratch file's own check, for all of them)."""
    needed: dict[int, tuple[str, int]] = {}
    for path, size in new_sizes.items():
        folder = os.path.dirname(path)
        if os.path.isdir(folder):
            device = os.stat(folder).st_dev
            first, total = needed.get(device, (folder, 0))
            needed[device] = (first, total + size)
    for folder, total in needed.values():
        vfs = os.statvfs(folder)
        free = vfs.f_bavail * vfs.f_frsize
        if total > free:
            raise UsageError(
                f"not enough space in {folder} for the files the jobs name:"
                f" {format_bytes(total)} needed, {format_bytes(free)} free"
            )


def run_target(named: Sequence[NamedTarget]) -> TargetInfo:
    """The run's target record: the one file or device, or all of them (kind
    ``files``, the smallest's capacity)."""
    if len(named) == 1:
        return named[0].target
    return TargetInfo(
        path=joined([n.target.path for n in named], TEXT_CHARS),
        kind="files",
        capacity_bytes=min(n.target.capacity_bytes for n in named),
    )
