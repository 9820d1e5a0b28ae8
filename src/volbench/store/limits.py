"""What one stored value may be: run ids, the lengths of texts, the times of a run.

One set of bounds for the schema (:mod:`volbench.store.schema` sizes its columns with
them), for every write (:class:`volbench.store.repository.Store` checks what it is
given, so SQLite, which does not enforce ``VARCHAR`` lengths, keeps exactly what
PostgreSQL keeps) and for every reader of outside input (fio's JSON,
:mod:`volbench.fio.parser` and :mod:`volbench.plans.imported.output`; bundles,
:mod:`volbench.store.bundle_reader`; labels and run ids on the command line,
:mod:`volbench.cli.options`). So what volbench accepts, it stores alike on both
databases, exports and imports back; a value beyond a bound is refused where it is
read, in one line naming the field and the bound.

Ids: :data:`RUN_ID_MAX` = 2^63 - 1, the largest SQL ``BIGINT`` (SQLite's ``INTEGER``
is the same 64-bit signed integer); run ids count from 1.

Texts, in characters (Python ``len``; PostgreSQL's ``varchar(n)`` counts characters
too):

* :data:`NAME_CHARS` = 200: a test's name (fio's job name, which fio itself keeps to
  127 bytes: ``FIO_JOBNAME_SIZE`` = 128, fio stat.h; volbench adds at most
  ``-gGROUP`` or a ``buffered.`` prefix) and a plan's name;
* :data:`LABEL_KEY_CHARS` = 200 and :data:`LABEL_VALUE_CHARS` = 1,000: a label;
* :data:`HOSTNAME_CHARS` = 255: a result's place (a fio server's host name, at most
  253 characters in DNS, RFC 1035 2.3.4 with its dots; ``HOST:PORT``; or a target's
  path on a run on several places);
* :data:`OPTION_CHARS` = 8,192: a fio option value volbench keeps from an output
  (fio reads job files in lines of at most ``OPT_LEN_MAX`` = 8,192 bytes, fio
  parse.h); a longer one (only a command line can give it) is not stated;
* :data:`TEXT_CHARS` = 65,536: any other text kept with a run (a string in its target,
  host, settings or a workload: a list of a run's files or hosts, 16 paths of Linux's
  ``PATH_MAX`` of 4,096).

Times: a stored time lies within fio's lifetime, from :data:`EARLIEST` (2005-01-01,
the year of fio's first release: fio.c "Copyright (C) 2005 Jens Axboe") to now plus
:data:`FUTURE_MARGIN_S` (one day: a clock a few hours ahead, a local time read as UTC
up to 14 hours off), and a run, round or stall never ends before it starts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

RUN_ID_MAX = 2**63 - 1
NAME_CHARS = 200
LABEL_KEY_CHARS = 200
LABEL_VALUE_CHARS = 1_000
HOSTNAME_CHARS = 255
OPTION_CHARS = 8_192
TEXT_CHARS = 65_536

EARLIEST = datetime(2005, 1, 1, tzinfo=UTC)
FUTURE_MARGIN_S = 86_400


_RUN_ID = re.compile(r"\s*(\d{1,19})\s*", re.ASCII)


def run_number(text: str) -> int | None:
    """The run id ``text`` names (ASCII digits, blanks around them allowed), or None
    when it names none a store can hold: not a number, 0, or beyond :data:`RUN_ID_MAX`
    (checked before any query, where SQLite raises OverflowError beyond 64 bits)."""
    match = _RUN_ID.fullmatch(text)
    if match is None:
        return None
    number = int(match.group(1))
    return number if 1 <= number <= RUN_ID_MAX else None


def too_long(value: str, limit: int) -> str | None:
    """What is wrong with ``value`` as a text of at most ``limit`` characters, as a
    phrase to follow its name ("is 201 characters long, ..."); None when it fits."""
    if len(value) <= limit:
        return None
    return f"is {len(value):,} characters long, more than the store keeps ({limit:,})"


def long_text(value: Any, limit: int = TEXT_CHARS) -> tuple[str, str] | None:
    """The first string (a key or a value) in a JSON value longer than ``limit``, as
    (its path, the problem); None when every one fits. Walked without recursion."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            problem = too_long(item, limit)
            if problem:
                return where or "it", problem
        elif isinstance(item, dict):
            for key, inner in item.items():
                problem = too_long(str(key), limit)
                if problem:
                    return f"{where} (a key)".strip(), problem
                stack.append((inner, f"{where}.{key}" if where else str(key)))
        elif isinstance(item, list | tuple):
            stack.extend((inner, f"{where}[{i}]") for i, inner in enumerate(item))
    return None


def joined(items: Iterable[str], limit: int = TEXT_CHARS, sep: str = ",") -> str:
    """``items`` joined by ``sep`` in at most ``limit`` characters: those that fit, in
    order, then ``...(N more)`` for the rest (a list of a run's files or hosts)."""
    values = list(items)
    text = sep.join(values)
    if len(text) <= limit:
        return text
    kept: list[str] = []
    used = 0  # the kept values, each with its separator
    for index, value in enumerate(values):
        if used + len(value) + len(sep) + len(f"...({len(values) - index} more)") > limit:
            break
        kept.append(value)
        used += len(value) + len(sep)
    return sep.join([*kept, f"...({len(values) - len(kept)} more)"])


def latest(now: datetime | None = None) -> datetime:
    """The latest time a stored value may have: now plus :data:`FUTURE_MARGIN_S`."""
    return (now or datetime.now(UTC)) + timedelta(seconds=FUTURE_MARGIN_S)


def time_problem(moment: datetime, now: datetime | None = None) -> str | None:
    """What is wrong with ``moment`` (aware) as a stored time, as a phrase to follow it
    ("is before ..."); None when it lies within fio's lifetime."""
    if moment < EARLIEST:
        return f"is before {EARLIEST.date()}, the year of fio's first release"
    last = latest(now)
    if moment > last:
        return f"is after {last.isoformat(timespec='seconds')} (now and a day)"
    return None


def stored_time_problem(value: str | None) -> str | None:
    """:func:`time_problem` of a stored time (ISO 8601 with a zone); None for None."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return "is not an ISO 8601 time"
    if moment.tzinfo is None:
        return "has no time zone"
    return time_problem(moment)


def order_problem(started: str | None, ended: str | None) -> str | None:
    """What is wrong with a span of stored times (ISO 8601 with a zone): its end before
    its start; None when it is in order or either is not stated."""
    if started is None or ended is None:
        return None
    if datetime.fromisoformat(ended) < datetime.fromisoformat(started):
        return f"ends ({ended}) before it starts ({started})"
    return None
