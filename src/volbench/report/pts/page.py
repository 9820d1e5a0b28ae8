"""What a test's report page is: the :class:`TestPage` protocol each module of this
package implements for its test (its module's ``PAGES``: :mod:`.pages` finds them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from volbench.report.chart import Chart
from volbench.report.pts.data import PtsData
from volbench.report.sheet import Sheet


@dataclass(frozen=True)
class Figure:
    """A headline figure of a test: what it is, its value in ``unit`` (IOPS, MB/s,
    ns, s, GB)."""

    name: str
    value: float | None
    unit: str


class TestPage(Protocol):
    """The report page of one PTS test: its tables, charts and header fields."""

    @property
    def test(self) -> str:
        """The test's name (:attr:`volbench.plans.pts.test.PtsTest.name`)."""

    @property
    def title(self) -> str:
        """The page's title: ``IOPS``, ``WSAT: write saturation`` ..."""

    @property
    def fixed_tc_qd(self) -> tuple[int, int] | None:
        """The TC and QD the test runs at whatever the run's (Latency: 1, 1)."""

    def sheets(self, data: PtsData) -> list[Sheet]:
        """Its result tables (the first one is what its charts draw)."""

    def charts(self, sheets: Sequence[Sheet], prefix: str, data: PtsData) -> list[Chart]:
        """Its charts, drawn from the rows of its ``sheets`` (ids start with ``prefix``)."""

    def header_fields(self, data: PtsData) -> list[tuple[str, str]]:
        """Header fields of its own (WSAT: its samples)."""

    def headline(self, sheets: Sequence[Sheet], data: PtsData) -> list[Figure]:
        """Its headline figures, from the rows of its ``sheets``: what the summary at the
        top of the report shows of the test."""

    def convergence_cells(
        self, data: PtsData, cells: Sequence[str], tracked: list[str]
    ) -> list[str]:
        """The cells its steady-state convergence chart plots, from the cells of a
        steady-state round and its tracked ones."""


class BasePage:
    """What most pages do alike: no TC x QD or header fields of their own, the
    tracked cells in the convergence chart, no headline figures."""

    fixed_tc_qd: tuple[int, int] | None = None

    def header_fields(self, data: PtsData) -> list[tuple[str, str]]:
        return []

    def headline(self, sheets: Sequence[Sheet], data: PtsData) -> list[Figure]:
        return []

    def convergence_cells(
        self, data: PtsData, cells: Sequence[str], tracked: list[str]
    ) -> list[str]:
        return tracked
