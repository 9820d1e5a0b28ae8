"""IOMeter-style access specifications and worker scaling (the Azure VM disk post).

An access specification is IOMeter's unit of workload: transfer size, % read,
% random and I/O alignment. Each IOMeter worker is one fio job (``numjobs``)
with its own outstanding I/Os (``iodepth``, IOMeter's "# of outstanding I/Os",
default 1). Every (spec, worker count) pair is one stonewalled fio job of one
fio process.

Mapping to fio: % read -> ``rwmixread`` (or read/write at 100/0); % random ->
``percentage_random`` on a random pattern (or a sequential pattern at 0%);
alignment -> ``blockalign``.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from volbench.errors import UsageError
from volbench.fio.bounds import MAX_BLOCK_SIZE, MAX_NUMJOBS, MAX_POINTS
from volbench.model import RW, Workload
from volbench.plans.runs.execution import PlanSpec
from volbench.records import json_object
from volbench.text_file import read_text
from volbench.units import parse_size, shown

NAME = "iometer"

_SPEC_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")


@dataclass(frozen=True)
class AccessSpec:
    """One IOMeter access specification; sizes in bytes, shares in percent."""

    name: str
    transfer_bytes: int
    read_pct: int
    random_pct: int
    align_bytes: int | None = None

    def __post_init__(self) -> None:
        if not _SPEC_NAME.match(self.name):
            raise UsageError(
                f"invalid access spec name {shown(self.name)}: up to 64 letters, digits, -_."
            )
        if self.transfer_bytes <= 0:
            raise UsageError(f"access spec {self.name}: transfer size must be positive")
        for label, pct in (("read", self.read_pct), ("random", self.random_pct)):
            if not 0 <= pct <= 100:
                raise UsageError(f"access spec {self.name}: % {label} must be 0..100")

    @property
    def rw(self) -> RW:
        random = self.random_pct > 0
        if self.read_pct == 100:
            return RW.RANDREAD if random else RW.READ
        if self.read_pct == 0:
            return RW.RANDWRITE if random else RW.WRITE
        return RW.RANDRW if random else RW.RW


BUILTIN: tuple[AccessSpec, ...] = (
    AccessSpec("8k-random-read", 8192, read_pct=100, random_pct=100),
    AccessSpec("8k-random-write", 8192, read_pct=0, random_pct=100),
    AccessSpec("8k-sequential-read", 8192, read_pct=100, random_pct=0),
    AccessSpec("8k-sequential-write", 8192, read_pct=0, random_pct=0),
    AccessSpec("iometer-default", 2048, read_pct=67, random_pct=100),
)
"""Seed 002's four 8 KiB specs (Azure states its IOPS at 8 KB) and IOMeter's own
"Default" spec (2 KiB, 67% read, 100% random)."""


MAX_FILE_BYTES = 1 << 20
"""The largest access-spec file read (1 MiB); TOML nesting beyond what Python's
parser takes (about 1,000 levels) is refused too."""
MAX_SPECS = 256
"""The most ``[[spec]]`` tables in one file."""
_KEYS = ("name", "transfer", "read_pct", "random_pct", "align")


def load_specs(path: Path) -> tuple[AccessSpec, ...]:
    """Access specs from a TOML file: ``[[spec]]`` tables with name, transfer,
    read_pct, random_pct and optional align (sizes like "8k"); at most
    :data:`MAX_SPECS` in a file of at most :data:`MAX_FILE_BYTES`."""
    text = read_text(path, MAX_FILE_BYTES, "access specs")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"invalid TOML in {path}: {exc}") from exc
    except RecursionError:
        raise UsageError(f"invalid TOML in {path}: nested too deep") from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise UsageError(f"invalid TOML in {path}: {exc}"[:300]) from None
    entries = data.get("spec")
    if not isinstance(entries, list) or not entries:
        raise UsageError(f"{path} holds no [[spec]] tables (see README: IOMeter access specs)")
    if len(entries) > MAX_SPECS:
        raise UsageError(f"{path} holds {len(entries)} [[spec]] tables: at most {MAX_SPECS}")
    return tuple(_spec(entry, path, index) for index, entry in enumerate(entries))


def _spec(entry: Any, path: Path, index: int) -> AccessSpec:
    where = f"access spec {index + 1} in {path}"
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: a [[spec]] table, not {type(entry).__name__}")
    unknown = sorted(str(k) for k in entry if k not in _KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown key {shown(unknown[0])} (known: {', '.join(_KEYS)})")
    missing = [k for k in _KEYS[:4] if k not in entry]
    if missing:
        raise UsageError(f"{where} lacks {missing[0]!r}")
    name = entry["name"]
    if not isinstance(name, str):
        raise UsageError(f"{where}: name must be text")
    align = entry.get("align")
    return AccessSpec(
        name=name,
        transfer_bytes=_size(entry["transfer"], f"{where}: transfer"),
        read_pct=_percent(entry["read_pct"], f"{where}: read_pct"),
        random_pct=_percent(entry["random_pct"], f"{where}: random_pct"),
        align_bytes=None if align is None else _size(align, f"{where}: align"),
    )


def _size(value: Any, where: str) -> int:
    """A transfer or alignment: a size text ("8k") or a byte count, 1 byte to 2 GiB - 4 KiB."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise UsageError(f'{where} must be a size like "8k" or a byte count')
    try:
        size = parse_size(str(value))
    except UsageError as exc:
        raise UsageError(f"{where}: {exc}") from None
    if not 0 < size <= MAX_BLOCK_SIZE:
        raise UsageError(f"{where} must be from 1 byte to {MAX_BLOCK_SIZE:,} bytes")
    return size


