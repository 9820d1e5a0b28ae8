"""The check "another process used the device": the device moved clearly more than fio
did over the same seconds of the test (analysis/device_window.py).

The device's counters (``/sys/block/DEV/stat``: Documentation/block/stat.rst) count
every request to the device, whoever made it; fio counts its own. Over the same
seconds, with direct I/O, the device's bytes are fio's: merges and splits change the
number of requests, never the bytes. What else can add bytes, and the tolerances that
keep them from marking a healthy test:

- a filesystem's own writes under a file target (its journal, a file's times): a few
  KiB a second, under :data:`FLOOR_BYTES_PER_S`;
- volbench's own store beside the target (a heartbeat, a commit): as small;
- the seconds compared lie inside the test's timed part less its margin, so fio's ramp,
  its start and exit and the next test are not in them.

So a test is marked when the device moved more than fio by :data:`EXTRA_SHARE` of fio's
bytes and by :data:`FLOOR_BYTES_PER_S` on average. Buffered I/O is not checked: the
page cache reads ahead and writes back on its own schedule (that test is marked a
cache's anyway). Samples stored without bytes: the device's completions against fio's
I/Os, for I/O of at most :data:`MAX_UNSPLIT_BYTES` per request only (larger requests are
split: Documentation/block/queue-sysfs.rst, ``max_sectors_kb``), by the same shares
with :data:`FLOOR_IOPS`.
"""

from __future__ import annotations

from volbench.analysis.validity import Checked, Mark, MarkKind
from volbench.analysis.validity_facts import TestFacts, fmt_bytes

EXTRA_SHARE = 0.25
"""The device moved this share more than fio did, at least: "clearly more"."""
FLOOR_BYTES_PER_S = 256 * 1024
"""... and this many bytes a second more on average (a filesystem's and volbench's own
writes stay under it)."""
FLOOR_IOPS = 64.0
"""... or, compared in I/Os, this many a second more."""
MAX_UNSPLIT_BYTES = 128 * 1024
"""Requests up to this size are not split by a device's ``max_sectors_kb`` (128 KiB at
least on the devices volbench has met; 1,280 KiB on this machine's loop devices)."""
ADVICE = (
    "find what else used the device while the test ran (iotop, /proc/PID/io, another"
    " benchmark or a backup) and run it again when the device is idle; on a file target,"
    " a device nothing else uses"
)


def check(facts: TestFacts) -> Checked:
    """The shared mark of ``facts`` (module docstring), or none; what it could not check."""
    if facts.direct is False:
        return Checked()
    count = facts.device
    if count is None:
        return Checked(unchecked=(f"another process: {facts.device_note or 'not sampled'}",))
    moved = count.device_bytes
    if moved is not None:
        extra = moved - count.fio_bytes
        if extra <= EXTRA_SHARE * count.fio_bytes or extra <= FLOOR_BYTES_PER_S * count.seconds:
            return Checked()
        together = (
            f" (fio's: the {len(count.tests)} tests run together, {', '.join(count.tests)})"
            if len(count.tests) > 1
            else ""
        )
        evidence = (
            f"over {count.seconds:,.0f} s of the test the device read"
            f" {fmt_bytes(count.device_read_bytes or 0.0)} and wrote"
            f" {fmt_bytes(count.device_write_bytes or 0.0)} while fio read"
            f" {fmt_bytes(count.fio_read_bytes)} and wrote {fmt_bytes(count.fio_write_bytes)}"
            f"{together}: {fmt_bytes(extra)} more, {extra / max(count.fio_bytes, 1.0):.0%} of"
            " fio's",
        )
        figures = {
            "device_read_bytes": count.device_read_bytes or 0.0,
            "device_write_bytes": count.device_write_bytes or 0.0,
            "fio_read_bytes": count.fio_read_bytes,
            "fio_write_bytes": count.fio_write_bytes,
            "extra_bytes": extra,
            "seconds": count.seconds,
        }
    else:
        block = facts.block_bytes
        if block is None or block > MAX_UNSPLIT_BYTES:
            return Checked(
                unchecked=(
                    "another process: the device's samples hold completions, not bytes, and"
                    " requests over 128 KiB (or of several sizes) may be split",
                )
            )
        done = count.device_ios or 0.0
        extra = done - count.fio_ios
        if extra <= EXTRA_SHARE * count.fio_ios or extra <= FLOOR_IOPS * count.seconds:
            return Checked()
        evidence = (
            f"over {count.seconds:,.0f} s of the test the device completed {done:,.0f} I/Os"
            f" while fio completed {count.fio_ios:,.0f}: {extra:,.0f} more,"
            f" {extra / max(count.fio_ios, 1.0):.0%} of fio's",
        )
        figures = {
            "device_ios": done,
            "fio_ios": count.fio_ios,
            "extra_ios": extra,
            "seconds": count.seconds,
        }
    mark = Mark(
        MarkKind.SHARED,
        "another process used the device during the test: its figure is a share of it",
        evidence,
        ADVICE,
        figures,
    )
    return Checked((mark,))
