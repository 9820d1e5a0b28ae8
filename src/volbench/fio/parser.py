"""Parse fio's JSON output (``--output-format=json`` or ``json+``) into the result model.

Pure: text in, :class:`~volbench.model.FioOutput` out, or a one-line
:class:`~volbench.errors.ParseError` saying what is wrong and where. Tolerant of fio
versions, strict about what no fio version can print:

* Text around the JSON (fio prints notes such as "note: both iodepth >= 1 and
  synchronous I/O engine are selected ..." on stdout) is dropped: only the text from
  the first ``{`` to the last ``}`` is decoded (:mod:`volbench.fio.document`, which
  also refuses NaN, infinities, numbers beyond fio's C types and deep nesting).
* ``jobs`` (local run) and ``client_stats`` (client/server run: one entry per host
  job with ``hostname``, plus fio's own aggregate named "All clients").
* fio 3.x field names (``lat_ns``/``clat_ns`` in ns, ``io_bytes`` in bytes with
  ``io_kbytes`` beside it, ``bw_bytes`` in B/s) and fio 2.x ones (``lat``/``clat`` in
  usec; ``io_bytes`` holding KiB -- fio 2.x stat.c wrote ``ts->io_bytes[ddir] >> 10``
  under that name -- and ``bw`` in KiB/s). fio 2.x json+ bins are keyed by bucket
  index and carry ``FIO_IO_U_PLAT_BITS``; they are converted to values in ns.
* ``global options``: one object, or (fio >= 3.39 client/server with several servers,
  fio client.c ``handle_job_opt``) a list of one object per server with its
  ``hostname`` and ``port`` beside the options.
* What the output states about when and where: ``timestamp``/``timestamp_ms``/``time``
  (fio stat.c ``__show_run_stats``: when the output was written, the end of a local
  run; fio client.c ``fio_client_json_init``: the start of a client/server run), each
  entry's ``elapsed`` (s since fio started, rounded up: eta.c), ``job_start`` (ms since
  the epoch, fio >= 3.36) and a client entry's ``hostname`` and ``port``. Times are
  at most :data:`MAX_EPOCH_S` (the last second of year 9999, as far as an ISO 8601 time
  of four-digit years and Python's ``datetime`` go), a port at most 65,535 (TCP), a
  group id and an error number within fio's C ``unsigned int`` and ``int``.
* Text: a job's name at most :data:`~volbench.store.limits.NAME_CHARS` characters (fio
  keeps 127 bytes of it, stat.h ``FIO_JOBNAME_SIZE``), a host name at most
  :data:`~volbench.store.limits.HOSTNAME_CHARS`, any other string at most
  :data:`~volbench.store.limits.OPTION_CHARS` (what the store keeps); an option value
  longer than that is left out (:meth:`volbench.fio.fields.Fields.options`).
* Missing fields read as zero (or ``None`` for a latency block); a field present with
  the wrong type, a negative or impossible value is refused
  (:mod:`volbench.fio.fields`, :mod:`volbench.fio.latency`, :func:`_check_rates`).

Latency: one kind per direction, the same for every entry of a reporting group so that
entries can be merged (:mod:`volbench.fio.latency`); ``kind`` records which one. The
mean total latency (``lat_ns``/``lat``) is kept beside it whatever the kind, for
Little's law.
"""

from __future__ import annotations

from volbench.errors import ParseError
from volbench.fio import latency
from volbench.fio.document import LONG_LONG_MAX, load
from volbench.fio.fields import Fields, shown
from volbench.fio.job_times import remember
from volbench.model import (
    DirectionResult,
    DiskUtil,
    FioOutput,
    IopsSamples,
    JobResult,
    LatencyStats,
)
from volbench.store.limits import HOSTNAME_CHARS, NAME_CHARS

ALL_CLIENTS = "All clients"
"""``jobname`` of fio's aggregate entry in ``client_stats``."""

SUMMED = 1.5
"""A ``job_runtime`` this many times its longest direction's ``runtime`` or more is a sum
over several jobs (two jobs give about 2): one job's differ by a few ms."""

_DIRECTIONS = ("read", "write", "trim", "mixed")
"""fio's per-direction objects; ``mixed`` appears with ``unified_rw_reporting``."""

