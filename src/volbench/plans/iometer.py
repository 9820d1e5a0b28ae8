"""IOMeter-style access specifications and worker scaling (seed 002).

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from volbench.errors import UsageError
from volbench.model import RW, Workload
from volbench.plans.execution import PlanSpec
from volbench.records import json_object
from volbench.units import parse_size

NAME = "iometer"

_SPEC_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\Z")


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
            raise UsageError(f"invalid access spec name {self.name!r}: use letters, digits, -_.")
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


def load_specs(path: Path) -> tuple[AccessSpec, ...]:
    """Access specs from a TOML file: ``[[spec]]`` tables with name, transfer,
    read_pct, random_pct and optional align (sizes like "8k")."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read access specs {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"invalid TOML in {path}: {exc}") from exc
    entries = data.get("spec")
    if not isinstance(entries, list) or not entries:
        raise UsageError(f"{path} holds no [[spec]] tables (see README: IOMeter access specs)")
    return tuple(_spec(entry, path) for entry in entries)


def _spec(entry: Mapping[str, Any], path: Path) -> AccessSpec:
    try:
        align = entry.get("align")
        return AccessSpec(
            name=str(entry["name"]),
            transfer_bytes=parse_size(str(entry["transfer"])),
            read_pct=int(entry["read_pct"]),
            random_pct=int(entry["random_pct"]),
            align_bytes=parse_size(str(align)) if align is not None else None,
        )
    except KeyError as exc:
        raise UsageError(f"access spec in {path} lacks {exc.args[0]!r}") from None
    except (TypeError, ValueError) as exc:
        raise UsageError(f"invalid access spec in {path}: {exc}") from None


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
    if not options.workers or min(options.workers) < 1:
        raise UsageError("--workers needs counts of at least 1, e.g. 1-4 or 1,2,4")
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
