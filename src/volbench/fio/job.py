"""Job builder: typed workloads in, an fio job file (INI text) out. Pure.

Every option written here is documented in fio's HOWTO ("Job file parameters").
Random workloads get ``norandommap``, ``randrepeat=0`` and ``refill_buffers`` so
that data and offsets are not repeatable between runs and every buffer is fresh
random data, as SNIA PTS requires of the data pattern.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from volbench.errors import UsageError
from volbench.fio.job_group import group_lines
from volbench.fio.job_group import read as read_group
from volbench.fio.job_text import (
    JobValueError,
    check_key,
    check_value,
    escape_filename,
    held_description,
    job_files,
    read_job,
)
from volbench.model import RW, Workload

LOG_AVG_MSEC = 1000
"""Per-second averaging window of the iops/bw/lat logs, in ms."""


@dataclass(frozen=True)
class JobFile:
    """A complete fio job file: shared target settings plus one section per workload.

    Each section after the first carries ``stonewall`` so the workloads run one
    after another in one fio process, each in its own reporting group.

    With ``targets`` (a multi-target run), ``filename`` is not global: each
    workload gets one section per target, with its own ``filename=``, all in the
    workload's reporting group, so the targets run it at the same time. Their
    logs are named ``NAME@TAG`` with the target's tag from ``log_tags`` (its place
    in the whole run), so each target's time series stays apart.
    """

    filename: str
    workloads: tuple[Workload, ...]
    ioengine: str
    log_dir: Path | None = None
    extra_global: dict[str, str] = field(default_factory=dict)
    targets: tuple[str, ...] = ()
    log_tags: tuple[str, ...] = ()
    held: tuple[tuple[str, str], ...] = ()
    """Files above given as a descriptor's path (``/proc/PID/fd/N``, held by volbench
    while it runs), each with the target's own path (named in ``description=``)."""
    files: tuple[str, ...] = ()
    """The files a user's job file's tests may open (``Workload.job_text``), each
    checked; empty: ``filename`` or ``targets``."""


_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
_ENGINE = re.compile(r"^[a-z0-9][a-z0-9_]*\Z")

GLOBAL_EXTRAS = frozenset({"log_unix_epoch", "size"})
"""Options a plan may add to ``[global]`` (:attr:`JobFile.extra_global`); any other
is refused, so no caller can add e.g. ``exec_prerun`` or a second ``filename``."""


def validate(workload: Workload) -> None:
    """Raise UsageError with one line when a workload cannot be run as given."""
    name = workload.name
    if not _NAME.match(name) or name == "global":
        raise JobValueError(f"invalid workload name {name!r}: use letters, digits, -, _ and .")
    if workload.iodepth < 1:
        raise UsageError(f"{name}: iodepth must be at least 1 (got {workload.iodepth})")
    if workload.numjobs < 1:
        raise UsageError(f"{name}: numjobs must be at least 1 (got {workload.numjobs})")
    if workload.bs_bytes <= 0 and not workload.bssplit:
        raise UsageError(f"{name}: block size must be positive (got {workload.bs_bytes})")
    if any(bs <= 0 or pct <= 0 for bs, pct in workload.bssplit):
        raise UsageError(f"{name}: bssplit block sizes and percentages must be positive")
    if workload.bssplit and sum(pct for _, pct in workload.bssplit) != 100:
        raise UsageError(f"{name}: bssplit percentages must add up to 100")
    if workload.rwmixread_pct is not None and not 0 <= workload.rwmixread_pct <= 100:
        raise UsageError(f"{name}: rwmixread must be 0..100 (got {workload.rwmixread_pct})")
    if workload.runtime_s is not None and workload.runtime_s < 0.001:
        raise UsageError(f"{name}: runtime must be at least 1 ms (got {workload.runtime_s} s)")
    if workload.ramp_time_s < 0:
        raise UsageError(f"{name}: ramp time must not be negative (got {workload.ramp_time_s} s)")
    if workload.offset_bytes < 0:
        raise UsageError(f"{name}: offset must not be negative (got {workload.offset_bytes})")
    if workload.random_pct is not None and not (
        workload.rw.is_random and 0 <= workload.random_pct <= 100
    ):
        raise UsageError(f"{name}: percentage_random needs a random rw and 0..100")
    if workload.align_bytes is not None and workload.align_bytes <= 0:
        raise UsageError(f"{name}: block alignment must be positive (got {workload.align_bytes})")
    for label, rate in (("rate_iops", workload.rate_iops), ("rate", workload.rate_bytes_per_s)):
        if rate is not None and rate <= 0:
            raise UsageError(f"{name}: {label} must be positive (got {rate})")
    if workload.read_iolog is not None:
        check_iolog(workload.read_iolog)
        if workload.time_based:
            raise UsageError(f"{name}: a replay runs its iolog to the end, not time-based")
    if workload.replay_speed_pct is not None and workload.replay_speed_pct < 1:
        raise UsageError(f"{name}: replay speed must be at least 1% ({workload.replay_speed_pct})")
    if workload.write_random_pct is not None and not (
        workload.rw.is_random and 0 <= workload.write_random_pct <= 100
    ):
        raise UsageError(f"{name}: percentage_random needs a random rw and 0..100")
    if any(bs <= 0 or pct <= 0 for bs, pct in workload.write_bssplit):
        raise UsageError(f"{name}: bssplit block sizes and percentages must be positive")
    if workload.write_bssplit and sum(pct for _, pct in workload.write_bssplit) != 100:
        raise UsageError(f"{name}: bssplit percentages must add up to 100")
    if workload.time_based and workload.runtime_s is None:
        raise UsageError(f"{name}: a time-based workload needs a runtime")
    if workload.size_bytes is not None and workload.size_bytes <= 0:
        raise UsageError(f"{name}: size must be positive (got {workload.size_bytes})")
    if workload.ioengine is not None:
        check_engine(workload.ioengine)
    for label, text in (
        ("random_distribution", workload.random_distribution),
        ("cpus_allowed", workload.cpus_allowed),
    ):
        if text is not None:
            check_value(f"{name}: {label}", text)


