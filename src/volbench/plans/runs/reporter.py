"""Events a plan emits while it runs. Plans never print; a Reporter shows them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from volbench.fio.live import LiveSample
from volbench.model import TestResult, Workload


class Reporter(Protocol):
    def preparing(self, message: str, total_bytes: int) -> None:
        """Long preparation (laying out a scratch file) of ``total_bytes`` starts."""

    def prepared(self, done_bytes: int) -> None:
        """Preparation progress: ``done_bytes`` so far."""

    def round_started(self, round_no: int, workloads: Sequence[Workload], planned_s: float) -> None:
        """One fio process with these stonewalled workloads starts."""

    def sample(self, sample: LiveSample) -> None:
        """A live per-interval figure of the workload running now."""

    def round_done(self, round_no: int, tests: Sequence[TestResult]) -> None:
        """The round ended and was committed to the store."""

    def step_started(self, label: str, workloads: Sequence[Workload], planned_s: float) -> None:
        """A step of several tests starts (e.g. a PTS round of 56 cells), each test a
        round of its own: one progress line for the whole step."""

    def step_done(self, label: str) -> None:
        """Every test of the step was committed (or the step was cut off)."""

    def note(self, message: str) -> None:
        """Something the user should know (engine chosen, a warning)."""

    def close(self) -> None:
        """The run's display ends (a live one is taken off the terminal)."""


class NullReporter:
    """Shows nothing: for library use and tests."""

    def preparing(self, message: str, total_bytes: int) -> None:
        pass

    def prepared(self, done_bytes: int) -> None:
        pass

    def round_started(self, round_no: int, workloads: Sequence[Workload], planned_s: float) -> None:
        pass

    def sample(self, sample: LiveSample) -> None:
        pass

    def round_done(self, round_no: int, tests: Sequence[TestResult]) -> None:
        pass

    def step_started(self, label: str, workloads: Sequence[Workload], planned_s: float) -> None:
        pass

    def step_done(self, label: str) -> None:
        pass

    def note(self, message: str) -> None:
        pass

    def close(self) -> None:
        pass
