"""What volbench lets a user's job file do: fio's option names, and the options
refused because they run commands or reach outside the run.

fio finds an option by its name or its one alias (options.h ``o_match``); the
aliases below are every one of fio 3.33 to 3.39 (options.c ``.alias``). A job file's
options are judged by the names they stand for, so an alias refuses what its option
does; volbench also asks fio itself which options a file sets
(:mod:`volbench.fio.job_check`) and judges those names again.

Refused, each in one line naming the option: options that run a command or load code
(``exec_prerun``, ``exec_postrun``, an ioengine outside :data:`ENGINES`: ``external:``
libraries, ``exec``; fio's command-line ``trigger`` options); options that change the
machine outside the run (``cgroup``, ``ioscheduler``, ``unlink``); options whose files
volbench cannot check (``opendir``, a ``mem=mmap:FILE``, a pattern read from a file,
``profile``); and any path of a log or iolog (:data:`FOLDER_PATHS`) that is not a
relative path inside the folder fio runs in: the run's own folder.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from types import MappingProxyType

from volbench.fio.job_text import value_problem
from volbench.fio.options import rw_pattern
from volbench.units import shown

ALIASES: Mapping[str, str] = MappingProxyType(
    {
        "readwrite": "rw",
        "iodepth_batch_submit": "iodepth_batch",
        "iodepth_batch_complete": "iodepth_batch_complete_min",
        "io_limit": "io_size",
        "fill_fs": "fill_device",
        "fileoffset": "offset",
        "blocksize": "bs",
        "blockalign": "ba",
        "blocksize_range": "bsrange",
        "blocksize_unaligned": "bs_unaligned",
        "allrandrepeat": "randrepeat",
        "nr_files": "nrfiles",
        "timeout": "runtime",
        "iomem": "mem",
        "mem_align": "iomem_align",
        "data_placement": "dataplacement",
        "fdp_pli_select": "plid_select",
        "fdp_pli": "plids",
        "ratemin": "rate_min",
        "ratecycle": "rate_cycle",
        "wait_for_previous": "stonewall",
        "log_max_value": "log_window_value",
        "log_unix_epoch": "log_alternate_epoch",
        "disable_bw": "disable_bw_measurement",
        "ss": "steadystate",
        "ss_dur": "steadystate_duration",
        "ss_ramp": "steadystate_ramp_time",
    }
)
"""fio's option aliases, each to the option it names (fio 3.33-3.39)."""

ENGINES = frozenset(
    {"sync", "psync", "vsync", "pvsync", "pvsync2", "libaio", "io_uring", "posixaio", "mmap"}
)
"""The ioengines a job file may name: fio's built-in engines that read and write the
files and devices named (every other one runs programs, loads libraries, talks to a
network or deletes files, ``fio --enghelp``)."""

DEFAULT_ENGINE = "psync"
"""fio's ioengine where a job names none (Linux)."""

REFUSED: Mapping[str, str] = MappingProxyType(
    {
        "exec_prerun": "runs a command before the job",
        "exec_postrun": "runs a command after the job",
        "trigger": "runs a command",
        "trigger-file": "runs a command when a file appears",
        "trigger-timeout": "runs a command at a time",
        "trigger-remote": "runs a command on another host",
        "cgroup": "creates a cgroup (volbench creates only its own)",
        "cgroup_weight": "sets a cgroup's weight (volbench creates only its own cgroups)",
        "cgroup_nodelete": "keeps a cgroup fio made (volbench creates only its own)",
        "ioscheduler": "changes the device's I/O scheduler",
        "unlink": "deletes the job's files, which volbench checks again before every test",
        "unlink_each_loop": "deletes the job's files, which volbench checks again",
        "opendir": "opens every file under a folder: name the files with filename=",
        "profile": "adds the jobs of one of fio's profiles",
        "read_iolog": (
            "replays an iolog, which fio would read in the run's own folder, made anew for"
            " the run: to replay a workload, trace it with `volbench capture` and replay it"
            " with `volbench run replay`"
        ),
    }
)
"""Options refused whatever their value, with why (read after "OPTION ...")."""