def check_iolog(path: str) -> str:
    """An iolog path as ``read_iolog`` and ``replay_redirect`` take it: what any job
    value must be (:func:`~volbench.fio.job_text.check_value`), absolute, and without
    ``:`` (fio splits ``read_iolog`` there and does not unescape ``replay_redirect``)."""
    check_value("iolog path", path, path=True)
    if ":" in path or not path.startswith("/"):
        raise JobValueError(
            f"iolog path {path!r} must be absolute and hold no ':' (fio splits names there)"
        )
    return path


def _split_text(split: Sequence[tuple[int, int]]) -> str:
    return ":".join(f"{bs}/{pct}" for bs, pct in split)


def check_engine(engine: str) -> str:
    """An ioengine name as fio lists them (``fio --enghelp``): no paths, no external
    engines (``external:/lib.so`` would load code into fio)."""
    if not _ENGINE.match(engine):
        raise JobValueError(
            f"invalid ioengine {engine!r}: use one of `fio --enghelp`, e.g. libaio or psync"
        )
    return engine


def _seconds(value: float) -> str:
    """fio time value: whole seconds as ``30s``, fractions in ms (fio's default unit is s)."""
    if float(value).is_integer():
        return f"{int(value)}s"
    return f"{round(value * 1000)}ms"


