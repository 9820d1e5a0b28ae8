"""Parse fio's JSON output (``--output-format=json`` or ``json+``) into the result model.

Pure: text in, :class:`~volbench.model.FioOutput` out. Tolerant of fio versions:

* Text around the JSON (fio prints notes such as "note: both iodepth >= 1 and
  synchronous I/O engine are selected ..." on stdout) is dropped: only the text from
  the first ``{`` to the last ``}`` is decoded.
* ``jobs`` (local run) and ``client_stats`` (client/server run: one entry per host
  job with ``hostname``, plus fio's own aggregate named "All clients").
* fio 3.x field names (``lat_ns``/``clat_ns`` in ns, ``io_bytes`` in bytes with
  ``io_kbytes`` beside it, ``bw_bytes`` in B/s) and fio 2.x ones (``lat``/``clat`` in
  usec; ``io_bytes`` holding KiB -- fio 2.x stat.c wrote ``ts->io_bytes[ddir] >> 10``
  under that name -- and ``bw`` in KiB/s). fio 2.x json+ bins are keyed by bucket
  index and carry ``FIO_IO_U_PLAT_BITS``; they are converted to values in ns.
* Missing fields read as zero (or ``None`` for a latency block); never ``KeyError``.

Latency choice (:func:`_latency`): a :class:`LatencyStats` describes ONE fio latency
kind entirely -- min/max/mean/stddev/N/percentiles/bins all from the same block:
total latency ``lat`` if fio gave percentiles or bins for it (``lat_percentiles=1``),
else completion latency ``clat`` if it has them, else ``lat`` (mean/min/max only),
else ``clat``. ``kind`` records which one was taken.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from volbench.errors import FioError
from volbench.model import (
    DirectionResult,
    DiskUtil,
    FioOutput,
    IopsSamples,
    JobResult,
    LatencyStats,
)

ALL_CLIENTS = "All clients"
"""``jobname`` of fio's aggregate entry in ``client_stats``."""

_DIRECTIONS = ("read", "write", "trim", "mixed")
"""fio's per-direction objects; ``mixed`` appears with ``unified_rw_reporting``."""

_USEC_TO_NS = 1000.0


def parse(text: str) -> FioOutput:
    """Parse fio's JSON output; raise :class:`FioError` (one line) if it holds none."""
    doc = _extract_json(text)
    entries: list[Any] = []
    for key in ("jobs", "client_stats"):
        value = doc.get(key)
        if isinstance(value, list):
            entries.extend(value)
    if "jobs" not in doc and "client_stats" not in doc:
        raise FioError("fio JSON output has neither 'jobs' nor 'client_stats'")
    jobs: list[JobResult] = []
    all_clients: list[JobResult] = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        job = _job(entry)
        (all_clients if job.name == ALL_CLIENTS else jobs).append(job)
    disk_util = doc.get("disk_util")
    return FioOutput(
        fio_version=str(doc.get("fio version", "")),
        timestamp_s=int(_num(doc, "timestamp")),
        jobs=tuple(jobs),
        all_clients=tuple(all_clients),
        disk_util=tuple(
            _disk_util(d)
            for d in (disk_util if isinstance(disk_util, list) else [])
            if isinstance(d, dict)
        ),
        global_options=_str_dict(doc.get("global options")),
    )


def _extract_json(text: str) -> dict[str, Any]:
    """The JSON object between the first ``{`` and the last ``}`` of ``text``."""
    start = text.find("{")
    end = text.rfind("}")
    if start < 0 or end < start:
        head = " ".join(text.split())[:60]
        raise FioError(f"fio output holds no JSON object (first 60 chars: {head!r})")
    try:
        doc = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise FioError(
            f"fio output is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    if not isinstance(doc, dict):
        raise FioError("fio output is not a JSON object")
    return doc


def _num(obj: Mapping[str, Any], key: str, default: float = 0.0) -> float:
    """``obj[key]`` as a float; ``default`` when missing or not a number."""
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return float(value)


def _str_dict(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): str(v) for k, v in value.items()}


def _job(entry: Mapping[str, Any]) -> JobResult:
    """One ``jobs``/``client_stats`` entry.

    ``runtime_ms`` is fio's ``job_runtime`` (ms) when present, else the longest
    direction ``runtime`` (ms; fio 2.x has no ``job_runtime``), else ``elapsed``
    (s, wall time including ramp) x 1000.
    """
    directions = {
        name: _direction(name, block)
        for name in _DIRECTIONS
        if isinstance(block := entry.get(name), dict)
    }
    if "job_runtime" in entry:
        runtime_ms = _num(entry, "job_runtime")
    elif directions:
        runtime_ms = max(d.runtime_ms for d in directions.values())
    else:
        runtime_ms = 0.0
    if runtime_ms == 0.0:
        runtime_ms = _num(entry, "elapsed") * 1000.0
    hostname = entry.get("hostname")
    return JobResult(
        name=str(entry.get("jobname", "")),
        groupid=int(_num(entry, "groupid")),
        directions=directions,
        usr_cpu_pct=_num(entry, "usr_cpu"),
        sys_cpu_pct=_num(entry, "sys_cpu"),
        runtime_ms=runtime_ms,
        error=int(_num(entry, "error")),
        hostname=str(hostname) if hostname is not None else None,
        options=_str_dict(entry.get("job options")),
    )


