"""SNIA PTS steady state: a pure test over the last five rounds of a tracking variable.

Source: SNIA Solid State Storage Performance Test Specification (PTS) 2.0.2,
section "Steady State" (same rule in PTS-E 1.1, 2.1.1): the measurement window is
rounds x-4..x; steady state is reached when, over that window,

* data excursion: max(y) - min(y) <= 20% of the window average, and
* slope excursion: |slope| x (window length - 1) <= 10% of the window average,

where the slope is that of the least-squares line fitted to (round, y). Rounds
are counted up to 25; when none of the windows up to then passes, the result is
reported as "steady state NOT achieved" with the last window's figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

WINDOW_ROUNDS = 5
"""Rounds in the measurement window (PTS: x-4..x)."""

DATA_EXCURSION_PCT = 20.0
"""Allowed max - min, in percent of the window average."""

SLOPE_EXCURSION_PCT = 10.0
"""Allowed |slope| x (window - 1), in percent of the window average."""

MAX_ROUNDS = 25
"""Rounds after which a test stops whether or not steady state was reached."""

_EPSILON = 1e-9
"""Relative tolerance so that a value exactly on a limit passes despite float rounding."""


@dataclass(frozen=True)
class Window:
    """The steady-state calculation over one window of one tracking variable.

    ``rounds`` are the round indexes (x-4..x) and ``values`` the variable in its
    own unit (IOPS, bytes/s or ns). The fit line is ``intercept + slope x round``.
    """

    rounds: tuple[int, ...]
    values: tuple[float, ...]
    average: float
    slope: float
    intercept: float
    data_excursion: float
    slope_excursion: float
    data_limit: float
    slope_limit: float

    @property
    def data_ok(self) -> bool:
        return self.data_excursion <= self.data_limit * (1 + _EPSILON)

    @property
    def slope_ok(self) -> bool:
        return self.slope_excursion <= self.slope_limit * (1 + _EPSILON)

    @property
    def steady(self) -> bool:
        return self.data_ok and self.slope_ok and self.average > 0


def least_squares(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """(slope, intercept) of the least-squares line y = intercept + slope x."""
    n = len(xs)
    if n != len(ys) or n < 2:
        raise ValueError("a fit line needs at least two (x, y) points")
    mean_x = sum(xs) / n
    mean_y = sum(ys) / n
    sxx = sum((x - mean_x) ** 2 for x in xs)
    if sxx == 0:
        raise ValueError("a fit line needs at least two different x values")
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    slope = sxy / sxx
    return slope, mean_y - slope * mean_x


def window(rounds: Sequence[int], values: Sequence[float]) -> Window:
    """The PTS steady-state figures of one window (any length >= 2, PTS uses 5)."""
    slope, intercept = least_squares([float(r) for r in rounds], values)
    average = sum(values) / len(values)
    return Window(
        rounds=tuple(rounds),
        values=tuple(float(v) for v in values),
        average=average,
        slope=slope,
        intercept=intercept,
        data_excursion=max(values) - min(values),
        slope_excursion=abs(slope) * (len(values) - 1),
        data_limit=abs(average) * DATA_EXCURSION_PCT / 100,
        slope_limit=abs(average) * SLOPE_EXCURSION_PCT / 100,
    )


@dataclass(frozen=True)
class Verdict:
    """Steady state of a test: reached or not, and the window of every variable.

    ``windows`` is the window that decided (the first steady one) or, when steady
    state was not reached, the last one; empty before five rounds exist.
    """

    steady: bool
    rounds_run: int
    windows: Mapping[str, Window]

    @property
    def window_rounds(self) -> tuple[int, ...]:
        first = next(iter(self.windows.values()), None)
        return first.rounds if first else ()


def assess(series: Mapping[str, Sequence[float]]) -> Verdict:
    """Steady state over all tracking variables (each a value per round, round 0 first).

    Steady state is reached at the first round x >= 4 where every variable passes
    both checks over rounds x-4..x. Every series must have the same length.
    """
    lengths = {len(values) for values in series.values()}
    if len(lengths) > 1:
        raise ValueError("every tracking variable needs a value in every round")
    count = lengths.pop() if lengths else 0
    last: dict[str, Window] = {}
    for end in range(WINDOW_ROUNDS - 1, count):
        indexes = list(range(end - WINDOW_ROUNDS + 1, end + 1))
        last = {
            name: window(indexes, [values[i] for i in indexes]) for name, values in series.items()
        }
        if last and all(w.steady for w in last.values()):
            return Verdict(True, end + 1, last)
    return Verdict(False, count, last)
