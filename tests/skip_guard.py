"""A pytest plugin: on CI, a test skipped for a reason CI must not have fails the run.

CI (``.ci/run``, ``CI=true``) installs fio, PostgreSQL, Chromium, the disk tools and
OpenSSH and runs as root, so "not installed", "needs root" or "not set" there means
an install step is missing and the tests that need it silently did not run. Only
the reasons in :data:`ALLOWED` may skip on CI: facts of the kernel or machine that
no install step changes. Elsewhere (a developer without root, say) skips stay skips.
"""

from __future__ import annotations

import os
import re

import pytest

ALLOWED: tuple[tuple[str, str], ...] = (
    (r"the kernel shows no partitions of loop devices here", "kernel without a partition parser"),
    (r"blkio cgroup v1 throttling is not available", "cgroup v2-only kernels"),
    (r"no cgroup v1 blkio throttling on this machine", "cgroup v2-only kernels"),
    (r"this zram device does not have 4 KiB logical blocks", "zram's block size is the kernel's"),
    (r"this filesystem has no user xattrs", "tmp filesystem without xattrs"),
    (r"swapon failed on a loop device here", "kernels that refuse swap on loop"),
    (r"/ is not on a block device here", "containers whose / is an overlay"),
    (r"exists already: not this test's to remove", "a leftover the test must not touch"),
    (r"zram is not available", "kernels built without zram"),
    (r"no IPv6 loopback", "hosts with IPv6 disabled"),
    (r"the kernel has no device-mapper driver here", "kernels built without device-mapper"),
)
"""(pattern, why CI may skip for it)."""


def disallowed(reason: str) -> bool:
    """Whether a skip ``reason`` is one CI must not have."""
    return not any(re.search(pattern, reason) for pattern, _ in ALLOWED)


class SkipGuard:
    """Collects the skips of a session; on CI, fails it when one is not allowed."""

    def __init__(self) -> None:
        self.bad: list[str] = []

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if not report.skipped or not isinstance(report.longrepr, tuple):
            return
        reason = str(report.longrepr[2]).removeprefix("Skipped: ")
        if not hasattr(report, "wasxfail") and disallowed(reason):
            self.bad.append(f"{report.nodeid}: {reason}")

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.bad and exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.bad:
            return
        terminalreporter.section("skips CI must not have (tests/skip_guard.py)", red=True)
        for line in self.bad:
            terminalreporter.line(line)


def pytest_configure(config: pytest.Config) -> None:
    worker = hasattr(config, "workerinput")  # pytest-xdist: the controller sees every report
    if not worker and os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        config.pluginmanager.register(SkipGuard(), "volbench-skip-guard")