MAX_IOPS = 1000.0 * LONG_LONG_MAX
"""fio stat.c: ``iops = 1000.0 * total_io_u / runt`` with a 64-bit count and a
runtime of at least 1 ms (fio prints 0 for a runtime of 0)."""

MAX_CPU_PCT = 100.0 * 8192
"""A job's CPU time over its run time (fio stat.c ``usr_cpu``), in percent: at most
every CPU Linux supports busy (``CONFIG_NR_CPUS`` <= 8192)."""

MAX_EPOCH_S = 253_402_300_799
"""9999-12-31T23:59:59Z in s since the epoch: the latest time the store writes (ISO
8601 text with a four-digit year) and Python's ``datetime`` holds."""

MAX_EPOCH_MS = MAX_EPOCH_S * 1000 + 999

MAX_PORT = 65_535
"""A fio server's TCP port (fio client.c ``json_object_add_value_int(..., "port", ...)``)."""

MAX_GROUPID = 2**32 - 1
"""fio's ``groupid``: a C ``unsigned int`` (thread_options.h)."""

MAX_ERROR = 2**31 - 1
"""fio's ``error``: an errno value, a C ``int`` (fio.h ``td->error``)."""

Kinds = dict[tuple[bool, int, str], tuple[str, bool] | None]


def parse(text: str) -> FioOutput:
    """Parse fio's JSON output; raise :class:`ParseError` (one line) if it holds none
    or holds what fio cannot have printed."""
    decoded = load(text)
    doc = Fields(decoded)
    if not doc.has("jobs") and not doc.has("client_stats"):
        raise ParseError("fio JSON output has neither 'jobs' nor 'client_stats'")
    entries = doc.children("jobs") + doc.children("client_stats")
    kinds = _kinds(entries)
    parsed = [_job(entry, kinds) for entry in entries]
    shared, per_client = _global_options(doc)
    output = FioOutput(
        fio_version=doc.text("fio version") or "",
        timestamp_s=_at_most(doc, "timestamp", MAX_EPOCH_S, "year 9999 in s since 1970"),
        jobs=tuple(j for j in parsed if j.name != ALL_CLIENTS),
        all_clients=tuple(j for j in parsed if j.name == ALL_CLIENTS),
        disk_util=tuple(_disk_util(d) for d in doc.children("disk_util")),
        global_options=shared,
        client_options=per_client,
        timestamp_ms=_at_most(doc, "timestamp_ms", MAX_EPOCH_MS, "year 9999 in ms since 1970")
        if doc.has("timestamp_ms")
        else None,
        time=doc.text("time"),
    )
    remember(text, decoded)  # fio's output, checked: the run's report reads its job times
    return output


def client_key(hostname: str | None, port: int | None) -> str:
    """``HOST:PORT`` of a fio server (as :attr:`FioOutput.client_options` keys it)."""
    return f"{hostname or ''}:{port if port is not None else ''}"


def _global_options(doc: Fields) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """fio's ``global options``: (one object's options, {} ) or, for the list fio >= 3.39
    prints with several servers, ({}, {HOST:PORT: that server's options})."""
    if not isinstance(doc.raw("global options"), list):
        return doc.strings("global options"), {}
    per_client: dict[str, dict[str, str]] = {}
    for item in doc.children("global options"):
        options = item.options(skip=_CLIENT_INFO)
        port = _at_most(item, "port", MAX_PORT, "a TCP port") if item.has("port") else None
        per_client[client_key(item.text("hostname", HOSTNAME_CHARS), port)] = options
    return {}, per_client


_CLIENT_INFO = ("hostname", "port")
"""What fio adds to each server's global options (client.c ``json_object_add_client_info``)."""


def _at_most(fields: Fields, key: str, limit: int, what: str) -> int:
    """A counter (:meth:`Fields.count`) of at most ``limit`` (``what`` it is bounded by)."""
    value = fields.count(key)
    if value > limit:
        raise ParseError(f"{value} is beyond {what} ({limit})", fields.at(key))
    return value


