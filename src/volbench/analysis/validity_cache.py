"""The check "a cache answered": the figure is a cache's, not the volume's.

Its signs, each from what the run stored (analysis/validity_facts.py):

1. buffered I/O: fio's ``direct=0`` goes through the host's page cache: a read of a
   block read before is a copy from memory, a write completes when copied there and
   reaches the device later (open(2), O_DIRECT; the Azure VM disk post "虚拟机存储性能-
   磁盘篇": host caching turned 480 write IOPS into 12,500). Its working set against the
   host's memory is named beside it: when it fits, every block can be held.
2. the device read far fewer bytes than fio did over the same seconds: at most
   :data:`DEVICE_SHARE` of them (analysis/device_window.py). A read the device
   serves moves its bytes through it; merges and splits change the device's request
   count, never its bytes, and readahead only adds bytes, so only a cache above the
   device (or a filesystem answering blocks it knows were never written) reads less.
   Samples stored without bytes: the device's completions against fio's I/Os, for
   random I/O only (sequential requests merge: one completion for several of fio's).
3. mean read latency under what the medium can give where that is known
   (:class:`~volbench.analysis.validity_facts.Known`; the longhorn/kbench README:
   distributed storage with lower read latency than local storage "is most likely due
   to there is a cache").
4. a working set no larger than a cache in front of the volume that the run records
   (:class:`~volbench.analysis.validity_facts.FrontCache`: QEMU's ``cache=writeback``,
   ``writethrough`` or ``unsafe`` keep a guest's disk in the host's page cache, QEMU's
   "Disk image file cache modes"; Google Cloud's "Benchmarking persistent disk
   performance" and the AWS EBS user guide size a benchmark's file beyond any cache).
"""

from __future__ import annotations

from volbench.analysis.validity import Checked, Mark, MarkKind
from volbench.analysis.validity_facts import TestFacts, fmt_bytes
from volbench.units import format_bytes

DEVICE_SHARE = 0.5
"""The device read at most this share of fio's bytes: "far fewer"."""
MIN_FIO_BYTES = 1 << 20
"""fio read at least this many bytes over the compared seconds for the device's count
to say anything."""
MIN_FIO_IOS = 256
"""... or, compared in I/Os (samples without bytes), this many."""
HOST_CACHE_MODES = frozenset({"writeback", "writethrough", "unsafe"})
"""QEMU's cache modes with ``cache.direct=off``: the host's page cache holds the image."""

ADVICE_BUFFERED = "run it with direct I/O (--cache direct; fio direct=1)"
ADVICE_DEVICE = (
    "measure with direct I/O on a device nothing caches in front of (a raw block device),"
    " over a working set larger than any cache between fio and the volume"
)


def _buffered(facts: TestFacts) -> tuple[list[str], dict[str, float]]:
    if facts.direct is not False:
        return [], {}
    found = []
    if facts.reads:
        found.append(
            "fio's reads were buffered (direct=0): a block in the host's page cache is a copy"
            " from memory, and the kernel reads ahead of what fio asks"
        )
    if facts.writes or not facts.reads:
        found.append(
            "fio's writes were buffered (direct=0): each completes when copied into the"
            " host's page cache, and reaches the device later"
        )
    figures: dict[str, float] = {"direct": 0.0}
    working, memory = facts.working_set_bytes, facts.memory_bytes
    if working and memory and working <= memory:
        found.append(
            f"its working set, {format_bytes(working)}, fits in the host's"
            f" {format_bytes(memory)} of memory"
        )
        figures.update(working_set_bytes=float(working), memory_bytes=float(memory))
    return found, figures


