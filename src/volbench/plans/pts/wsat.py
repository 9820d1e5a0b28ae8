"""The PTS WSAT test (write saturation): purge, no WIPC; 4 KiB random writes in
samples of ``--cell-seconds`` until 4 x the active range is written, or the sample
limit (``--wsat-max-rounds``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar

from volbench.model import Workload
from volbench.plans.pts.cells import random_write_4k
from volbench.plans.pts.declared import Declared, OwnOptions, option
from volbench.plans.pts.test import BaseTest, Phase, Round, StoredRound

if TYPE_CHECKING:  # options imports the catalog, which imports this module
    from volbench.plans.pts.options import PtsOptions

WSAT_CAPACITY_MULTIPLE = 4
"""WSAT writes until 4 x the user capacity (here: the active range) is written."""

WSAT_LAST_SAMPLE_MARGIN = 1.02
"""The last WSAT sample runs 2% longer than the previous sample's write rate needs to
reach the target, so that it normally ends there (not a sample short of it)."""

MAX_WSAT_ROUNDS = 100_000
"""WSAT samples at most: 69 days of the PTS's 60 s samples."""


@dataclass(frozen=True)
class WsatOptions(OwnOptions):
    """WSAT's own option: its sample limit (PTS: 4 x the capacity written, or a time
    limit; 1440 one-minute samples = 24 hours)."""

    TITLE: ClassVar[str] = "WSAT"

    max_rounds: int = option(
        1440,
        Declared(
            "wsat_max_rounds",
            "WSAT samples at most (it ends at 4 x the active range written).",
            "SNIA SSS PTS-E 1.1, WSAT test",
            low=1,
            high=MAX_WSAT_ROUNDS,
        ),
    )


def wsat_cells(
    options: PtsOptions, active: int, runtime_s: float | None = None
) -> tuple[Workload, ...]:
    """One WSAT sample: 4 KiB random writes for a cell (``runtime_s``: shorter, the
    last sample, see :func:`wsat_sample`)."""
    cell = random_write_4k(options, active, "wsat", Phase.RUN)
    return (replace(cell, runtime_s=runtime_s) if runtime_s is not None else cell,)


def wsat_sample(
    options: PtsOptions, active: int, target: int, samples: Sequence[tuple[int, float]]
) -> tuple[Workload, ...] | None:
    """The next WSAT sample after ``samples`` ((bytes written per target, seconds) of
    each committed one); None when ``target`` bytes are written or the sample limit
    is reached.

    A sample that would pass the target is cut short: it runs for the time the
    previous sample's write rate needs for what is left, plus 2% (at least
    1/60 of a cell), so WSAT ends at the target instead of up to a whole sample
    after it. When the rate drops during that sample, a further short one follows;
    what the last sample writes past the target is in the report.
    """
    written = sum(done for done, _ in samples)
    if written >= target or len(samples) >= options.of(WsatOptions).max_rounds:
        return None
    runtime = options.cell_seconds
    done, seconds = samples[-1] if samples else (0, 0.0)
    if done > 0 and seconds > 0:
        needed = (target - written) / (done / seconds) * WSAT_LAST_SAMPLE_MARGIN
        shortest = max(options.cell_seconds / 60, 0.001)
        if needed < runtime:
            runtime = max(math.ceil(needed * 1000) / 1000, shortest)
    return wsat_cells(options, active, runtime if runtime < options.cell_seconds else None)


@dataclass(frozen=True)
class Wsat(BaseTest):
    name: str = "wsat"
    phases: tuple[Phase, ...] = (Phase.RUN,)
    own = WsatOptions

    def phase_rounds(
        self, options: PtsOptions, active: int, phase: Phase
    ) -> tuple[tuple[Workload, ...], ...]:
        return (wsat_cells(options, active),) if phase in self.phases else ()

    def next_round(
        self, options: PtsOptions, active: int, history: Sequence[StoredRound]
    ) -> Round | None:
        """Samples until 4 x the range is written, the last one cut short."""
        samples = [
            (
                sum(c.io_bytes for c in r.cells.values()),
                max((x.runtime_ms for c in r.cells.values() for x in c.results), default=0) / 1e3,
            )
            for r in history
        ]
        target = WSAT_CAPACITY_MULTIPLE * active
        cells = wsat_sample(options, active, target, samples)
        return Round(self.name, Phase.RUN, len(history), cells) if cells else None

    def estimate(
        self, options: PtsOptions, active: int, speed: float, purge_s: float
    ) -> tuple[float, float]:
        """4 KiB random writes are no faster than the sequential ones: at best 4 x the
        range at ``speed``, at worst every sample."""
        round_s = Round(self.name, Phase.RUN, 0, wsat_cells(options, active)).planned_s
        longest = round_s * options.of(WsatOptions).max_rounds
        fastest = min(longest, max(round_s, WSAT_CAPACITY_MULTIPLE * active / speed))
        return purge_s + fastest, purge_s + longest

    def repeats(self, options: PtsOptions, phase: Phase) -> tuple[int, int]:
        """Samples: one to ``--wsat-max-rounds``."""
        return (1, options.of(WsatOptions).max_rounds) if phase == Phase.RUN else (1, 1)

    def describe(self, step: Round, options: PtsOptions) -> str:
        return (
            f"{step.test}: sample {step.index + 1} of at most "
            f"{options.of(WsatOptions).max_rounds} "
            "(until 4 x active range written)"
        )

    def limit_note(self, options: PtsOptions) -> str | None:
        return f"WSAT at most {options.of(WsatOptions).max_rounds} samples"

    def estimate_bounds(self, options: PtsOptions) -> tuple[str, str] | None:
        return (
            f"WSAT: {WSAT_CAPACITY_MULTIPLE} x active range at the sequential write speed",
            f"WSAT: {options.of(WsatOptions).max_rounds} samples",
        )


WSAT = Wsat()
