"""When an imported fio output ran, as fio states it (:func:`times`).

fio's clock gives every time (never the import's where the file states one); a time
outside fio's lifetime (:mod:`volbench.store.limits`: 2005 to now and a day) or a start
after the end is refused with a ParseError naming the field, and a run whose end
alone is stated starts at its end, so a stored run never ends before it starts.
"""

from __future__ import annotations

from datetime import UTC, datetime

from volbench.errors import ParseError
from volbench.model import FioOutput
from volbench.store.limits import time_problem


def _lived(ms: float, what: str, where: str = "") -> str:
    """A time fio states (``ms`` since the epoch) as ISO 8601 UTC text to the second,
    refused (ParseError naming ``what`` and ``where``) outside fio's lifetime
    (:func:`volbench.store.limits.time_problem`: 2005 to now and a day)."""
    try:
        moment = datetime.fromtimestamp(ms / 1000.0, UTC)
    except (OverflowError, OSError, ValueError):  # before year 1
        moment = datetime.min.replace(tzinfo=UTC)
    stamp = moment.isoformat(timespec="seconds")
    problem = time_problem(moment)
    if problem:
        raise ParseError(
            f"{what} ({stamp}) {problem}: not a time fio ran at (its machine's clock"
            " was not set, or the file was changed)",
            where,
        )
    return stamp


def times(output: FioOutput) -> tuple[str | None, str | None, str]:
    """(start, end, where they come from) as fio states them, ISO 8601 UTC; None where
    the output states none.

    fio writes ``timestamp`` (s) and ``timestamp_ms`` when it prints a local run's
    output, at its end (stat.c ``__show_run_stats``), and a client/server run's when
    it starts the servers (client.c ``fio_start_all_clients``). Start: the earliest
    ``job_start`` (fio >= 3.36, ms since the epoch); else a local run's end less its
    longest ``elapsed`` (s since fio started, rounded up: to within a second); else a
    client/server run's ``timestamp``; else, when only the end is stated (no job, or
    no ``elapsed``), the end: a run is never stored ending before it starts. ``time``
    (local time of an unstated zone) is read as UTC only when the output has no
    ``timestamp`` (fio has printed both since fio 2.2.5).

    Every time taken lies within fio's lifetime (2005 to now and a day,
    :mod:`volbench.store.limits`) and the start is not after the end: else a
    ParseError names the field.
    """
    clients = any(j.hostname for j in output.jobs) or bool(output.all_clients)
    stamp_ms: float | None = output.timestamp_ms
    field, given = "timestamp_ms", f"{stamp_ms} ms"
    if stamp_ms is None and output.timestamp_s:
        stamp_ms, field, given = output.timestamp_s * 1000.0, "timestamp", f"{output.timestamp_s} s"
    note = "fio's timestamp"
    if stamp_ms is None and output.time:
        try:
            parsed = datetime.strptime(" ".join(output.time.split()), "%a %b %d %H:%M:%S %Y")
        except ValueError:
            parsed = None
        if parsed is not None:
            stamp_ms = parsed.replace(tzinfo=UTC).timestamp() * 1000.0
            field, given = "time", repr(output.time)
            note = "fio's time (its local time, read as UTC: the output states no zone)"
    stamp = None if stamp_ms is None else _lived(stamp_ms, given, field)
    starts = [j for j in output.jobs if j.job_start_ms]
    elapsed = [j for j in output.jobs if j.elapsed_s is not None]
    end = None if clients else stamp
    if starts:
        first = min(starts, key=lambda j: j.job_start_ms or 0)
        start = _lived(first.job_start_ms or 0, f"job {first.name!r}'s job_start")
        if end is not None and end < start:
            raise ParseError(
                f"job {first.name!r} started ({start}, its job_start) after {note} ({end}),"
                " the output's end: its times contradict each other",
                field,
            )
        return start, end, "start: fio's job_start; end: " + note
    if clients and stamp is not None:
        return stamp, None, f"start: {note} (client/server: when fio started)"
    if stamp_ms is not None and elapsed:
        longest = max(elapsed, key=lambda j: j.elapsed_s or 0)
        start = _lived(
            stamp_ms - 1000.0 * (longest.elapsed_s or 0),
            f"job {longest.name!r}, which ran {longest.elapsed_s} s (its elapsed) before"
            f" {note}, started then",
        )
        return start, end, f"start: {note} less fio's elapsed (to 1 s); end: {note}"
    if stamp is not None:
        return stamp, end, f"start: not stated, taken as its end; end: {note}"
    return None, None, "not stated: the times shown are the import's"