def _percent(value: Any, where: str) -> int:
    """A whole percentage 0..100 (``67``; ``67.0`` too; not ``true``, ``inf`` or ``67.5``)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
        raise UsageError(f"{where} must be a whole number from 0 to 100, not {shown(str(value))}")
    return value


def choose(names: Sequence[str], extra: Sequence[AccessSpec] = ()) -> tuple[AccessSpec, ...]:
    """The specs named, from the built-in set and ``extra`` (a user's file)."""
    known = {s.name: s for s in (*BUILTIN, *extra)}
    missing = [n for n in names if n not in known]
    if missing:
        raise UsageError(
            f"unknown access spec {missing[0]!r}: use one of {', '.join(sorted(known))}"
        )
    return tuple(known[n] for n in names)


@dataclass(frozen=True)
class IometerOptions:
    specs: tuple[AccessSpec, ...]
    workers: tuple[int, ...]
    outstanding: int = 1
    runtime_s: float = 30.0
    ramp_time_s: float = 2.0
    size_bytes: int | None = None
    ioengine: str | None = None


def workloads(options: IometerOptions) -> tuple[Workload, ...]:
    """One workload per (spec, worker count), specs in the order given."""
    if not options.workers or not 1 <= min(options.workers) <= max(options.workers) <= MAX_NUMJOBS:
        raise UsageError(f"--workers needs counts from 1 to {MAX_NUMJOBS:,}, e.g. 1-4 or 1,2,4")
    points = len(options.specs) * len(set(options.workers))
    if points > MAX_POINTS:
        raise UsageError(
            f"{points:,} tests (access specs x worker counts): at most {MAX_POINTS:,};"
            " give fewer specs or worker counts"
        )
    return tuple(
        Workload(
            f"{spec.name}.w{workers}",
            spec.rw,
            bs_bytes=spec.transfer_bytes,
            rwmixread_pct=spec.read_pct if spec.rw in (RW.RW, RW.RANDRW) else None,
            random_pct=spec.random_pct if 0 < spec.random_pct < 100 else None,
            align_bytes=spec.align_bytes,
            iodepth=options.outstanding,
            numjobs=workers,
            size_bytes=options.size_bytes,
            runtime_s=options.runtime_s,
            ramp_time_s=options.ramp_time_s,
            ioengine=options.ioengine,
        )
        for spec in options.specs
        for workers in sorted(set(options.workers))
    )


def plan(options: IometerOptions) -> PlanSpec:
    return PlanSpec(NAME, rounds=(workloads(options),), options={NAME: json_object(options)})