def _group(entry: Fields, name: str) -> tuple[bool, int, str]:
    """Entries that may be merged: one reporting group (fio's "All clients" apart)."""
    groupid = _at_most(entry, "groupid", MAX_GROUPID, "fio's unsigned int")
    return (entry.text("jobname", NAME_CHARS) == ALL_CLIENTS, groupid, name)


def _kinds(entries: list[Fields]) -> Kinds:
    """The latency kind of each (group, direction): the first preference every active
    entry offers (see :mod:`volbench.fio.latency`)."""
    offers: dict[tuple[bool, int, str], list[frozenset[tuple[str, bool]]]] = {}
    for entry in entries:
        for name in _DIRECTIONS:
            block = entry.child(name)
            if block is not None and _active(block):
                offers.setdefault(_group(entry, name), []).append(latency.offered(block))
    kinds: Kinds = {}
    for key, found in offers.items():
        kinds[key] = latency.common_kind(found)
        if kinds[key] is None and any(found):
            raise ParseError(
                f"entries of reporting group {key[1]} give {key[2]} latency of different"
                " kinds (lat only in some, clat only in others): they cannot be merged"
            )
    return kinds


def _active(block: Fields) -> bool:
    return bool(block.count("io_bytes") or block.count("io_kbytes") or block.count("total_ios"))


def _job(entry: Fields, kinds: Kinds) -> JobResult:
    """One ``jobs``/``client_stats`` entry.

    ``runtime_ms`` is fio's ``job_runtime`` (ms) when present, else the longest
    direction ``runtime`` (ms; fio 2.x has no ``job_runtime``), else ``elapsed``
    (s, wall time including ramp) x 1000. An entry of several jobs (``group_reporting``,
    fio's "All clients") has as ``job_runtime`` the sum of its jobs' (fio stat.c adds
    each job's ``total_run_time``: 16 jobs of 1 s give 16,000 ms): where it is
    :data:`SUMMED` times the longest direction's or more, the longest direction's.
    """
    directions = {}
    for name in _DIRECTIONS:
        block = entry.child(name)
        if block is not None:
            directions[name] = _direction(name, block, kinds.get(_group(entry, name)))
    elapsed = _at_most(entry, "elapsed", MAX_EPOCH_S, "year 9999 in s since 1970")
    runtime_ms = float(entry.count("job_runtime"))
    longest = max((d.runtime_ms for d in directions.values()), default=0.0)
    if (not entry.has("job_runtime") and directions) or runtime_ms >= SUMMED * longest > 0:
        runtime_ms = longest
    if runtime_ms == 0.0:
        runtime_ms = elapsed * 1000.0
    return JobResult(
        name=entry.text("jobname", NAME_CHARS) or "",
        groupid=_at_most(entry, "groupid", MAX_GROUPID, "fio's unsigned int"),
        directions=directions,
        usr_cpu_pct=entry.number("usr_cpu", limit=MAX_CPU_PCT),
        sys_cpu_pct=entry.number("sys_cpu", limit=MAX_CPU_PCT),
        runtime_ms=runtime_ms,
        error=_at_most(entry, "error", MAX_ERROR, "fio's int"),
        hostname=entry.text("hostname", HOSTNAME_CHARS),
        options=entry.strings("job options"),
        port=_at_most(entry, "port", MAX_PORT, "a TCP port") if entry.has("port") else None,
        elapsed_s=elapsed if entry.has("elapsed") else None,
        # fio prints 0 for "All clients"
        job_start_ms=_at_most(entry, "job_start", MAX_EPOCH_MS, "year 9999 in ms since 1970")
        or None,
    )


