"""A pytest plugin: what tests measured of this machine before they judged it, in the
session's summary.

A test that sets its limits from what the machine does at the moment (a lab guest's
own IOPS with no limit, say) records one line with :func:`record`; the lines come
back under "measured on this machine" at the end of the run, also from pytest-xdist's
workers (a test report carries its ``user_properties`` to the controller). CI's output
then shows the fastest and the slowest machine's figures and the limits chosen.
"""

from __future__ import annotations

import pytest

KEY = "measured"
"""The ``user_properties`` name of a measured line."""


def record(request: pytest.FixtureRequest, line: str) -> None:
    """Add ``line`` to the summary of the test that ``request`` belongs to."""
    request.node.user_properties.append((KEY, line))


class Measured:
    """Collects the measured lines of the session's test reports, each once."""

    def __init__(self) -> None:
        self.lines: dict[tuple[str, str], None] = {}

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if name == KEY:
                self.lines[(report.nodeid, str(value))] = None

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.lines:
            return
        terminalreporter.section("measured on this machine (tests/measured.py)")
        for nodeid, line in self.lines:
            terminalreporter.line(f"{nodeid}: {line}")


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # pytest-xdist: the controller sees every report
        config.pluginmanager.register(Measured(), "volbench-measured")