def workload_options(workload: Workload, ioengine: str) -> list[tuple[str, str | None]]:
    """The fio options of one workload, in a stable order (``None`` = a flag)."""
    validate(workload)
    opts: list[tuple[str, str | None]] = [("rw", workload.rw.value)]
    if workload.write_bssplit:  # fio: bssplit=READS,WRITES
        reads = _split_text(workload.bssplit) or f"{workload.bs_bytes}/100"
        opts.append(("bssplit", f"{reads},{_split_text(workload.write_bssplit)}"))
    elif workload.bssplit:
        opts.append(("bssplit", _split_text(workload.bssplit)))
    else:
        opts.append(("bs", str(workload.bs_bytes)))
    if workload.rw in (RW.RW, RW.RANDRW):
        opts.append(
            ("rwmixread", str(50 if workload.rwmixread_pct is None else workload.rwmixread_pct))
        )
    opts += [
        ("ioengine", check_engine(workload.ioengine or ioengine)),
        ("iodepth", str(workload.iodepth)),
        ("numjobs", str(workload.numjobs)),
        ("direct", "1" if workload.direct else "0"),
        ("offset", str(workload.offset_bytes)),
    ]
    if workload.size_bytes is not None:
        opts.append(("size", str(workload.size_bytes)))
    if workload.runtime_s is not None:
        opts.append(("runtime", _seconds(workload.runtime_s)))
    if workload.time_based:
        opts.append(("time_based", None))
    if workload.ramp_time_s > 0:
        opts.append(("ramp_time", _seconds(workload.ramp_time_s)))
    if workload.random_distribution:
        opts.append(("random_distribution", workload.random_distribution))
    if workload.rate_iops is not None:
        opts.append(("rate_iops", str(workload.rate_iops)))
    if workload.rate_bytes_per_s is not None:
        opts.append(("rate", str(workload.rate_bytes_per_s)))
    if workload.refill_buffers:
        opts.append(("refill_buffers", None))
    if workload.cpus_allowed:
        opts.append(("cpus_allowed", workload.cpus_allowed))
    if workload.write_random_pct is not None:  # fio: percentage_random=READS,WRITES
        random_reads = 100 if workload.random_pct is None else workload.random_pct
        opts.append(("percentage_random", f"{random_reads},{workload.write_random_pct}"))
    elif workload.random_pct is not None:
        opts.append(("percentage_random", str(workload.random_pct)))
    if workload.align_bytes is not None:
        opts.append(("blockalign", str(workload.align_bytes)))
    if workload.thinktime_s is not None:
        opts.append(("thinktime", _seconds(workload.thinktime_s)))
    if workload.thinktime_iotime_s is not None:
        opts.append(("thinktime_iotime", _seconds(workload.thinktime_iotime_s)))
    if workload.rw.is_random:
        opts += [("norandommap", None), ("randrepeat", "0")]
    if workload.read_iolog is not None:
        opts.append(("read_iolog", check_iolog(workload.read_iolog)))
        if workload.replay_no_stall:
            opts.append(("replay_no_stall", "1"))
        if workload.replay_speed_pct is not None:
            opts.append(("replay_time_scale", str(workload.replay_speed_pct)))
    return opts


def render(job: JobFile) -> str:
    """The job file text for ``fio JOBFILE``.

    ``thread`` (fio HOWTO, "thread"): fio runs its jobs as threads of its one
    process instead of forked processes, so the kernel's PR_SET_PDEATHSIG
    (:func:`volbench.fio.executable.die_with_parent`) stops every job when volbench
    dies, even by SIGKILL; a forked job would go on writing to the target.

    Every value is checked as it is written (:func:`~volbench.fio.job_text.check_value`),
    and the text is read back as fio reads it: the files its jobs open must be
    exactly ``filename`` or ``targets``, the files the safety checks looked at;
    else JobValueError, and fio never sees the text.
    """
    if not job.workloads:
        raise UsageError("a job file needs at least one workload")
    if any(w.job_text is not None for w in job.workloads):
        return _render_tests(job)
    lines = ["; written by volbench"]
    if job.held:
        lines.append("; /proc/PID/fd/N: the target volbench holds open (by hand: its path)")
    held = dict(job.held)
    lines.append("[global]")
    if not job.targets:
        lines += _file_lines(job.filename, held)
    lines += ["group_reporting=0", "lat_percentiles=1", "thread"]
    if job.log_dir is not None:
        lines.append(f"log_avg_msec={LOG_AVG_MSEC}")
    for key, extra in job.extra_global.items():
        if check_key(key) not in GLOBAL_EXTRAS:
            raise JobValueError(f"fio option {key!r} is not one a plan may add to [global]")
        lines.append(f"{key}={check_value(key, extra)}")
    names: set[str] = set()
    for index, workload in enumerate(job.workloads):
        name = workload.name
        if name in names:
            raise UsageError(f"duplicate workload name {name!r}")
        names.add(name)
        for place, target in enumerate(job.targets or (None,)):
            lines += ["", f"[{name}]"]
            if index > 0 and place == 0:
                lines.append("stonewall")
            if target is not None:
                lines += _file_lines(target, held)
            for key, option in workload_options(workload, job.ioengine):
                lines.append(key if option is None else f"{key}={check_value(key, option)}")
            if workload.read_iolog is not None:  # the iolog's files are replaced by the target
                lines.append(f"replay_redirect={check_iolog(target or job.filename)}")
            if job.log_dir is not None:
                tag = job.log_tags[place] if place < len(job.log_tags) else None
                prefix = str(job.log_dir / (f"{name}@{tag}" if tag else name))
                check_value("log path", prefix, path=True)
                lines += [
                    f"write_iops_log={prefix}",
                    f"write_bw_log={prefix}",
                    f"write_lat_log={prefix}",
                ]
    text = "\n".join(lines) + "\n"
    _prove_files(text, job)
    return text


