"""A volume's limiter, fitted from a designed experiment (:mod:`volbench.plans.limits`).

Clouds and hypervisors limit a volume with a few knobs, each a cap on a rate: IOPS and
bytes per second, for reads, for writes or for both together, I/Os larger than a unit
counted as several (QEMU's ``iops-size``: proportionally; the AWS EBS user guide, "I/O
characteristics and monitoring": a 256 KiB unit, larger I/Os counted as several), and a
burst above them while credits last. What one test measures fits many of them; the
experiment measures where they differ, and this module reads the answer off:

* **an IOPS cap** per direction: 4 KiB IOPS flat over a queue-depth ladder while the
  latency grows as Little's law says for a fixed rate
  (:func:`volbench.analysis.throttle.fingerprint`); where IOPS keep rising, no cap
  binds and the highest figure is the device's own ceiling;
* **a bytes cap**: over a request-size ladder at the deep queue, MB/s flat at the
  sizes beyond the IOPS cap's reach;
* **an I/O unit** of ``u`` bytes under an IOPS cap ``C`` acts exactly as a bytes cap of
  ``C x u`` when counted proportionally: the model names the unit when the bytes cap is
  ``C`` times a power of two (within :data:`UNIT_SPREAD`); a size between units (e.g.
  384 KiB over a 256 KiB unit) tells a unit counted rounded up (``ceil(size / u)``
  I/Os) from a proportional one;
* **one budget or two**: a 50/50 mix at the deep queue does, in all, the one cap its
  directions share, or twice the lower of two separate caps (fio keeps the mix at 50/50,
  so the slower direction paces both).

Pure functions over :class:`Probe` records; each figure keeps the tests it rests on and
its spread (the plateau's relative standard error, or the measured scatter).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from volbench.analysis.throttle import Point, fingerprint

KIB = 1024
SAME = 0.05
"""Two rates within 5 % are the same rate: a limiter's own window (blkio's 100 ms
slices, QEMU's leaky bucket) and a busy machine's scheduling move a 2-10 s figure by a
few percent."""
UNIT_SPREAD = 0.10
"""A bytes cap within 10 % of the IOPS cap times a power of two ``u`` is also read as an
I/O unit of ``u`` (the powers of two lie a factor of 2 apart; QEMU's figures past the
cap vary by up to 6 % in a 1 s test). A cap set in MB/s may fall there by chance (24 MB/s
beside 3,000 IOPS: 8,000 B an I/O); counted in proportion the two are the same limit."""
PASSED = 0.10
"""A larger request at more than 10 % over the 4 KiB plateau passed it: no cap counts
I/Os there. (A limiter's own window lets a 1 s test of a TCG guest through up to 6-8 %
over its cap; a CPU-bound file system measured here did 14 % more at 16 KiB.)"""
UNITS = tuple(KIB << k for k in range(2, 11))
"""I/O units looked for: 4 KiB to 1 MiB, powers of two."""
MBPS_TEST = {"read": "bytes", "write": "wbytes"}
"""The :attr:`Probe.direction` of each direction's MB/s test: the first request size
past the IOPS cap at a shallow queue, longer than the ladders' tests
(:func:`volbench.plans.limits.next_test`), from which the MB/s cap is read."""


@dataclass(frozen=True)
class Probe:
    """One test of the experiment: ``direction`` "read", "write" or "mix" (50/50),
    request size (bytes), outstanding I/O (iodepth x jobs), the IOPS fio measured of
    each direction and the mean latency (ns, IOPS-weighted)."""

    name: str
    direction: str
    bs_bytes: int
    outstanding: int
    read_iops: float
    write_iops: float
    lat_mean_ns: float
    bw_bytes_per_s: float | None = None
    """fio's own bandwidth (bytes completed over its runtime, reads and writes; None:
    not given): the MB/s test's figure (:data:`MBPS_TEST`)."""
    starved: bool = False
    """fio was short of CPU while the test ran, by fio's own figures: a job near all of
    a core, its cgroup's CPU quota, or its threads waiting for a CPU on a host with none
    idle (the validity check "starved", :mod:`volbench.analysis.cpu_starvation`)."""

    @property
    def iops(self) -> float:
        return self.read_iops + self.write_iops

    @property
    def bytes_per_s(self) -> float:
        """fio's bandwidth, else its IOPS times the request size (bytes/s). Under a MB/s
        cap a deep queue of large requests ends the test still in flight, and fio's IOPS
        (those issued, over a runtime that lasts until they completed) fall short of
        what completed (:func:`_measured_level`)."""
        return self.bw_bytes_per_s or self.iops * self.bs_bytes


