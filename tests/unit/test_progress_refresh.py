"""The live bars are redrawn by rich's refresh thread only where rich draws them as
they go (a terminal). Elsewhere (output piped, a CI log) rich prints each bar once,
as it stops, and a refresh thread would only rebuild the bars' table ten times a
second, unseen: on a 56-cell PTS round that was a twentieth of volbench's CPU."""

from __future__ import annotations

import io

import pytest

from volbench.cli import console
from volbench.fio.live import LiveSample
from volbench.model import RW, Workload


def _round(monkeypatch: pytest.MonkeyPatch, terminal: bool) -> tuple[bool, str]:
    """(whether a refresh thread ran during the round, what stderr got)."""
    buffer = io.StringIO()
    monkeypatch.setattr(console.stderr, "_file", buffer)
    monkeypatch.setattr(console.stderr, "_force_terminal", terminal)
    reporter = console.ProgressReporter()
    try:
        reporter.round_started(0, [Workload("cell", RW.RANDREAD, runtime_s=1)], 1.0)
        refreshed = reporter._progress.live._refresh_thread is not None
        reporter.sample(LiveSample("cell", 1000.0, 4096000.0, 50_000.0, 1.0))
        reporter.round_done(0, [])
    finally:
        reporter.close()
    return refreshed, buffer.getvalue()


def test_no_refresh_thread_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    refreshed, shown = _round(monkeypatch, terminal=False)
    assert not refreshed
    assert shown.count("round 0 done: cell") == 1  # the finished bar, printed once


def test_a_terminal_is_redrawn_as_the_round_goes(monkeypatch: pytest.MonkeyPatch) -> None:
    refreshed, shown = _round(monkeypatch, terminal=True)
    assert refreshed
    assert "round 0 done: cell" in shown
