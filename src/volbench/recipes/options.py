"""The fio options a recipe may hold, what each value may be, and how a rehearsal
scales sizes and times.

A recipe file may come from a user, so it may be hostile: only the options the
vendors' pages use are allowed (:data:`JOB_OPTIONS`, :data:`FIO_ARGS`), each value
checked by kind. No option names a path but ``filename`` and ``directory``, and
those only hold the page's placeholder (the user's target replaces it): a recipe
can never make fio open, log to, run or include anything else. Units are fio's
(HOWTO, "Parameter types"): a size is bytes with an optional ``k``/``m``/``g``/``t``/
``p`` suffix, powers of 1024 (fio's default ``kb_base=1024``; ``kb_base`` itself is
not allowed); a time is seconds unless it ends in ``us``, ``ms``, ``s``, ``m``, ``h``
or ``d``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from fractions import Fraction

from volbench.errors import UsageError
from volbench.fio.job_text import value_problem

SIZE = re.compile(r"^(\d{1,15})([kmgtp]?)(?:i?b)?\Z", re.IGNORECASE)
"""A size as the pages write it: ``4k``, ``1024k``, ``1M``, ``10G``, ``2500G``, ``500GB``."""

_SIZE_FACTOR = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}

TIME = re.compile(r"^(\d{1,12})(us|ms|s|m|h|d)?\Z", re.IGNORECASE)
"""A time as the pages write it: ``180``, ``60s``, ``1m``, ``2s``."""

_TIME_MS: dict[str, Fraction] = {
    "us": Fraction(1, 1000),
    "ms": Fraction(1),
    "s": Fraction(1000),
    "m": Fraction(60_000),
    "h": Fraction(3_600_000),
    "d": Fraction(86_400_000),
}

MiB = 1 << 20


def _size(value: str | None) -> str | None:
    if value is None or SIZE.match(value) is None:
        return "a size such as 4k, 1M or 10G"
    return None


def _time(value: str | None) -> str | None:
    if value is None or TIME.match(value) is None:
        return "a time such as 180, 60s or 1m"
    return None


def _count(value: str | None) -> str | None:
    if value is None or not re.fullmatch(r"[1-9]\d{0,6}", value):
        return "a whole number from 1 to 9,999,999"
    return None


def _percent(value: str | None) -> str | None:
    if value is None or not re.fullmatch(r"\d{1,3}", value) or int(value) > 100:
        return "a percentage from 0 to 100"
    return None


def _bool(value: str | None) -> str | None:
    return None if value in ("0", "1") else "0 or 1"


def _flag(value: str | None) -> str | None:
    return None if value in (None, "0", "1") else "nothing, 0 or 1"


def _choice(*allowed: str) -> Callable[[str | None], str | None]:
    def check(value: str | None) -> str | None:
        return None if value in allowed else "one of " + ", ".join(allowed)

    return check


def _path(value: str | None) -> str | None:
    return None if value else "the page's name of the target"


Check = Callable[[str | None], "str | None"]
"""What a value must be (a phrase for the error message), or None when it is fine."""

JOB_OPTIONS: Mapping[str, Check] = {
    "rw": _choice("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw"),
    "readwrite": _choice("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw"),
    "bs": _size,
    "blocksize": _size,
    "size": _size,
    "filesize": _size,
    "io_size": _size,
    "offset": _size,
    "offset_increment": _size,
    "runtime": _time,
    "ramp_time": _time,
    "iodepth": _count,
    "numjobs": _count,
    "iodepth_batch_submit": _count,
    "iodepth_batch_complete_max": _count,
    "rate_iops": _count,
    "rwmixread": _percent,
    "rwmixwrite": _percent,
    "direct": _bool,
    "randrepeat": _bool,
    "do_verify": _bool,
    "verify": _choice("0"),
    "time_based": _flag,
    "group_reporting": _flag,
    "norandommap": _flag,
    "refill_buffers": _flag,
    "thread": _flag,
    "ioengine": _choice("libaio", "io_uring", "psync", "sync", "pvsync", "pvsync2", "posixaio"),
    "clocksource": _choice("clock_gettime", "gettimeofday", "cpu"),
    "filename": _path,
    "directory": _path,
}
"""Every job option a recipe may set, with what its value may be."""

PATH_OPTIONS = frozenset({"filename", "directory"})
"""The options that name a file or folder: only ever the user's target."""