@dataclass(frozen=True)
class Figure:
    """A fitted figure, its relative spread (0.02: +-2 %) and the tests it rests on."""

    value: float
    spread: float
    tests: tuple[str, ...]


@dataclass(frozen=True)
class Unit:
    """An I/O unit: requests above ``bytes`` count as several I/Os, ``rounded`` up to
    whole units (AWS) or in proportion (QEMU); ``rounded`` None: the sizes measured
    cannot tell (all were whole units)."""

    bytes: int
    rounded: bool | None


@dataclass(frozen=True)
class DirectionModel:
    """What limits one direction (reads or writes)."""

    iops_cap: Figure | None
    """The IOPS cap at 4 KiB (None: none binds; see ``ceiling``)."""
    ceiling: Figure | None
    """No IOPS cap found: the highest IOPS the ladder reached (the device's own, or more)."""
    bytes_cap: Figure | None
    """Bytes per second the size ladder levelled at (None: none found)."""
    unit: Unit | None
    latency_floor: Figure | None
    """Mean latency (ns) at QD 1."""
    paced_at_qd1: bool
    """QD 1 already ran at the cap: its latency is the limiter's pacing, not the device's."""
    cpu_bound: bool = False
    """The 4 KiB plateau ran with every CPU of fio's host busy (:func:`cpu_bound`): the
    ``ceiling`` is the host's CPUs' and the device's, not a limiter's."""


@dataclass(frozen=True)
class LimiterModel:
    """The fitted limiter of a volume, per direction, and whether they share budgets
    (None: not determined); ``open`` says what the experiment could not settle."""

    read: DirectionModel
    write: DirectionModel
    shared_iops: bool | None
    shared_bytes: bool | None
    open: tuple[str, ...]


def settled(probes: Sequence[Probe]) -> list[Probe]:
    """``probes`` with each point (direction, request size, queue) measured twice counted
    once, at its higher IOPS: the experiment measures a point again only where it fell
    below its neighbours (:func:`volbench.plans.limits.next_test`), and a busy machine
    only holds a test down (neither a limiter nor a device does fewer I/Os with more
    queue, or more I/Os with larger requests)."""
    best: dict[tuple[str, int, int], Probe] = {}
    for probe in probes:
        key = (probe.direction, probe.bs_bytes, probe.outstanding)
        if key not in best or probe.iops > best[key].iops:
            best[key] = probe
    return list(best.values())


def _ladder(probes: Sequence[Probe], direction: str, bs: int) -> list[Probe]:
    return sorted(
        (p for p in probes if p.direction == direction and p.bs_bytes == bs),
        key=lambda p: p.outstanding,
    )


def deep_queue(probes: Sequence[Probe], direction: str) -> int | None:
    """The queue ``direction``'s size ladder, MB/s test and mix run at (None: no 4 KiB
    ladder): one rung past the shallowest depth of its 4 KiB ladder within :data:`SAME`
    of the ladder's best, the deepest rung when none is past it.

    One rung more keeps a device busy at larger requests, which take it longer; no
    deeper, since a limiter gains nothing from more queue, and what is in flight when a
    test's ramp and runtime end is counted wrongly by fio (QEMU's throttle at 120 IOPS,
    1 s: fio's IOPS 117.0 at QD 4, 106.8 at QD 16, 209 of 260 at QD 64: BENCHMARKS.md,
    :data:`volbench.plans.limits.DRAIN_SHARE`)."""
    ladder = _ladder(probes, direction, 4 * KIB)
    if not ladder:
        return None
    first = _plateau_index(ladder)
    return ladder[min(first + 1, len(ladder) - 1)].outstanding


