"""The device's counters and fio's over the same seconds of a test.

The host sampler (targets/sampler.py) stores, each second, the device's completions
(reads + writes, after merges: ``/sys/block/DEV/stat`` fields 1 and 5) and the bytes it
read and wrote (fields 3 and 7, in 512-byte sectors: Documentation/block/stat.rst).
fio counts its own I/O over the test's timed part (analysis/test_windows.py). The two
agree only over the same seconds, so :func:`device_count` reads both over the whole
samples that lie inside the timed part less its margin at either end (a sample that
straddles an end would add the ramp, fio's start or exit, or the next test):

- the device's: each such sample's rates times its span (from the sample before it;
  the first spans :data:`~volbench.targets.sampler.INTERVAL_S`);
- fio's: the test's rates (fio's bytes and I/Os over its runtime) times the same
  seconds, and those of every other test of the round fio ran at the same time (a
  round's tests run together share the device).

Bytes do not change with merges or splits (a 1 MiB request is split into
``max_sectors_kb`` pieces, adjacent 4 KiB requests merged); completions do, so the
checks compare bytes, and completions only where the samples hold no bytes (runs
stored before they did) and the I/O is random and small.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from volbench.analysis.test_windows import Window
from volbench.model import HostSample
from volbench.targets.sampler import INTERVAL_S

MIN_SECONDS = 2.0
"""Whole seconds of samples a comparison needs at least (two samples)."""
EDGE_S = 0.05
"""A sample's span may stick out of the compared seconds by this much (clock jitter)."""


@dataclass(frozen=True)
class FioRate:
    """One test's rates as fio counted them (per second of its timed part), and where
    that timed part lies."""

    test: str
    window: Window
    read_bytes_per_s: float
    write_bytes_per_s: float
    iops: float


@dataclass(frozen=True)
class DeviceCount:
    """The device's and fio's counts over the same ``seconds``: bytes read and written
    and I/Os (the device's bytes None: samples without them), and the tests whose I/O
    fio's side adds up (the test itself, and those run at the same time)."""

    seconds: float
    fio_read_bytes: float
    fio_write_bytes: float
    fio_ios: float
    device_read_bytes: float | None
    device_write_bytes: float | None
    device_ios: float | None
    tests: tuple[str, ...]
    how: str

    @property
    def fio_bytes(self) -> float:
        return self.fio_read_bytes + self.fio_write_bytes

    @property
    def device_bytes(self) -> float | None:
        if self.device_read_bytes is None or self.device_write_bytes is None:
            return None
        return self.device_read_bytes + self.device_write_bytes


def spans(samples: Sequence[HostSample]) -> list[tuple[float, float, HostSample]]:
    """Each sample with the span it measured (from the sample before it, in order)."""
    found = []
    before: float | None = None
    for sample in sorted(samples, key=lambda s: s.time_s):
        start = before if before is not None else sample.time_s - INTERVAL_S
        found.append((start, sample.time_s, sample))
        before = sample.time_s
    return found


def inside(samples: Sequence[HostSample], window: Window) -> list[tuple[float, float, HostSample]]:
    """Each sample whose whole span (:func:`spans`) lies inside ``window``'s timed part
    less its margin at either end (:data:`EDGE_S` of slack), with its span: seconds of
    the test alone, never of the ramp, fio's start or exit, or the next test."""
    low, high = window.start_s + window.margin_s, window.end_s - window.margin_s
    return [
        (start, end, s)
        for start, end, s in spans(samples)
        if start >= low - EDGE_S and end <= high + EDGE_S
    ]


def device_count(
    samples: Sequence[HostSample], own: FioRate, others: Sequence[FioRate] = ()
) -> DeviceCount | str:
    """The device's and fio's counts over the same seconds of ``own`` (see the module);
    ``others``: the round's other tests. A sentence saying why not when they cannot be
    compared."""
    window = own.window
    held = [(start, end, s) for start, end, s in inside(samples, window) if s.iops is not None]
    seconds = sum(end - start for start, end, _ in held)
    if seconds < MIN_SECONDS:
        return (
            f"the device's once-a-second samples cover {seconds:.1f} s of the test's"
            f" {window.seconds:,.1f} s timed part (less {window.margin_s:g} s at either"
            f" end: {window.how}); {MIN_SECONDS:g} s are needed"
        )
    tests = [own.test]
    read = write = ios = 0.0
    for rate in (own, *others):
        overlap = sum(rate.window.overlap(start, end) for start, end, _ in held)
        if rate is not own and overlap <= 0:
            continue
        if rate is not own:
            tests.append(rate.test)
        read += rate.read_bytes_per_s * overlap
        write += rate.write_bytes_per_s * overlap
        ios += rate.iops * overlap
    with_bytes = all(
        s.read_bytes_per_s is not None and s.write_bytes_per_s is not None for _, _, s in held
    )
    return DeviceCount(
        seconds=seconds,
        fio_read_bytes=read,
        fio_write_bytes=write,
        fio_ios=ios,
        device_read_bytes=(
            sum((s.read_bytes_per_s or 0.0) * (e - b) for b, e, s in held) if with_bytes else None
        ),
        device_write_bytes=(
            sum((s.write_bytes_per_s or 0.0) * (e - b) for b, e, s in held) if with_bytes else None
        ),
        device_ios=sum((s.iops or 0.0) * (e - b) for b, e, s in held),
        tests=tuple(tests),
        how=window.how,
    )
