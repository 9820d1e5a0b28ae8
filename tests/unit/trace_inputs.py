"""Trace text with hostile times, and a large trace, for the reader fuzz (issue 31).

:func:`gen_trace_times` rewrites the times of blkparse's or the tracepoints' text
(the inputs of :mod:`reader_inputs`): an event far after the others (a completion a
billion seconds after its issue), a negative time, an event hours before the lines
above it, the events spread over a span (a second, a day, just under and just over
:data:`~volbench.trace.clock.MAX_SPAN_S`), or a long pause between two bursts. What it
did starts with ``sane`` when a user's tools could print it and volbench must read
it. :func:`write_large_blkparse` writes a blkparse file of many requests, every one
issued before the first completes.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

from reader_inputs import BLKPARSE, TRACEPOINTS

from volbench.trace.clock import MAX_SPAN_S, MAX_STEP_BACK_NS

DAY_S = 86_400
_TIME = re.compile(r"(?<=\s)(\d+)\.(\d+)(?=[\s:])")


def _time(line: str) -> str:
    found = _TIME.search(line)
    assert found is not None
    return found.group()


def _seconds(line: str) -> float:
    return float(_time(line))


def _retimed(line: str, seconds: float, decimals: int) -> str:
    return _TIME.sub(f"{seconds:.{decimals}f}", line, count=1)


def gen_trace_times(rng: random.Random, folder: Path) -> tuple[Path, str]:
    blkparse = rng.random() < 0.5
    lines = (BLKPARSE if blkparse else TRACEPOINTS).splitlines(keepends=True)
    decimals = 9 if blkparse else 6
    timed = [i for i, line in enumerate(lines) if _TIME.search(line)]
    first = _seconds(lines[timed[0]])
    step = rng.random()
    index = rng.choice(timed[1:])
    if step < 0.25:
        far = rng.choice((999_999_999, 8_999_999_999, 10**12, 366 * DAY_S, MAX_SPAN_S + 1))
        lines[index] = _retimed(lines[index], _seconds(lines[index]) + far, decimals)
        what = f"line {index + 1} {far:,} s later"
    elif step < 0.4:
        lines[index] = _TIME.sub("-" + _time(lines[index]), lines[index], count=1)
        what = f"line {index + 1} negative"
    elif step < 0.55:
        back = rng.choice((MAX_STEP_BACK_NS // 10**9 + 1, 3600, 30 * DAY_S))
        lines = [
            _retimed(line, _seconds(line) + 40 * DAY_S, decimals) if i in timed else line
            for i, line in enumerate(lines)
        ]
        lines[index] = _retimed(lines[index], _seconds(lines[index]) - back, decimals)
        what = f"line {index + 1} {back:,} s back"
    elif step < 0.85:
        span = rng.choice((1, DAY_S, MAX_SPAN_S - 1, MAX_SPAN_S + 60))
        for k, i in enumerate(timed):
            lines[i] = _retimed(lines[i], first + span * k / (len(timed) - 1), decimals)
        what = f"{'sane: ' if span <= MAX_SPAN_S else ''}spread over {span:,} s"
    else:
        pause = rng.choice((600, DAY_S, 6 * DAY_S))
        for i in timed[len(timed) // 2 :]:
            lines[i] = _retimed(lines[i], _seconds(lines[i]) + pause, decimals)
        what = f"sane: a pause of {pause:,} s"
    path = folder / ("trace.txt" if blkparse else "tracepoints.txt")
    path.write_text("".join(lines))
    return path, what


def write_large_blkparse(path: Path, requests: int) -> None:
    """blkparse's text of ``requests`` 4 KiB random reads of device 8,0, one issued
    every 10 µs, then their completions in the same order (all waiting at once, the
    most a reader must hold): two lines a request, about 68 bytes each."""
    rng = random.Random(31)
    sectors = [rng.randrange(0, 2**27) * 8 for _ in range(requests)]
    with path.open("w") as out:
        for action, cpu, pid, start in (("D", 3, 697, 0), ("C", 0, 0, requests * 10_000)):
            out.writelines(
                f"  8,0  {cpu:3d} {k + 1:8d} {(t := start + k * 10_000) // 10**9:5d}."
                f"{t % 10**9:09d} {pid:5d}  {action}   R {sector} + 8 [fio]\n"
                for k, sector in enumerate(sectors)
            )