def _plateau_index(ladder: Sequence[Probe]) -> int:
    best = max(p.iops for p in ladder)
    return next(i for i, p in enumerate(ladder) if p.iops >= (1 - SAME) * best)


def plateau_depth(probes: Sequence[Probe], direction: str) -> int | None:
    """The shallowest depth of ``direction``'s 4 KiB ladder within :data:`SAME` of its
    best (None: no ladder): from there on more queue did not raise IOPS, so a test at
    least this deep is not held by its queue (a larger request needs no more in flight
    to keep a device busy)."""
    ladder = _ladder(probes, direction, 4 * KIB)
    return ladder[_plateau_index(ladder)].outstanding if ladder else None


def queue_ladder(probes: Sequence[Probe], direction: str) -> list[Probe]:
    """``direction``'s 4 KiB queue-depth ladder, shallowest first: what its IOPS cap (or
    ceiling) and latency floor are read off."""
    return _ladder(probes, direction, 4 * KIB)


def size_ladder(probes: Sequence[Probe], direction: str) -> list[Probe]:
    """``direction``'s request-size ladder at its deep queue (:func:`deep_queue`),
    4 KiB first: what its bytes cap and I/O unit are read off (empty: no 4 KiB ladder)."""
    deep = deep_queue(probes, direction)
    return _sizes(probes, direction, deep) if deep is not None else []


def _figure(values: Sequence[float], tests: Sequence[str]) -> Figure:
    mean = statistics.fmean(values)
    spread = statistics.stdev(values) / math.sqrt(len(values)) / mean if len(values) > 1 else 0.0
    return Figure(mean, spread, tuple(tests))


def _iops(probes: Sequence[Probe], direction: str) -> tuple[Figure | None, Figure | None]:
    """(the IOPS cap, else the ceiling) of ``direction``'s 4 KiB queue-depth ladder."""
    ladder = queue_ladder(probes, direction)
    if not ladder:
        return None, None
    found = fingerprint([Point(p.outstanding, p.iops, p.lat_mean_ns, p.name) for p in ladder])
    if found.limited and found.cap_iops:
        plateau = found.plateau
        return _figure([p.iops for p in plateau], [p.source for p in plateau]), None
    top = max(ladder, key=lambda p: p.iops)
    return None, Figure(top.iops, 0.0, (top.name,))


def cpu_bound(plateau: Sequence[Probe]) -> bool:
    """Whether the CPUs fio ran on held the ``plateau``: fio was short of CPU
    (:attr:`Probe.starved`) in every test of it. Not asked of a plateau that starts at
    QD 1 (:attr:`DirectionModel.paced_at_qd1`): fio short of CPU gains from a deeper queue
    (libaio submits and reaps several I/Os a call), a limiter pacing it does not (a lab
    guest's 1,200 IOPS cap from QD 1 to 16 while a busy host kept the guest's fio at a
    core's worth of the guest's time).

    Little's law holds for any server kept busy, so a plateau alone does not tell a
    limiter from a device whose work is the host's CPUs' (a loop device over an image in
    RAM: the copy is a kernel thread's; its reads of 4 KiB levelled at 266,088 IOPS from
    QD 64 to 256 on two CPUs, BENCHMARKS.md, with fio's job at 94-98 % of a core). The
    sign is fio's own, not the host's CPUs alone: a limiter leaves fio idle between its
    I/Os however busy other work keeps the host (a cgroup's 500 IOPS beside two busy
    loops, every CPU 100 % busy, fio's job at 2 % of a core)."""
    return bool(plateau) and all(p.starved for p in plateau)