SCALED_SIZES = frozenset({"size", "filesize", "io_size", "offset", "offset_increment"})
"""Sizes a rehearsal scales: how much is read or written, and where jobs start (so the
jobs' regions keep their places relative to each other and to the end)."""

SCALED_TIMES = frozenset({"runtime", "ramp_time"})
"""Times a rehearsal scales."""

BLOCK_SIZES = frozenset({"bs", "blocksize"})

FIO_ARGS: Mapping[str, Check] = {
    "eta-newline": _time,
    "readonly": _flag,
}
"""fio command-line options that are no job options (fio HOWTO, "Command line
options"), which a recipe may ask fio to be run with."""


def problem(key: str, value: str | None, allowed: Mapping[str, Check]) -> str | None:
    """Why ``key=value`` cannot be in a recipe (one phrase), or None."""
    check = allowed.get(key)
    if check is None:
        return f"{key!r} is not an fio option a recipe may set"
    wrong = check(value)
    if wrong is not None:
        shown = key if value is None else f"{key}={value}"
        return f"{shown!r}: the value must be {wrong}"
    if value is not None and key not in PATH_OPTIONS:
        text_problem = value_problem(value)
        if text_problem:
            return f"{key}={value!r} {text_problem}"
    return None


def size_bytes(value: str) -> int:
    """A size value (checked by :data:`SIZE`) in bytes."""
    match = SIZE.match(value)
    if match is None:
        raise UsageError(f"invalid size {value!r}: use e.g. 4k, 1M or 10G")
    return int(match.group(1)) * _SIZE_FACTOR[match.group(2).lower()]


def time_ms(value: str) -> Fraction:
    """A time value (checked by :data:`TIME`) in milliseconds; no unit is seconds."""
    match = TIME.match(value)
    if match is None:
        raise UsageError(f"invalid time {value!r}: use e.g. 180, 60s or 1m")
    return int(match.group(1)) * _TIME_MS[(match.group(2) or "s").lower()]


def size_unit(block_sizes: list[str]) -> int:
    """The granule of a scaled size, in bytes: 1 MiB, or the least common multiple of it
    and every block size of the step, so a scaled size or offset stays a whole number of
    blocks (a misaligned offset fails with direct I/O)."""
    unit = MiB
    for value in block_sizes:
        unit = math.lcm(unit, size_bytes(value))
    return unit


def scaled_size(value: str, scale: Fraction, unit: int) -> str:
    """``value`` times ``scale``, rounded down to ``unit`` (never below one ``unit``, nor
    above the page's value), written in MiB (``m``: 2^20 bytes under fio's kb_base=1024)."""
    original = size_bytes(value)
    if original == 0:
        return value
    scaled = math.floor(original * scale / unit) * unit
    scaled = min(max(scaled, unit), original)
    if scaled % MiB == 0:
        return f"{scaled // MiB}m"
    return str(scaled)


MIN_SCALED_MS = 1000
"""A scaled time is at least 1 s (or the page's, when shorter): fio's once-a-second
reporting sees nothing of a shorter run."""


def scaled_time(value: str, scale: Fraction) -> str:
    """``value`` times ``scale`` in whole milliseconds (``1800ms``), at least 1 s or the
    page's value when that is shorter."""
    original = time_ms(value)
    scaled = max(Fraction(math.floor(original * scale)), min(original, Fraction(MIN_SCALED_MS)))
    return f"{math.ceil(scaled)}ms"
