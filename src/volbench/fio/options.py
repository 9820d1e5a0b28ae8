"""Reading a workload back from fio's ``job options`` (for imported outputs).

fio echoes the options each job ran with; global options are in "global
options". The record uses the same keys as a volbench Workload record, with
whatever fio did not say left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volbench.errors import UsageError
from volbench.units import parse_size

_INT_OPTIONS = {"iodepth": "iodepth", "numjobs": "numjobs", "rwmixread": "rwmixread_pct"}


_MAX_SIZE = 2**64 - 1
"""fio sizes are C ``unsigned long long``."""


def _size(text: str) -> int | None:
    """A size fio echoed, in bytes; None when it is not one volbench reads (or is
    beyond fio's 64 bits: such digits cannot be converted, or stored, safely)."""
    if len(text) > 40:
        return None
    try:
        size = parse_size(text)
    except (UsageError, ValueError):
        return None
    return size if size <= _MAX_SIZE else None


def _count(text: str) -> int | None:
    """A whole number fio echoed (ASCII digits, at most 20 of them), else None."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 20 else None


def _bssplit(text: str) -> list[list[int]]:
    """fio's ``bssplit`` (``4k/10:64k/90``; before a ``,`` the reads' split) as
    [block size, percent] pairs; [] when a part is not read (an empty percent shares
    what is left, which fio decides: not stated here)."""
    pairs = []
    for part in text.split(",")[0].split(":") if text else ():
        bs, _, pct = part.partition("/")
        size, share = _size(bs), _count(pct)
        if size is None or share is None:
            return []
        pairs.append([size, share])
    return pairs


def workload_record(name: str, options: Mapping[str, str]) -> dict[str, Any]:
    """A workload record from fio option names and values (global merged under job).

    Missing iodepth and numjobs take fio's defaults (1); rw defaults to read.
    """
    record: dict[str, Any] = {
        "name": name,
        "rw": options.get("rw", options.get("readwrite", "read")),
    }
    bs = options.get("bs") or options.get("blocksize")
    if bs is not None:
        record["bs_bytes"] = _size(bs.split(",")[0])
    split = _bssplit(options.get("bssplit", ""))
    if split:
        record["bssplit"] = split
    for option, key in _INT_OPTIONS.items():
        value = _count(options.get(option, ""))
        if value is not None:
            record[key] = value
    record.setdefault("iodepth", 1)
    record.setdefault("numjobs", 1)
    for option in ("ioengine", "random_distribution", "filename"):
        if option in options:
            record[option] = options[option]
    if "direct" in options:
        record["direct"] = options["direct"] not in ("0", "false")
    if "size" in options:
        record["size_bytes"] = _size(options["size"])
    return record