def _sizes(probes: Sequence[Probe], direction: str, outstanding: int) -> list[Probe]:
    """The size ladder at the deep queue, 4 KiB first."""
    return sorted(
        (p for p in probes if p.direction == direction and p.outstanding == outstanding),
        key=lambda p: p.bs_bytes,
    )


def _bytes_and_unit(
    sizes: Sequence[Probe], cap: Figure | None
) -> tuple[Figure | None, Unit | None]:
    """The bytes cap past the IOPS cap's reach, and the I/O unit it is, if one.

    A limiter's MB/s peak past the IOPS cap and are level or falling after: QEMU's
    bucket holds a tenth of a second of bytes or units (util/throttle.c), and a queue
    of larger requests waits for it to drain, so 1 MiB requests may fall a fifth below
    the cap. The cap is read off the sizes within :data:`SAME` of the peak, when two
    are, or the peak is not the largest size; a device's MB/s keep rising with size
    (no bytes cap met) or level at the largest sizes (its own bandwidth, read the same
    way: without an IOPS cap the card says it may be the device's)."""
    if len(sizes) < 2:
        return None, None
    base = sizes[0].iops if cap is None else cap.value
    beyond = [p for p in sizes if p.iops < (1 - SAME) * base]  # past the IOPS cap's reach
    if not beyond:
        return None, None
    rounded = _rounded_unit(sizes, cap)
    if rounded is not None:  # the IOPS cap counting whole units: no bytes cap seen
        return None, rounded
    peak = max(beyond, key=lambda p: p.bytes_per_s)
    near = [p for p in beyond if p.bytes_per_s >= (1 - SAME) * peak.bytes_per_s]
    if len(near) < 2 and peak is beyond[-1]:
        return None, None  # MB/s still rising at the largest size: no bytes cap met
    figure = _figure([p.bytes_per_s for p in near], [p.name for p in near])
    return figure, _unit(figure, cap)


def _measured_level(
    level: Figure, probes: Sequence[Probe], direction: str, limited: bool
) -> Figure:
    """The MB/s level of ``direction``'s size ladder, read again from its MB/s test (the
    last of them), when one ran and did not fall more than :data:`SAME` below it.

    A ladder's test at the deep queue ends with that queue in flight: fio's IOPS count
    the requests issued before its runtime ended, over a runtime that lasts until they
    completed, and a MB/s cap drains a deep queue of large requests slowly (1 MiB reads
    at QD 16 under QEMU's 12 MB/s: 12 issued in 2,360 ms of a 1 s test, 5.3 MB/s; fio's
    bandwidth, 12.00 MB/s). The MB/s test keeps a few requests in flight for a few
    seconds, so fio's bandwidth (bytes completed over its runtime) and its IOPS agree
    within a few percent under either throttle (BENCHMARKS.md, bench/limits: QEMU's
    exact, the kernel's io.max 0-3 % over, where a 1 s test at the deep queue came out
    up to 6 % over). The figure is that test's alone; the ladder's tests that found the
    level follow it. A level a device's deep queue reached falls at a shallow one: the
    ladder's figure stays when the MB/s test did more than :data:`SAME` less (twice
    that beside an IOPS cap, ``limited``: a limiter's level needs no deep queue)."""
    tests = [p for p in probes if p.direction == MBPS_TEST[direction]]
    if not tests:
        return level
    test = tests[-1]
    least = (1 - 2 * SAME) if limited else (1 - SAME)
    if test.bytes_per_s < least * level.value:
        return level
    return Figure(test.bytes_per_s, 0.0, (test.name, *level.tests))  # the one measured, those found