def _direction(name: str, block: Mapping[str, Any]) -> DirectionResult:
    """One direction object.

    Bytes: fio 3.x prints ``io_bytes`` (bytes) and ``io_kbytes`` (KiB); fio 2.x
    printed only ``io_bytes`` and it held KiB, so without ``io_kbytes`` the value is
    multiplied by 1024. Bandwidth: ``bw_bytes`` (B/s) when present, else ``bw``
    (KiB/s) x 1024. ``runtime`` is in ms.
    """
    if "io_kbytes" in block:
        io_bytes = int(_num(block, "io_bytes", _num(block, "io_kbytes") * 1024))
    else:
        io_bytes = int(_num(block, "io_bytes") * 1024)
    bw = _num(block, "bw_bytes", _num(block, "bw") * 1024)
    total_ios = int(_num(block, "total_ios"))
    active = io_bytes > 0 or total_ios > 0
    return DirectionResult(
        direction=name,
        io_bytes=io_bytes,
        runtime_ms=_num(block, "runtime"),
        iops=_num(block, "iops"),
        bw_bytes_per_s=bw,
        total_ios=total_ios,
        latency=_latency(block, total_ios) if active else None,
        iops_samples=_iops_samples(block),
    )


def _iops_samples(block: Mapping[str, Any]) -> IopsSamples | None:
    """fio 3.x's per-window IOPS statistics of a direction (absent in fio 2.x)."""
    samples = int(_num(block, "iops_samples"))
    if "iops_mean" not in block or samples <= 0:
        return None
    return IopsSamples(
        min=_num(block, "iops_min"),
        max=_num(block, "iops_max"),
        mean=_num(block, "iops_mean"),
        stddev=_num(block, "iops_stddev"),
        samples=samples,
    )


def _latency_block(block: Mapping[str, Any], kind: str) -> tuple[Mapping[str, Any], float] | None:
    """fio's ``<kind>_ns`` block (scale 1) or the fio 2.x ``<kind>`` block (usec, x1000)."""
    new = block.get(f"{kind}_ns")
    if isinstance(new, dict):
        return new, 1.0
    old = block.get(kind)
    if isinstance(old, dict):
        return old, _USEC_TO_NS
    return None


def _has_distribution(lat: Mapping[str, Any]) -> bool:
    return bool(lat.get("bins")) or bool(lat.get("percentile"))


def _latency(block: Mapping[str, Any], total_ios: int) -> LatencyStats | None:
    """The direction's latency, one fio kind throughout (see the module docstring)."""
    lat = _latency_block(block, "lat")
    clat = _latency_block(block, "clat")
    if lat is not None and _has_distribution(lat[0]):
        kind, chosen = "lat", lat
    elif clat is not None and _has_distribution(clat[0]):
        kind, chosen = "clat", clat
    elif lat is not None:
        kind, chosen = "lat", lat
    elif clat is not None:
        kind, chosen = "clat", clat
    else:
        return None
    stats, scale = chosen
    bins = _bins(stats.get("bins"), scale)
    samples = int(_num(stats, "N")) or sum(bins.values()) or total_ios
    return LatencyStats(
        kind=kind,
        min_ns=_num(stats, "min") * scale,
        max_ns=_num(stats, "max") * scale,
        mean_ns=_num(stats, "mean") * scale,
        stddev_ns=_num(stats, "stddev") * scale,
        samples=samples,
        percentiles_ns=_percentiles(stats.get("percentile"), scale),
        bins=bins,
    )


def _percentiles(value: Any, scale: float) -> dict[float, float]:
    """``{"99.000000": v}`` -> ``{99.0: v * scale}``; drops fio 2.1's unused ``"0.00"``
    slots and anything that is not a number."""
    if not isinstance(value, dict):
        return {}
    result: dict[float, float] = {}
    for key, raw in value.items():
        try:
            pct = float(key)
        except ValueError:
            continue
        if pct > 0.0 and isinstance(raw, int | float) and not isinstance(raw, bool):
            result[pct] = float(raw) * scale
    return dict(sorted(result.items()))


def _bins(value: Any, scale: float) -> dict[int, int]:
    """json+ ``bins`` as {bucket value in ns: count}, ascending, empty buckets dropped.

    fio 3.x keys bins by bucket value in ns. fio 2.x json+ keyed them by bucket index
    and added ``FIO_IO_U_PLAT_BITS``/``_VAL``/``_NR``; values were in usec.
    """
    if not isinstance(value, dict):
        return {}
    bits = value.get("FIO_IO_U_PLAT_BITS")
    result: dict[int, int] = {}
    for key, count in value.items():
        if not (isinstance(count, int) and not isinstance(count, bool)) or count <= 0:
            continue
        try:
            number = int(key)
        except ValueError:
            continue
        bucket = _plat_idx_to_val(number, int(bits)) if isinstance(bits, int) else number
        bucket_ns = round(bucket * scale)
        result[bucket_ns] = result.get(bucket_ns, 0) + count
    return dict(sorted(result.items()))


def _plat_idx_to_val(idx: int, bits: int) -> int:
    """Bucket index -> bucket value (the middle of the bucket), fio stat.c
    ``plat_idx_to_val``: indexes below 2 x 2^bits are exact; above, group
    ``error_bits = (idx >> bits) - 1`` starts at ``2^(error_bits + bits)`` and
    bucket ``k = idx % 2^bits`` is ``base + (k + 0.5) x 2^error_bits``."""
    plat_val = 1 << bits
    if idx < (plat_val << 1):
        return idx
    error_bits = (idx >> bits) - 1
    base = 1 << (error_bits + bits)
    k = idx % plat_val
    return base + (k << error_bits) + ((1 << error_bits) >> 1)


def _disk_util(entry: Mapping[str, Any]) -> DiskUtil:
    """fio's ``disk_util`` entry (``util`` in percent)."""
    return DiskUtil(
        name=str(entry.get("name", "")),
        util_pct=_num(entry, "util"),
        read_ios=int(_num(entry, "read_ios")),
        write_ios=int(_num(entry, "write_ios")),
        hostname=str(entry["hostname"]) if entry.get("hostname") else None,
    )
