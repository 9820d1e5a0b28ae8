"""What the store admits: every value it is given, checked against
:mod:`volbench.store.limits` before it is written, alike on SQLite and PostgreSQL.

Readers of outside input (fio's JSON, bundles, labels, run ids) refuse what is out of
bounds first, naming the field; these checks are the same bounds where everything
meets, so nothing reaches a database that one of them would not keep or a bundle
would not carry back. A text too long, or a time outside fio's lifetime, is a
one-line :class:`~volbench.errors.StoreError` ("cannot store ...").

Three values of a measured run are repaired, not refused, since refusing them would
lose what was measured (:func:`round_times`, :func:`ended_at`, :func:`message`): a
round's time outside fio's lifetime (a host's clock not set) is not kept, an end
before its start (a remote fio's clock behind this one, a clock stepped back) is kept
as the start (the span is at least zero), and a run's message longer than
``TEXT_CHARS`` is cut to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from volbench.errors import StoreError
from volbench.model import LogSeries, RunRecord, Stall
from volbench.records import json_object
from volbench.store.limits import (
    HOSTNAME_CHARS,
    LABEL_KEY_CHARS,
    LABEL_VALUE_CHARS,
    NAME_CHARS,
    TEXT_CHARS,
    long_text,
    order_problem,
    stored_time_problem,
    too_long,
)
from volbench.store.rows import stored_result_row


def _refuse(what: str, problem: str) -> StoreError:
    shown = what if len(what) <= 120 else what[:117] + "..."
    return StoreError(f"cannot store {shown}: {problem}")


def text(value: str | None, limit: int, what: str) -> None:
    """StoreError when ``value`` is longer than ``limit`` characters."""
    problem = None if value is None else too_long(value, limit)
    if problem:
        raise _refuse(what, f"it {problem}")


def texts(value: Any, what: str) -> None:
    """StoreError when a string in the JSON value ``value`` (a target, host, settings,
    a workload) is longer than :data:`~volbench.store.limits.TEXT_CHARS`."""
    found = long_text(value)
    if found:
        where, problem = found
        raise _refuse(f"{what} {where}", f"it {problem}")


def labels(given: Mapping[str, str]) -> None:
    """StoreError for a label whose key or value is longer than the store keeps."""
    for key, value in given.items():
        text(key, LABEL_KEY_CHARS, f"the label key {key[:40]!r}")
        text(value, LABEL_VALUE_CHARS, f"the label {key[:40]!r}")


def time(value: str | None, what: str) -> None:
    """StoreError when ``value`` (ISO 8601 with a zone) is outside fio's lifetime."""
    problem = stored_time_problem(value)
    if problem:
        raise _refuse(what, f"{value} {problem}")


def span(started: str | None, ended: str | None, what: str) -> None:
    """StoreError for times outside fio's lifetime, or an end before the start."""
    time(started, f"{what}'s start")
    time(ended, f"{what}'s end")
    problem = order_problem(started, ended)
    if problem:
        raise _refuse(what, f"it {problem}")


def round_times(started: str | None, ended: str | None) -> tuple[str | None, str | None]:
    """A measured round's (start, end) as stored: a time outside fio's lifetime is not
    kept (None), and an end before the start is the start."""
    started = None if stored_time_problem(started) else started
    ended = None if stored_time_problem(ended) else ended
    return started, ended_at(started, ended)


def message(error: str | None) -> str | None:
    """A run's message (its error or notes) as stored: at most
    :data:`~volbench.store.limits.TEXT_CHARS` characters, a longer one (fio's words
    quoted at length) cut to that with ``...`` at its end."""
    if error is None or len(error) <= TEXT_CHARS:
        return error
    return error[: TEXT_CHARS - 3] + "..."


def ended_at(started: str | None, ended: str | None) -> str | None:
    """``ended``, or ``started`` when ``ended`` is before it (the span is at least 0)."""
    return started if order_problem(started, ended) else ended


def results(found: Iterable[Mapping[str, Any]]) -> None:
    """StoreError for a ``results`` row whose test, place or workload the store cannot
    keep."""
    for row in found:
        test = row["test"]
        text(test, NAME_CHARS, f"the test name {test[:40]!r}")
        text(row.get("hostname"), HOSTNAME_CHARS, f"test {test[:40]!r}'s place")
        texts(row["workload"], f"test {test[:40]!r}'s workload")


def series(found: Iterable[LogSeries]) -> None:
    """StoreError for a log whose test or host the store cannot keep."""
    for item in found:
        text(item.test, NAME_CHARS, f"the log of test {item.test[:40]!r}")
        text(item.host, HOSTNAME_CHARS, f"the log of test {item.test[:40]!r}'s host")


def stalls(found: Iterable[Stall]) -> None:
    """StoreError for a stall whose test the store cannot keep, or whose times are
    outside fio's lifetime or out of order."""
    for item in found:
        text(item.test, NAME_CHARS, f"a stall of test {item.test[:40]!r}")
        span(item.started_at, item.ended_at, f"a stall of test {item.test[:40]!r}")


def record(run: RunRecord) -> None:
    """StoreError for anything of a whole run read back (a bundle's) that the store
    cannot keep as it is: every text bound, every time and span (run, rounds, stalls)."""
    what = f"run {run.uuid or run.id}"
    text(run.plan, NAME_CHARS, f"{what}: its plan name")
    text(run.error, TEXT_CHARS, f"{what}: its message")
    labels(run.labels)
    texts({"target": json_object(run.target), "host": json_object(run.host)}, what)
    texts(run.settings.record(), f"{what}'s settings")
    span(run.started_at, run.ended_at, what)
    for times in run.rounds:
        span(times.started_at, times.ended_at, f"{what}: round {times.round}")
        time(times.committed_at, f"{what}: round {times.round}'s commit")
    results(stored_result_row(0, r) for r in run.results)
    series(run.series)
    stalls(run.stalls)
