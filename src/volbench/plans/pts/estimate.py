"""How long a PTS run will take, before it starts.

Measured rounds take exactly their planned cell time (time-based fio jobs); the
unknowns are the steady-state round count (5 at best, ``max_rounds`` at worst)
and the time of the size-based writes: WIPC (2 x the active range of 128 KiB
sequential writes) at the target's measured sequential write speed, and WSAT
(until 4 x the active range is written: at best at that speed, at worst
``wsat_max_rounds`` whole samples).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from volbench.analysis.steady_state import WINDOW_ROUNDS
from volbench.plans.pts import catalog
from volbench.plans.pts.options import PtsOptions
from volbench.plans.pts.state import WSAT_CAPACITY_MULTIPLE, StoredRound, next_for
from volbench.units import format_bytes


@dataclass(frozen=True)
class Estimate:
    """Per test (seconds): (test, shortest, longest) and the totals."""

    tests: tuple[tuple[str, float, float], ...]

    @property
    def low_s(self) -> float:
        return sum(low for _, low, _ in self.tests)

    @property
    def high_s(self) -> float:
        return sum(high for _, _, high in self.tests)


def estimate(
    options: PtsOptions, active: int, seq_write_bytes_per_s: float, purge_s: float = 0.0
) -> Estimate:
    """Shortest and longest duration of every test of ``options`` (seconds).

    ``seq_write_bytes_per_s`` is the measured 128 KiB sequential write speed;
    ``purge_s`` the expected time of one purge (0 for discard).
    """
    speed = max(seq_write_bytes_per_s, 1.0)
    rows = []
    for test in options.tests:
        round_s = catalog.Round(test, "ss", 0, catalog.ss_cells(options, active, test)).planned_s
        if test == "xsr":
            total = sum(
                w.duration_s for i in range(3) for w in catalog.xsr_cells(options, active, i)
            )
            rows.append((test, purge_s + total, purge_s + total))
            continue
        if test == "wsat":  # 4 KiB random writes are no faster than the sequential ones
            longest = round_s * options.wsat_max_rounds
            fastest = min(longest, max(round_s, WSAT_CAPACITY_MULTIPLE * active / speed))
            rows.append((test, purge_s + fastest, purge_s + longest))
            continue
        fixed = purge_s + 2 * active / speed
        if test == "hir":
            fixed += sum(
                w.duration_s
                for i in range(len(catalog.HIR_WAIT_STATES_S))
                for w in catalog.hir_cells(options, active, i)
            )
        if test in ("ecw", "dirth"):
            fixed += sum(w.duration_s for w in catalog.grid_sweep_cells(options, active, test))
        rows.append((test, fixed + WINDOW_ROUNDS * round_s, fixed + options.max_rounds * round_s))
    return Estimate(tuple(rows))


def estimate_note(options: PtsOptions, active: int, seq_write_bytes_per_s: float) -> str:
    """The start-up estimate line, saying what each bound assumes for these tests:
    steady state in 5 rounds or every test to its round limit; WSAT at the measured
    sequential write speed or to its sample limit."""
    guess = estimate(options, active, seq_write_bytes_per_s)
    steady_state = [t for t in options.tests if t not in ("wsat", "xsr")]
    low, high = [], []
    if steady_state:
        low.append(f"steady state in {WINDOW_ROUNDS} rounds")
        high.append(f"every test to its round limit of {options.max_rounds}")
    if "wsat" in options.tests:
        low.append(f"WSAT: {WSAT_CAPACITY_MULTIPLE} x active range at the sequential write speed")
        high.append(f"WSAT: {options.wsat_max_rounds} samples")
    span = f"{format_duration(guess.low_s)}" + (f" ({', '.join(low)})" if low else "")
    if guess.high_s > guess.low_s + 1:
        span += f" to {format_duration(guess.high_s)}" + (f" ({', '.join(high)})" if high else "")
    return (
        f"estimate: {span}; sequential write {seq_write_bytes_per_s / 1e6:,.0f} MB/s, "
        f"active range {format_bytes(active)}"
    )


def remaining(
    options: PtsOptions,
    active: int,
    rounds: Sequence[StoredRound],
    seq_write_bytes_per_s: float,
) -> tuple[float, float]:
    """Shortest and longest time left (seconds) after the committed ``rounds``:
    each test's estimate less the planned time of its committed rounds (WIPC at
    the measured speed); tests already done count nothing."""
    low = high = 0.0
    speed = max(seq_write_bytes_per_s, 1.0)
    for test, test_low, test_high in estimate(options, active, speed).tests:
        history = [r for r in rounds if r.test == test]
        if history and next_for(options, active, test, history) is None:
            continue
        done = sum(
            2 * active / speed if r.phase == "wipc" else _planned_s(options, active, r)
            for r in history
        )
        low += max(0.0, test_low - done)
        high += max(0.0, test_high - done)
    return low, high


def _planned_s(options: PtsOptions, active: int, stored: StoredRound) -> float:
    """Planned seconds of a committed round (HIR wait states: cycles + continuous)."""
    if stored.phase != "idle":
        return len(stored.cells) * options.cell_seconds
    wait = int(next(iter(stored.cells))[1:].split("-")[0])
    index = catalog.HIR_WAIT_STATES_S.index(wait)
    return sum(w.duration_s for w in catalog.hir_cells(options, active, index))


def format_duration(seconds: float) -> str:
    """``3725`` -> ``1h 2m``; ``42`` -> ``42s``."""
    total = round(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes}m"
    if minutes:
        return f"{minutes}m {secs}s"
    return f"{secs}s"
