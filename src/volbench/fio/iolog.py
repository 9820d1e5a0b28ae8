"""A captured trace as an fio iolog (fio HOWTO, "Trace file format v3", fio >= 3.31),
mapped onto a target, for ``read_iolog`` replay.

Each request becomes ``TIMESTAMP TARGET ACTION OFFSET LENGTH``: ``read``, ``write``,
``trim``, or ``sync`` for a flush, with the trace's issue time in microseconds (fio
waits out the difference to the previous line, scaled by ``replay_time_scale``;
timestamps start at 1 because fio takes a previous timestamp of 0 as none).

Offsets are mapped onto the target's usable bytes (its size or ``--size``, whole
logical blocks):

- *as is* when every request of the trace ends within them;
- ``scale``: the trace's space is cut in :data:`CHUNK_BYTES` chunks and chunk *i* of
  *n* goes to chunk ``i * m // n`` of the *m* the target holds, the offset within a
  chunk kept, so sequential runs stay sequential inside a chunk and the hot and cold
  places keep their order and relative distances;
- ``wrap``: offset modulo the usable bytes (a trace larger than the target folds
  over it; a request that would run past the end starts at 0).

Offsets are aligned down to the target's logical block; a request smaller than it
is made one block long (a 512 B request cannot be direct I/O on a 4 KiB device).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from volbench.fio.job import check_iolog
from volbench.trace.events import FLUSH, READ, TRIM, WRITE, IoTrace

CHUNK_BYTES = 1 << 20
MAPPINGS = ("scale", "wrap")
ACTIONS = {READ: "read", WRITE: "write", TRIM: "trim", FLUSH: "sync"}
HEADER = "fio version 3 iolog"


@dataclass(frozen=True)
class IologSummary:
    """What an iolog holds: requests per fio action, how offsets were mapped, the
    largest request (fio's buffers) and the highest end (bytes)."""

    counts: dict[str, int]
    mapping: str
    largest_bytes: int
    highest_end: int
    resized: int
    """Requests made one logical block long (they were shorter)."""


def map_offset(offset: int, size: int, usable: int, high: int, mapping: str) -> int:
    """Where a request at ``offset`` goes on a target of ``usable`` bytes (``high``: the
    trace's highest end); see the module docstring."""
    if high <= usable:
        return offset
    if mapping == "wrap":
        mapped = offset % usable
        return 0 if mapped + size > usable else mapped
    chunks, target_chunks = -(-high // CHUNK_BYTES), max(1, usable // CHUNK_BYTES)
    chunk, within = divmod(offset, CHUNK_BYTES)
    mapped = (chunk * target_chunks // chunks) * CHUNK_BYTES + within
    return max(0, min(mapped, usable - size))


def write_iolog(
    trace: IoTrace,
    target: str,
    usable_bytes: int,
    block_bytes: int,
    path: Path,
    mapping: str = "scale",
) -> IologSummary:
    """Write ``trace`` as an iolog onto ``target`` at ``path``; what it holds."""
    check_iolog(target)
    if mapping not in MAPPINGS:
        raise ValueError(f"unknown mapping {mapping!r}")
    block = max(512, block_bytes)
    usable = usable_bytes - usable_bytes % block
    data = [i for i, op in enumerate(trace.ops) if op != FLUSH]
    high = max((trace.offset_bytes[i] + trace.size_bytes[i] for i in data), default=0)
    counts = dict.fromkeys(ACTIONS.values(), 0)
    largest = highest = resized = 0
    with path.open("w") as out:
        out.write(f"{HEADER}\n1 {target} add\n1 {target} open\n")
        lines = []
        for issued, op, offset, size in zip(
            trace.issue_ns, trace.ops, trace.offset_bytes, trace.size_bytes, strict=True
        ):
            action = ACTIONS[op]
            counts[action] += 1
            stamp = issued // 1000 + 1
            if op == FLUSH:
                lines.append(f"{stamp} {target} sync 0 0\n")  # v3 I/O lines have 5 fields
                continue
            if size < block or size % block:
                size = -(-size // block) * block
                resized += 1
            where = map_offset(offset, size, usable, high, mapping)
            where -= where % block
            largest = max(largest, size)
            highest = max(highest, where + size)
            lines.append(f"{stamp} {target} {action} {where} {size}\n")
            if len(lines) >= 65536:
                out.writelines(lines)
                lines.clear()
        out.writelines(lines)
        last = trace.issue_ns[-1] // 1000 + 1 if len(trace) else 1
        out.write(f"{last} {target} close\n")
    used = mapping if high > usable else "as is"
    return IologSummary(counts, used, largest, highest, resized)
