"""Characterising a million-request trace: how long each step of a capture's way into
the store and back takes, on this machine.

The trace is made, not captured (a capture of a million requests takes minutes of
I/O): 70% random 4 KiB reads over 64 GiB, 30% sequential 64 KiB writes, one request
issued every 10 µs, each served in 80 µs (queue depth 8), plus the same requests
as the tracepoint text a capture reads (two lines each, the kernel's format). Steps,
each timed alone (``time.process_time``, this process's CPU):

- parse: the tracepoint text (2 million lines) into paired requests;
- characterise: :func:`volbench.analysis.workload_profile.characterise`;
- fit: the synthetic job and its match;
- pack / unpack: the stored parts (:mod:`volbench.trace.codec`), with their size.

Usage: ``python bench/trace_profile.py [--requests 1000000]``.
"""

from __future__ import annotations

import argparse
import random
import time
from array import array
from collections.abc import Callable, Iterator
from typing import Any

from volbench.analysis.workload_fit import fit
from volbench.analysis.workload_profile import characterise
from volbench.trace import codec
from volbench.trace.events import IoTrace
from volbench.trace.tracepoint_text import parse_tracepoints

GiB = 1 << 30


def make(count: int, seed: int = 16) -> IoTrace:
    rng = random.Random(seed)
    issue, latency, offset, size, ops = array("q"), array("q"), array("q"), array("q"), []
    write_at = 0
    for i in range(count):
        issue.append(i * 10_000)
        latency.append(80_000)
        if rng.random() < 0.7:
            offset.append(rng.randrange(0, 64 * GiB // 4096) * 4096)
            size.append(4096)
            ops.append("R")
        else:
            offset.append(write_at)
            size.append(65536)
            ops.append("W")
            write_at += 65536
    return IoTrace(issue, latency, offset, size, "".join(ops), count * 10_000 + 80_000)


def text_lines(trace: IoTrace) -> Iterator[str]:
    """The trace as ``trace_pipe`` prints it, events in time order."""
    events = []
    for t, lat, off, sz, op in zip(
        trace.issue_ns,
        trace.latency_ns,
        trace.offset_bytes,
        trace.size_bytes,
        trace.ops,
        strict=True,
    ):
        events.append((t, "issue", op, off // 512, sz // 512))
        events.append((t + lat, "complete", op, off // 512, sz // 512))
    events.sort(key=lambda e: e[0])
    for t, kind, op, sector, sectors in events:
        stamp = f"{100 + t // 1_000_000_000}.{t // 1000 % 1_000_000:06d}"
        extra = f"{sectors * 512} " if kind == "issue" else ""
        yield (
            f"             fio-1234    [000] ..... {stamp}: block_rq_{kind}: 8,0 {op} {extra}()"
            f" {sector} + {sectors} be,0,4 [fio]\n"
        )


def timed(label: str, step: Callable[[], Any]) -> Any:
    began = time.process_time()
    result = step()
    print(f"  {label:14} {time.process_time() - began:7.2f} s")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1_000_000)
    args = parser.parse_args()
    trace = make(args.requests)
    lines = list(text_lines(trace))
    megabytes = sum(map(len, lines)) / 1e6
    print(f"{len(trace):,} requests, {len(lines):,} events, {megabytes:,.0f} MB text")
    parsed = timed("parse", lambda: parse_tracepoints(lines, (8, 0)))
    assert len(parsed) == len(trace)
    profile = timed("characterise", lambda: characterise(trace))
    found = timed("fit", lambda: fit(profile))
    parts = timed("pack", lambda: codec.pack(trace))
    back = timed("unpack", lambda: codec.unpack(parts, codec.trace_meta(trace)))
    assert back == trace
    stored = sum(len(p.data) for p in parts)
    print(
        f"  stored         {stored / 1e6:7.1f} MB in {len(parts)} parts"
        f" ({stored / len(trace):.1f} bytes a request)"
    )
    patterns = ", ".join(p.label for p in profile.patterns)
    print(f"  patterns: {patterns}; match {found.match_pct:.1f}%")


if __name__ == "__main__":
    main()