FOLDER_PATHS = frozenset(
    {
        "write_iolog",
        "read_iolog",
        "write_bw_log",
        "write_lat_log",
        "write_iops_log",
        "write_hist_log",
        "merge_blktrace_file",
        "dp_scheme",
    }
)
"""Options naming a file fio reads or writes besides the targets: a relative path in
the folder fio runs in (the run's own), never elsewhere."""

FILE_OPTIONS = frozenset(
    {"filename", "directory", "filename_format", "nrfiles", "unique_filename", "replay_redirect"}
)
"""Options that say which files a job opens (:mod:`volbench.fio.job_files`)."""

GROUPING = frozenset({"stonewall", "new_group", "wait_for"})
"""Options that say which jobs run together (:mod:`volbench.plans.jobs.tests`)."""

_PATTERNS = frozenset({"buffer_pattern", "verify_pattern"})


def canonical(key: str) -> str:
    """The option fio finds for ``key`` (its name, or the option it is an alias of)."""
    return ALIASES.get(key, key)


def refusal(key: str, value: str | None) -> str | None:
    """Why option ``key`` (canonical) with ``value`` is refused, as a phrase naming it,
    or None when volbench passes it to fio."""
    if key in REFUSED:
        return f"{key} {REFUSED[key]}"
    if key == "ioengine" and value is not None:
        return _engine(value)
    if key == "mem" and value is not None and ":" in value:
        return f"mem={shown(value)} uses a file for fio's buffers (give mem= without :FILE)"
    if key in _PATTERNS and value is not None and "'" in value:
        return f"{key} reads a file into the pattern ('FILE'): give the pattern itself"
    if key in FOLDER_PATHS and value:
        return folder_path_problem(key, value)
    return None


def _engine(value: str) -> str | None:
    name = value.strip()
    if name in ENGINES:
        return None
    if name.startswith("external") or "/" in name or ".so" in name:
        return f"ioengine={shown(name)} loads a library into fio (its code would run)"
    if name == "exec":
        return "ioengine=exec runs programs"
    return (
        f"ioengine={shown(name)} is not one volbench runs: use one of {', '.join(sorted(ENGINES))}"
    )


def folder_path_problem(key: str, value: str) -> str | None:
    """Why the file(s) of ``key=value`` are not in the folder fio runs in (a relative
    path without ``..`` that fio reads as written), or None. ``read_iolog`` and
    ``merge_blktrace_file`` may list several, separated by ``:``."""
    for part in value.split(":") if key == "read_iolog" else (value,):
        problem = value_problem(part, path=True)
        if problem:
            return f"{key}={shown(value)}: the path {problem}"
        if part.startswith("/") or posixpath.normpath(part).split("/")[0] == "..":
            return (
                f"{key}={shown(value)} names a file outside the run's folder: give a"
                " relative path (fio runs in the run's own folder)"
            )
    return None


def writes(options: Mapping[str, str | None]) -> bool:
    """Whether a job of these (canonical, effective) options writes or trims its files:
    its ``rw`` (fio's default is read) moves data in another direction than reading, or
    it replays an iolog (``read_iolog``: the log's own writes and trims, whatever ``rw``
    says)."""
    if options.get("read_iolog"):
        return True
    pattern = rw_pattern(options.get("rw") or "read") or "write"  # unknown: as written
    return pattern not in ("read", "randread")


def flag(value: str | None) -> bool:
    """A flag option's value as fio reads it (``stonewall``, ``stonewall=1``: on;
    ``stonewall=0``: off; fio refuses other values, volbench takes them as on)."""
    if value is None:
        return True
    text = value.strip()
    return not (text.isdigit() and int(text) == 0)