def _direction(name: str, block: Fields, kind: tuple[str, bool] | None) -> DirectionResult:
    """One direction object.

    Bytes: fio 3.x prints ``io_bytes`` (bytes) and ``io_kbytes`` (KiB); fio 2.x
    printed only ``io_bytes`` and it held KiB, so without ``io_kbytes`` the value is
    multiplied by 1024. Bandwidth: ``bw_bytes`` (B/s) when present, else ``bw``
    (KiB/s) x 1024. ``runtime`` is in ms.
    """
    if block.has("io_kbytes"):
        io_bytes = block.count("io_bytes", block.count("io_kbytes") * 1024)
    else:  # fio 2.x: KiB (of a 64-bit byte count)
        io_bytes = block.count("io_bytes") * 1024
    if io_bytes > LONG_LONG_MAX:
        raise ParseError(f"{io_bytes} bytes is more than 64 bits hold", block.at("io_bytes"))
    bw = float(block.count("bw_bytes", block.count("bw") * 1024))
    total_ios = block.count("total_ios")
    runtime_ms = float(block.count("runtime"))
    iops = block.number("iops", limit=MAX_IOPS)
    _check_rates(block, io_bytes, bw, iops, total_ios, runtime_ms)
    stats = total = None
    if (io_bytes > 0 or total_ios > 0) and kind is not None and latency.offered(block):
        limit = io_bytes if runtime_ms > 0 else None
        stats = latency.latency(block, kind[0], limit)
        total = stats if stats.kind == "lat" else _total_latency(block, limit)
    return DirectionResult(
        direction=name,
        io_bytes=io_bytes,
        runtime_ms=runtime_ms,
        iops=iops,
        bw_bytes_per_s=bw,
        total_ios=total_ios,
        latency=stats,
        iops_samples=_iops_samples(block),
        lat_mean_ns=total.mean_ns if total is not None else None,
    )


def _total_latency(block: Fields, limit: int | None) -> LatencyStats | None:
    """The direction's total latency (``lat_ns``/``lat``), checked as any latency block,
    when fio printed one beside the kind the direction reports."""
    if ("lat", False) not in latency.offered(block):
        return None
    return latency.latency(block, "lat", limit)


def _check_rates(
    block: Fields, io_bytes: int, bw: float, iops: float, total_ios: int, runtime_ms: float
) -> None:
    """fio stat.c ``add_ddir_status_json``: with a runtime ``runt`` (ms) > 0,
    ``bw_bytes = 1000 * io_bytes / runt`` (integer, so at most that plus rounding; the
    64-bit product can only wrap lower) and ``iops = 1000.0 * total_ios / runt``
    (fio < 2.2 divided in integers: within 1); with a runtime of 0 both are 0. Without
    ``total_ios`` (fio 2.1), each I/O moved at least one byte: iops <= bw + 1.
    Missing fields count as 0 here too (every fio version prints them)."""
    if runtime_ms == 0.0:
        if iops or bw:
            raise ParseError(
                "IOPS or bandwidth with a runtime of 0 ms (fio prints 0)", block.at("runtime")
            )
        return
    if bw > 1000.0 * io_bytes / runtime_ms + 1024.0:
        raise ParseError(
            f"bandwidth {shown(bw)} B/s above {io_bytes} bytes in {shown(runtime_ms)} ms",
            block.at("bw_bytes" if block.has("bw_bytes") else "bw"),
        )
    if block.has("total_ios"):
        expected = 1000.0 * total_ios / runtime_ms
        if abs(iops - expected) > 1.0 + 1e-6 * expected:
            raise ParseError(
                f"IOPS {shown(iops)} is not {total_ios} I/Os in {shown(runtime_ms)} ms",
                block.at("iops"),
            )
    elif iops > bw + 1.0:
        raise ParseError(f"IOPS {shown(iops)} above {shown(bw)} bytes/s", block.at("iops"))


def _iops_samples(block: Fields) -> IopsSamples | None:
    """fio 3.x's per-window IOPS statistics of a direction (absent in fio 2.x)."""
    samples = block.count("iops_samples")
    if not block.has("iops_mean") or samples <= 0:
        return None
    return IopsSamples(
        min=block.number("iops_min", limit=MAX_IOPS),
        max=block.number("iops_max", limit=MAX_IOPS),
        mean=block.number("iops_mean", limit=MAX_IOPS),
        stddev=block.number("iops_stddev", limit=MAX_IOPS),
        samples=samples,
    )


def _disk_util(entry: Fields) -> DiskUtil:
    """fio's ``disk_util`` entry (``util`` in percent, capped at 100 by fio stat.c)."""
    return DiskUtil(
        name=entry.text("name") or "",
        util_pct=entry.number("util", limit=100.0),
        read_ios=entry.count("read_ios"),
        write_ios=entry.count("write_ios"),
        hostname=entry.text("hostname", HOSTNAME_CHARS) or None,
    )
