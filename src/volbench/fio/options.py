"""Reading a workload back from the options fio echoed (for imported outputs).

fio echoes the options each job ran with under "job options" and the global ones under
"global options" (for a client/server run with several servers, one set per server). A
job's workload is what those options state, read the way fio reads them (fio HOWTO,
"Parameter types"); an option fio did not echo, or a value that is not one fio reads
(a percentage where a byte count is meant, an expression), is not stated and stays
out of the record: fio's own defaults are not filled in.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

MAX_SIZE = 2**64 - 1
"""fio sizes are C ``unsigned long long``."""

_SIZE_RE = re.compile(r"\s*(\d{1,20})\s*([a-z]*)\s*", re.IGNORECASE)
_PREFIXES = "kmgtp"

_TIME_RE = re.compile(r"\s*(\d{1,20})\s*([a-z]*)\s*", re.IGNORECASE)
_TIME_UNITS = {
    "d": 86400.0,
    "h": 3600.0,
    "m": 60.0,
    "s": 1.0,
    "sec": 1.0,
    "ms": 1e-3,
    "msec": 1e-3,
    "us": 1e-6,
    "usec": 1e-6,
}
"""fio HOWTO "Parameter types", time: d, h, m, s (or sec), ms (or msec), us (or usec)."""

RW_PATTERNS = frozenset(
    {"read", "write", "trim", "randread", "randwrite", "randtrim", "rw", "randrw"}
    | {"trimwrite", "randtrimwrite"}
)
"""fio's ``rw`` values (``readwrite`` is another name of ``rw``)."""


def fio_size(text: str, kb_base: int = 1024) -> int | None:
    """A byte count as fio reads it (parse.c ``__get_mult_bytes``): digits, then an
    optional unit. ``k``/``m``/``g``/``t``/``p`` (with or without ``b``, or ``i`` as in
    ``16Mi``) are powers of ``kb_base``; with the ``ib`` forms (``KiB``, ``MiB``) fio's
    default ``kb_base=1024`` takes powers of 1000, ``kb_base=1000`` powers of 1024. None
    for anything else (percentages, expressions, fractions) or beyond 64 bits."""
    match = _SIZE_RE.fullmatch(text)
    if match is None:
        return None
    number, unit = int(match.group(1)), match.group(2).lower()
    if unit in ("", "b"):
        size = number
    elif unit[0] in _PREFIXES and unit[1:] in ("", "b", "i", "ib"):
        opposite = 1000 if kb_base == 1024 else 1024
        base = opposite if unit[1:] == "ib" else kb_base
        size = number * base ** (_PREFIXES.index(unit[0]) + 1)
    else:
        return None
    return size if size <= MAX_SIZE else None


def fio_time(text: str, unit_s: float = 1.0) -> float | None:
    """A time fio echoed, in seconds: digits and an optional unit (fio HOWTO "Parameter
    types"); without a unit ``unit_s`` seconds each (1 for ``runtime``, 1e-6 for
    ``thinktime``). None for anything else."""
    match = _TIME_RE.fullmatch(text)
    if match is None:
        return None
    unit = match.group(2).lower()
    scale = _TIME_UNITS.get(unit) if unit else unit_s
    return int(match.group(1)) * scale if scale is not None else None


def _count(text: str | None) -> int | None:
    """A whole number fio echoed (ASCII digits, at most 20 of them), else None."""
    if text is None or not (text.isascii() and text.isdigit() and len(text) <= 20):
        return None
    return int(text)


def _flag(text: str | None) -> bool | None:
    """A boolean option fio echoed: given without a value ("") or a number (0 = off)."""
    if text is None:
        return None
    if text == "":
        return True
    value = _count(text)
    return None if value is None else value != 0


def _bssplit(text: str, kb_base: int) -> list[list[int]]:
    """fio's ``bssplit`` (``4k/10:64k/90``; before a ``,`` the reads' split) as
    [block size, percent] pairs; [] when a part is not read (an empty percent shares
    what is left, which fio decides: not stated here)."""
    pairs = []
    for part in text.split(",")[0].split(":") if text else ():
        bs, _, pct = part.partition("/")
        size, share = fio_size(bs, kb_base), _count(pct)
        if size is None or share is None:
            return []
        pairs.append([size, share])
    return pairs


def rw_pattern(text: str | None) -> str | None:
    """fio's ``rw`` value without its offset modifier (``write:4k``), ``readwrite`` as
    ``rw``; None when not stated or not one of fio's patterns."""
    if text is None:
        return None
    pattern = text.partition(":")[0].strip().lower()
    pattern = "rw" if pattern == "readwrite" else pattern
    return pattern if pattern in RW_PATTERNS else None


def workload_record(name: str, options: Mapping[str, str]) -> dict[str, Any]:
    """A workload record (the keys of :class:`volbench.model.StoredWorkload`) from the
    options fio echoed for one job (its server's and the global ones merged under the
    job's own). Only what the options state is in it."""
    kb_base = 1000 if options.get("kb_base") == "1000" else 1024

    def size(*names: str) -> int | None:
        """A size option; one given per direction (``bs=4k,64k``: reads, writes, trims)
        is stated only when every direction given has the same."""
        text = next((options[n] for n in names if n in options), None)
        parts = {part for part in (text or "").split(",") if part}
        if len(parts) != 1:
            return None
        return fio_size(parts.pop(), kb_base)

    def time(option: str, unit_s: float = 1.0) -> float | None:
        return fio_time(options[option], unit_s) if option in options else None

    rwmixread = _count(options.get("rwmixread"))
    rwmixwrite = _count(options.get("rwmixwrite"))
    if rwmixread is None and rwmixwrite is not None and rwmixwrite <= 100:
        rwmixread = 100 - rwmixwrite
    direct = _flag(options.get("direct"))
    buffered = _flag(options.get("buffered"))
    if direct is None and buffered is not None:
        direct = not buffered
    record: dict[str, Any] = {
        "name": name,
        "rw": rw_pattern(options.get("rw", options.get("readwrite"))),
        "bs_bytes": size("bs", "blocksize"),
        "bssplit": _bssplit(options.get("bssplit", ""), kb_base),
        "rwmixread_pct": rwmixread if rwmixread is None or rwmixread <= 100 else None,
        "iodepth": _count(options.get("iodepth")),
        "numjobs": _count(options.get("numjobs")),
        "direct": direct,
        "ioengine": options.get("ioengine") or None,
        "size_bytes": size("size"),
        "offset_bytes": size("offset"),
        "runtime_s": time("runtime"),
        "ramp_time_s": time("ramp_time"),
        "time_based": _flag(options.get("time_based")),
        "random_distribution": options.get("random_distribution") or None,
        "rate_iops": _count(options.get("rate_iops")),
        "rate_bytes_per_s": size("rate"),
        "refill_buffers": _flag(options.get("refill_buffers")),
        "cpus_allowed": options.get("cpus_allowed") or None,
        "random_pct": _count(options.get("percentage_random")),
        "align_bytes": size("blockalign", "ba"),
        "thinktime_s": time("thinktime", 1e-6),
        "thinktime_iotime_s": time("thinktime_iotime"),
    }
    return {key: value for key, value in record.items() if value not in (None, [])}