def _at_iops_cap(probes: Sequence[Probe], direction: str, cap: Figure) -> bool:
    """Whether ``direction``'s MB/s test ran at its IOPS cap (within :data:`SAME`): its
    size is not past the cap, and the ladder's point there fell short for the device,
    not a MB/s cap (a cgroup's 300 IOPS on a loop device: 512 KiB writes at QD 4, 270
    IOPS in the ladder's 1 s, 314 in the MB/s test's 3 s)."""
    tests = [p for p in probes if p.direction == MBPS_TEST[direction]]
    return bool(tests) and tests[-1].iops >= (1 - SAME) * cap.value


def _unit(bytes_cap: Figure, cap: Figure | None) -> Unit | None:
    """The power-of-two unit ``u`` with ``cap x u`` within :data:`UNIT_SPREAD` of
    ``bytes_cap``: counted in proportion, an I/O unit and that bytes cap are the same
    limit to every workload, and the card names both."""
    if cap is None:
        return None
    size = bytes_cap.value / cap.value
    return next((Unit(u, None) for u in UNITS if abs(size - u) <= UNIT_SPREAD * u), None)


def _rounded_unit(sizes: Sequence[Probe], cap: Figure | None) -> Unit | None:
    """A unit counted rounded up: a size between whole units did ``cap / ceil(size / u)``
    IOPS where the sizes of whole units did ``cap x u`` bytes per second."""
    if cap is None:
        return None
    for unit in UNITS:
        whole = [p for p in sizes if p.bs_bytes > unit and p.bs_bytes % unit == 0]
        between = [p for p in sizes if p.bs_bytes > unit and p.bs_bytes % unit]
        if not whole or not between:
            continue
        fits = all(
            abs(p.iops - cap.value * unit / p.bs_bytes) <= SAME * p.iops for p in whole
        ) and all(
            abs(p.iops - cap.value / math.ceil(p.bs_bytes / unit)) <= SAME * p.iops
            and abs(p.iops - cap.value * unit / p.bs_bytes) > SAME * p.iops
            for p in between
        )
        if fits:
            return Unit(unit, True)
    return None


def _held_over_size(cap: Figure, sizes: Sequence[Probe], bytes_cap: Figure | None) -> bool:
    """Whether the 4 KiB plateau ``cap`` is a limiter's and not the device's own ceiling:
    Little's law holds for both (any server kept busy), but a cap counts I/Os, so the
    next size up runs at the same IOPS, or at a bytes level that starts right there (a
    bytes cap or an I/O unit), and the MB/s stop rising there; a device that spends its
    time per I/O does fewer I/Os of 16 KiB while its MB/s keep rising. A cap is never
    passed by larger requests (a unit only makes them count more): where the next size
    up ran at more IOPS, the plateau was the device's or the host's (a CPU-bound file
    system). The largest may pass it on a bursting volume: a guest too slow for them
    let its bucket refill, and the rest of the test spent it."""
    if len(sizes) < 2:
        return True  # no size ladder: the plateau stands, and the card says so
    if sizes[1].iops > (1 + PASSED) * cap.value:
        return False  # the next size up ran at more IOPS: nothing counts I/Os at the plateau
    first = sizes[1]
    if any(abs(p.iops - cap.value) <= SAME * cap.value for p in sizes[1:]):
        return True  # a larger size at the cap's IOPS (one noisy size does not undo it)
    if bytes_cap is not None and first.name in bytes_cap.tests:
        return True
    # past the cap's reach a limiter's MB/s stop rising; a device's go on
    return len(sizes) > 2 and sizes[2].bytes_per_s <= (1 + SAME) * first.bytes_per_s


