"""How long a PTS run will take, before it starts.

Each test estimates itself (:meth:`.test.PtsTest.estimate`). Measured rounds take
exactly their planned cell time (time-based fio jobs); the unknowns are the
steady-state round count (5 at best, ``max_rounds`` at worst) and the time of the
size-based writes: WIPC (2 x the active range of 128 KiB
sequential writes) at the target's measured sequential write speed, and WSAT
(until 4 x the active range is written: at best at that speed, at worst
``wsat_max_rounds`` whole samples).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from volbench.plans.pts import catalog
from volbench.plans.pts.options import PtsOptions
from volbench.plans.pts.test import Phase, StoredRound
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
    return Estimate(
        tuple(
            (test.name, *test.estimate(options, active, speed, purge_s))
            for test in catalog.tests_of(options)
        )
    )


def estimate_note(options: PtsOptions, active: int, seq_write_bytes_per_s: float) -> str:
    """The start-up estimate line, saying what each bound assumes for these tests:
    steady state in 5 rounds or every test to its round limit; WSAT at the measured
    sequential write speed or to its sample limit."""
    guess = estimate(options, active, seq_write_bytes_per_s)
    tests = catalog.tests_of(options)
    low, high = [], []
    if any(test.steady_state for test in tests):
        low.append(f"steady state in {options.fewest_rounds} rounds")
        high.append(f"every test to its round limit of {options.max_rounds}")
    for bounds in filter(None, (test.estimate_bounds(options) for test in tests)):
        low.append(bounds[0])
        high.append(bounds[1])
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
    for test in catalog.tests_of(options):
        test_low, test_high = test.estimate(options, active, speed, 0.0)
        history = [r for r in rounds if r.test == test.name]
        if history and test.next_round(options, active, history) is None:
            continue
        done = sum(
            2 * active / speed if r.phase == Phase.WIPC else test.planned_s(options, active, r)
            for r in history
        )
        low += max(0.0, test_low - done)
        high += max(0.0, test_high - done)
    return low, high


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