def _render_tests(job: JobFile) -> str:
    """The job file of a round of a user's job file's tests (``Workload.job_text``):
    ``thread`` for every job (see :func:`render`) and a plan's extras, then each
    test's jobs as kept (:func:`volbench.fio.job_group.group_lines`), on the run's
    checked files, or once per target; volbench's per-second logs for every job that
    names none of its own."""
    if any(w.job_text is None for w in job.workloads):
        raise JobValueError("a round runs the tests of a job file or volbench's, not both")
    lines = ["; written by volbench: the tests of a job file, each job as fio reads it"]
    if job.held:
        lines.append("; /proc/PID/fd/N: the target volbench holds open (by hand: its path)")
    lines += ["[global]", "thread"]
    for key, extra in job.extra_global.items():
        if check_key(key) not in GLOBAL_EXTRAS:
            raise JobValueError(f"fio option {key!r} is not one a plan may add to [global]")
        lines.append(f"{key}={check_value(key, extra)}")
    held = dict(job.held)
    targets = job.targets or ((job.filename,) if job.filename else ())
    allowed = set(job.files) | {held.get(t, t) for t in targets}
    names: set[str] = set()
    for index, workload in enumerate(job.workloads):
        if not _NAME.match(workload.name) or workload.name in names:
            raise JobValueError(f"invalid or repeated test name {workload.name[:60]!r}")
        names.add(workload.name)

        def logs(place: int, name: str = workload.name) -> list[str]:
            if job.log_dir is None:
                return []
            tag = job.log_tags[place] if place < len(job.log_tags) else None
            prefix = check_value(
                "log path", str(job.log_dir / (f"{name}@{tag}" if tag else name)), path=True
            )
            return [
                f"write_iops_log={prefix}",
                f"write_bw_log={prefix}",
                f"write_lat_log={prefix}",
                f"log_avg_msec={LOG_AVG_MSEC}",
            ]

        lines += group_lines(
            workload.name,
            workload.job_text or "",
            targets,
            held,
            allowed.__contains__,
            index > 0,
            logs,
        )
    return "\n".join(lines) + "\n"


def logged(workload: Workload) -> bool:
    """Whether fio writes volbench's per-second logs for ``workload`` (a job file's
    test: some job of it names no log of its own)."""
    return workload.job_text is None or any(j.logged for j in read_group(workload.job_text))


def _file_lines(name: str, held: Mapping[str, str]) -> list[str]:
    """``filename=`` for one target; for a descriptor volbench holds, also the target's
    path in ``description=`` (:func:`~volbench.fio.job_text.held_description`), which
    fio's output gives back with the job's options."""
    lines = [f"filename={escape_filename(name)}"]
    if name in held:
        lines.append(f"description={held_description(held[name])}")
    return lines


def _prove_files(text: str, job: JobFile) -> None:
    """Raise JobValueError unless every job of ``text``, read as fio reads it,
    opens exactly one of the files ``job`` was built for, and each of them is used."""
    wanted = set(job.targets or (job.filename,))
    used: set[str] = set()
    for section in read_job(text):  # a replay opens replay_redirect, whatever its iolog names
        redirect = section.get("replay_redirect")
        if section.has("read_iolog") and (redirect is None or redirect not in wanted):
            raise JobValueError(
                f"job {section.name!r} would replay onto {redirect or 'the iolog files'},"
                f" not the checked target {', '.join(sorted(wanted))}: refused"
            )
    for name, files in job_files(text).items():
        per_section = len(job.targets) if job.targets else 1
        if len(files) != per_section or not set(files) <= wanted:
            raise JobValueError(
                f"job {name!r} would open {', '.join(files) or 'no file'}, not the checked "
                f"target {', '.join(sorted(wanted))}: refused"
            )
        used |= set(files)
    if used != wanted:
        raise JobValueError(f"the job file does not use {', '.join(sorted(wanted - used))}")


def planned_seconds(workloads: Sequence[Workload]) -> float:
    """Planned wall time of stonewalled workloads, in seconds (sum of ramp + runtime);
    a job file's tests in one fio process run at once (the longest's)."""
    if workloads and all(w.job_text is not None for w in workloads):
        return max(w.duration_s for w in workloads)
    return sum(w.duration_s for w in workloads)
