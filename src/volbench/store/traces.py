"""The block I/O traces of capture runs in the store: table ``traces`` (schema
version 7), one row per part of a trace (:class:`volbench.model.TracePart`, packed by
:mod:`volbench.trace.codec`), deleted with its run.

A capture is a run like any other (plan ``capture``: listed by ``volbench runs``,
labelled, deleted, moved in bundles with its UUID); its trace's figures besides the
requests (duration, requests issued before it, events lost) are in its settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from volbench.model import TracePart
from volbench.store import schema


def trace_rows(run_id: int, parts: Sequence[TracePart]) -> list[dict[str, Any]]:
    """The ``traces`` rows of a run's parts, numbered in order."""
    return [
        {"run_id": run_id, "part": number, "first_ns": p.first_ns, "ios": p.ios, "data": p.data}
        for number, p in enumerate(parts)
    ]


def read_parts(conn: Connection, run_id: int) -> tuple[TracePart, ...]:
    """The stored parts of run ``run_id``'s trace, in order (none: not a capture)."""
    table = schema.traces
    found = conn.execute(
        sa.select(table.c.first_ns, table.c.ios, table.c.data)
        .where(table.c.run_id == run_id)
        .order_by(table.c.part)
    ).all()
    return tuple(TracePart(int(r.first_ns), int(r.ios), bytes(r.data)) for r in found)