def _direction(probes: Sequence[Probe], direction: str) -> DirectionModel:
    cap, ceiling = _iops(probes, direction)
    named = {p.name: p for p in probes}
    qd1 = [p for p in queue_ladder(probes, direction) if p.outstanding == 1]
    paced = bool(qd1 and cap and abs(qd1[0].iops - cap.value) <= SAME * cap.value)
    held = cap is not None and not paced and cpu_bound([named[name] for name in cap.tests])
    if cap is not None and held:
        cap, ceiling = None, cap  # the host's CPUs' and the device's, not a limiter's
    sizes = size_ladder(probes, direction)
    bytes_cap, unit = _bytes_and_unit(sizes, cap)
    if cap is not None and unit is None and not _held_over_size(cap, sizes, bytes_cap):
        ceiling = Figure(cap.value, cap.spread, cap.tests)  # the device's own
        cap = None
        bytes_cap, unit = _bytes_and_unit(sizes, None)
    if bytes_cap is not None:
        bytes_cap = _measured_level(bytes_cap, probes, direction, cap is not None)
        if unit is None or not unit.rounded:  # rounded up: read off the IOPS, not MB/s
            unit = _unit(bytes_cap, cap)
    if bytes_cap is not None and cap is not None and _at_iops_cap(probes, direction, cap):
        bytes_cap, unit = None, None
    if unit is not None and unit.rounded is None and len(sizes) > 1:
        between = [p for p in sizes if p.bs_bytes > unit.bytes and p.bs_bytes % unit.bytes]
        if between:  # a size between units kept to the proportional count
            unit = Unit(unit.bytes, False)
    floor = Figure(qd1[0].lat_mean_ns, 0.0, (qd1[0].name,)) if qd1 else None
    paced = paced and cap is not None
    return DirectionModel(cap, ceiling, bytes_cap, unit, floor, paced, held)


def _shared(
    mix: Sequence[Probe], read: Figure | None, write: Figure | None, per_byte: bool
) -> bool | None:
    """One budget (True) or two (False) from a 50/50 mix at the deep queue: in all it
    does the one cap, or twice the lower of two; None when neither fits."""
    if not mix or read is None or write is None:
        return None
    probe = mix[-1]
    done = probe.bytes_per_s if per_byte else probe.iops
    one = statistics.fmean([read.value, write.value])
    two = 2 * min(read.value, write.value)
    if abs(read.value - write.value) > 2 * SAME * one:  # two caps of their own
        return False if abs(done - two) <= 2 * SAME * two else None
    if abs(done - one) <= 2 * SAME * one:
        return True
    if abs(done - two) <= 2 * SAME * two:
        return False
    return None


def fit(probes: Sequence[Probe], two_buckets: bool = False) -> LimiterModel:
    """The limiter model of the experiment's ``probes`` (see the module's docstring; a
    point measured twice counts at its higher figure: :func:`settled`). ``two_buckets``:
    the reads and the writes each burst from a bucket of their own (QEMU's
    ``iops-read-max`` and ``iops-write-max``, each beside its own ``iops-read``,
    ``iops-write``): two IOPS budgets, whatever a 50/50 mix did (one direction's full
    bucket lifts a mix's figure; the experiment runs none then)."""
    probes = settled(probes)
    read, write = _direction(probes, "read"), _direction(probes, "write")
    deep = max((p.outstanding for p in probes if p.direction == "mix"), default=None)
    mixes = sorted(
        (p for p in probes if p.direction == "mix" and p.outstanding == deep),
        key=lambda p: p.bs_bytes,
    )
    small = [p for p in mixes if p.bs_bytes == 4 * KIB]
    large = [p for p in mixes if p.bs_bytes > 4 * KIB]
    shared_iops = False if two_buckets else _shared(small, read.iops_cap, write.iops_cap, False)
    shared_bytes = _shared(large, read.bytes_cap, write.bytes_cap, per_byte=True)
    questions = []
    if read.iops_cap and write.iops_cap and shared_iops is None:
        questions.append("whether reads and writes share one IOPS budget")
    if read.bytes_cap and write.bytes_cap and shared_bytes is None:
        questions.append("whether reads and writes share one MB/s budget")
    return LimiterModel(read, write, shared_iops, shared_bytes, tuple(questions))
