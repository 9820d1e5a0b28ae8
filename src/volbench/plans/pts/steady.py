"""The course most PTS tests share: purge, WIPC, rounds until steady state (or the
round limit), then the phases a test has after steady state (HIR's wait states,
the ECW and DIRTH sweeps)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from volbench.model import RW, Workload
from volbench.plans.pts.cells import PassCell, kib
from volbench.plans.pts.test import BaseTest, Phase, Round, StoredRound

if TYPE_CHECKING:  # options imports the catalog, which imports the tests
    from volbench.plans.pts.options import PtsOptions

WIPC_BS = 131072
"""WIPC: 128 KiB sequential writes, twice over the active range."""

WIPC_TEXT = f"WIPC: 2 x active range, {kib(WIPC_BS)} sequential writes"
"""The preconditioning of a test with WIPC, as reports say it."""


def wipc(options: PtsOptions, active: int, test: str) -> tuple[Workload, ...]:
    """2 x the active range of 128 KiB sequential writes, as two passes (no gap)."""
    return tuple(
        Workload(
            f"{test}.{Phase.WIPC}.{PassCell(n)}",
            RW.WRITE,
            bs_bytes=WIPC_BS,
            iodepth=options.threads * options.iodepth,
            size_bytes=active,
            runtime_s=None,
            time_based=False,
            ioengine=options.ioengine,
        )
        for n in (1, 2)
    )


class SteadyStateTest(BaseTest):
    """A test of WIPC and rounds of :meth:`ss_cells` to steady state, then the rounds
    of each phase after :attr:`Phase.SS` in :attr:`phases`, in order."""

    phases: tuple[Phase, ...] = (Phase.WIPC, Phase.SS)

    def ss_cells(self, options: PtsOptions, active: int) -> tuple[Workload, ...]:
        """The cells of one steady-state round."""
        raise NotImplementedError

    def phase_rounds(
        self, options: PtsOptions, active: int, phase: Phase
    ) -> tuple[tuple[Workload, ...], ...]:
        if phase not in self.phases:
            return ()
        if phase == Phase.WIPC:
            return (wipc(options, active, self.name),)
        if phase == Phase.SS:
            return (self.ss_cells(options, active),)
        return self.after_rounds(options, active, phase)

    def after_rounds(
        self, options: PtsOptions, active: int, phase: Phase
    ) -> tuple[tuple[Workload, ...], ...]:
        """The rounds of a phase after steady state (:meth:`phase_rounds`)."""
        return ()

    def _after(self) -> tuple[Phase, ...]:
        return self.phases[self.phases.index(Phase.SS) + 1 :]

    def next_round(
        self, options: PtsOptions, active: int, history: Sequence[StoredRound]
    ) -> Round | None:
        phases = [r.phase for r in history]
        if Phase.WIPC not in phases:
            return Round(self.name, Phase.WIPC, 0, wipc(options, active, self.name))
        ss_count = phases.count(Phase.SS)
        if not self.verdict(history).steady and ss_count < options.max_rounds:
            return Round(self.name, Phase.SS, ss_count, self.ss_cells(options, active))
        for phase in self._after():
            rounds = self.after_rounds(options, active, phase)
            done = phases.count(phase)
            if done < len(rounds):
                return Round(self.name, phase, done, rounds[done])
        return None

    def estimate(
        self, options: PtsOptions, active: int, speed: float, purge_s: float
    ) -> tuple[float, float]:
        """WIPC at ``speed``, 5 (or fewer: :attr:`PtsOptions.fewest_rounds`) to
        ``max_rounds`` steady-state rounds, and the phases
        after steady state whole."""
        round_s = Round(self.name, Phase.SS, 0, self.ss_cells(options, active)).planned_s
        after = [w for p in self._after() for r in self.after_rounds(options, active, p) for w in r]
        fixed = purge_s + 2 * active / speed + sum(w.duration_s for w in after)
        return fixed + options.fewest_rounds * round_s, fixed + options.max_rounds * round_s

    def describe(self, step: Round, options: PtsOptions) -> str:
        if step.phase == Phase.WIPC:
            return f"{step.test}: preconditioning (WIPC, 2 x active range, 128 KiB sequential)"
        return f"{step.test}: round {step.index + 1} of at most {options.max_rounds}"