def _device(facts: TestFacts) -> tuple[list[str], dict[str, float], str | None]:
    """The device's reads against fio's: (evidence, figures, why not checked)."""
    count = facts.device
    if not facts.reads:
        return [], {}, None
    if count is None:
        return [], {}, f"the device's reads: {facts.device_note or 'not sampled'}"
    read = count.device_read_bytes
    if read is not None:
        if count.fio_read_bytes < MIN_FIO_BYTES:
            return [], {}, None
        share = read / count.fio_read_bytes
        figures = {
            "device_read_bytes": read,
            "fio_read_bytes": count.fio_read_bytes,
            "seconds": count.seconds,
            "device_share": share,
        }
        if share > DEVICE_SHARE:
            return [], {}, None
        return (
            [
                f"over {count.seconds:,.0f} s of the test the device read {fmt_bytes(read)}"
                f" while fio read {fmt_bytes(count.fio_read_bytes)} ({share:.1%}): the rest"
                " never reached it (a cache answered, or a filesystem that knows the blocks"
                " were never written)"
            ],
            figures,
            None,
        )
    if facts.sequential:
        return (
            [],
            {},
            (
                "the device's reads: its samples hold completions, not bytes, and sequential"
                " requests merge (one completion for several of fio's I/Os)"
            ),
        )
    done = count.device_ios or 0.0
    if count.fio_ios < MIN_FIO_IOS:
        return [], {}, None
    share = done / count.fio_ios
    if share > DEVICE_SHARE:
        return [], {}, None
    return (
        [
            f"over {count.seconds:,.0f} s of the test the device completed {done:,.0f} I/Os"
            f" while fio completed {count.fio_ios:,.0f} ({share:.1%})"
        ],
        {
            "device_ios": done,
            "fio_ios": count.fio_ios,
            "seconds": count.seconds,
            "device_share": share,
        },
        None,
    )


def _latency(facts: TestFacts) -> tuple[list[str], dict[str, float]]:
    floor = facts.known.medium_floor_ns
    read = facts.direction("read")
    mean = read.total_latency_ns if read else None
    if floor is None or mean is None or mean >= floor:
        return [], {}
    where = f" ({facts.known.medium})" if facts.known.medium else ""
    return (
        [
            f"mean read latency {mean / 1e3:,.0f} µs is under the {floor / 1e3:,.0f} µs the"
            f" medium can give{where}"
        ],
        {"read_lat_mean_ns": mean, "medium_floor_ns": floor},
    )


def _front(facts: TestFacts) -> tuple[list[str], dict[str, float]]:
    cache = facts.front_cache
    working = facts.working_set_bytes
    if cache is None or cache.mode not in HOST_CACHE_MODES or not cache.size_bytes:
        return [], {}
    if working is None or working > cache.size_bytes:
        return [], {}
    return (
        [
            f"the run records {cache.what}; the test's working set, {format_bytes(working)},"
            f" fits in its {format_bytes(cache.size_bytes)}"
        ],
        {"working_set_bytes": float(working), "cache_bytes": float(cache.size_bytes)},
    )


def check(facts: TestFacts) -> Checked:
    """The cache mark of ``facts`` (module docstring), or none; what it could not check."""
    buffered, figures = _buffered(facts)
    device, device_figures, unchecked = _device(facts)
    latency, latency_figures = _latency(facts)
    front, front_figures = _front(facts)
    evidence = [*buffered, *device, *latency, *front]
    notes = (unchecked,) if unchecked else ()
    if not evidence:
        return Checked(unchecked=notes)
    if buffered:
        problem = "buffered I/O: the host's page cache answered, not the volume"
        advice = ADVICE_BUFFERED
    elif device:
        problem = "the device read far less than fio: a cache above it answered the rest"
        advice = ADVICE_DEVICE
    elif latency:
        problem = "reads faster than the medium can serve them: a cache answered"
        advice = ADVICE_DEVICE
    else:
        problem = "the working set fits in a cache in front of the volume"
        advice = "use a working set (--size) larger than the cache, or turn the cache off"
    mark = Mark(
        MarkKind.CACHE,
        problem,
        tuple(evidence),
        advice,
        {**figures, **device_figures, **latency_figures, **front_figures},
    )
    return Checked((mark,), notes)
