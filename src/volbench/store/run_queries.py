"""Reading the result store: a run by id or ``latest``, its results, rounds and
series, the runs by label, plan and status, in transactions whose database errors
are one-line :class:`~volbench.errors.StoreError` s
(:class:`~volbench.store.repository.Store` adds the writes).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Any, Self

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from volbench.errors import StoreError
from volbench.model import (
    RoundTimes,
    RunRecord,
    RunStatus,
    StoredResult,
)
from volbench.store import migrations, owner, rows, schema
from volbench.store.database import (
    display_url,
    one_line,
)
from volbench.store.limits import RUN_ID_MAX, run_number
from volbench.store.schema import rounds, runs
from volbench.store.series import log_series
from volbench.store.traces import read_parts

ADDED_LAST_FIRST = (runs.c.id.desc(),)
"""The order of runs in a list and for ``latest``: the run added to this store last
first. Ids only grow: SQLite gives a new row one more than the highest id
(``INTEGER PRIMARY KEY``), PostgreSQL its sequence's next value, and a run moved in from
a bundle gets a new id too (:meth:`volbench.store.repository.Store.import_runs`). Not by
start time: an imported fio output keeps fio's own (years back, say), and one that
states none starts when it was imported, so a start-time order would leave either far
from where the user just put it, and ``latest`` naming another run."""


RUN_ID = sa.bindparam("run_id", type_=sa.BigInteger)
"""A run's id in the statements built once below (their compiled form is cached). A
BIGINT: PostgreSQL's ``runs.id`` is an INTEGER (32 bits), and an id given as one
refuses any beyond it ("integer out of range") instead of finding no run."""

_STATUS = sa.select(runs.c.status).where(runs.c.id == RUN_ID)
_ROUND_COUNT = sa.select(sa.func.count()).select_from(rounds).where(rounds.c.run_id == RUN_ID)
_RESULTS = (
    sa.select(schema.results)
    .where(
        schema.results.c.run_id == sa.bindparam("run_id"),
        schema.results.c.round >= sa.bindparam("from_round"),
    )
    .order_by(schema.results.c.round, schema.results.c.id)
)


class RunQueries:
    """The reads of a result store on SQLite or PostgreSQL, and its connection."""

    def __init__(self, engine: Engine) -> None:
        """Wrap an engine whose database is already at the latest schema version."""
        self._engine = engine

    @property
    def url(self) -> str:
        """The database URL for display, password masked."""
        return display_url(self._engine.url)

    def close(self) -> None:
        """Release all connections."""
        self._engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def running_owner(self, ref: str | int) -> str | None:
        """Who still runs run ``ref`` (e.g. ``pid 12 on host``), or None when nothing
        does: it is finished, or its process is gone."""
        with self._begin() as conn:
            run_id = self._resolve(conn, ref)
            row = conn.execute(
                sa.select(runs.c.status, runs.c.owner, runs.c.heartbeat_at).where(
                    runs.c.id == run_id
                )
            ).one()
        found = owner.Owner.parse(row.owner)
        if row.status != RunStatus.RUNNING.value or not owner.alive(found, row.heartbeat_at):
            return None
        return found.describe() if found else "another volbench"

    def resolve(self, ref: str | int) -> int:
        """The id of run ``ref``: a run id or ``latest`` (the run added last: the
        highest id, :data:`ADDED_LAST_FIRST`)."""
        with self._begin() as conn:
            return self._resolve(conn, ref)

    def get_run(self, ref: str | int, *, raw: bool = True) -> RunRecord:
        """A run with its labels, results (by round, then as stored), raw outputs and
        per-second series (``raw=False``: without outputs and series, the bulk of a
        run's size; see :meth:`round_count`)."""
        with self._begin() as conn:
            run_id = self._resolve(conn, ref)
            row = conn.execute(sa.select(runs).where(runs.c.id == run_id)).one()
            outputs = (
                conn.execute(
                    sa.select(rounds.c.raw_json)
                    .where(rounds.c.run_id == run_id)
                    .order_by(rounds.c.round)
                )
                .scalars()
                .all()
                if raw
                else ()
            )
            stored = self._results(conn, run_id)
            times = conn.execute(
                sa.select(
                    rounds.c.round, rounds.c.started_at, rounds.c.ended_at, rounds.c.committed_at
                )
                .where(rounds.c.run_id == run_id)
                .order_by(rounds.c.round)
            ).all()
            stalls = conn.execute(
                sa.select(schema.stalls)
                .where(schema.stalls.c.run_id == run_id)
                .order_by(schema.stalls.c.started_at, schema.stalls.c.id)
            ).all()
            table = schema.series
            series = (
                conn.execute(
                    sa.select(table).where(table.c.run_id == run_id).order_by(table.c.id)
                ).all()
                if raw
                else ()
            )
            return rows.run_record(
                row,
                self._labels(conn, [run_id]).get(run_id, {}),
                results=stored,
                raw_outputs=tuple(outputs),
                rounds=tuple(RoundTimes(*t) for t in times),
                stalls=tuple(rows.stall(r) for r in stalls),
                series=tuple(s for r in series for s in log_series(r)),
                trace=read_parts(conn, run_id) if raw else (),
            )

    def get_results(self, ref: str | int, from_round: int = 0) -> tuple[StoredResult, ...]:
        """The result rows of a run's rounds ``from_round`` on (by round, then as stored),
        without the run or fio's raw outputs: what a loop over rounds reads after each."""
        with self._begin() as conn:
            return self._results(conn, self._resolve(conn, ref), from_round)

    def round_count(self, ref: str | int) -> int:
        """How many rounds of a run are committed (``len(get_run(ref).raw_outputs)``)."""
        with self._begin() as conn:
            run_id = self._resolve(conn, ref)
            return int(conn.execute(_ROUND_COUNT, {"run_id": run_id}).scalar_one())

    def list_runs(
        self,
        labels: Mapping[str, str] | None = None,
        plan: str | None = None,
        status: RunStatus | str | None = None,
        limit: int | None = None,
    ) -> list[RunRecord]:
        """Runs, the one added last first (:data:`ADDED_LAST_FIRST`: the first is
        ``latest``), without results or raw outputs.

        Filters combine: every given label ``key=value`` must match, and the plan
        and status if given.
        """
        conditions: list[sa.ColumnElement[bool]] = []
        table = schema.labels
        for key, value in (labels or {}).items():
            conditions.append(
                runs.c.id.in_(
                    sa.select(table.c.run_id).where(table.c.key == key, table.c.value == value)
                )
            )
        if plan is not None:
            conditions.append(runs.c.plan == plan)
        wanted = RunStatus(status) if status is not None else None
        # a stored `running` run may be `interrupted` (its process is gone): decided
        # per run after reading, so those two are filtered (and limited) here
        live = (RunStatus.RUNNING, RunStatus.INTERRUPTED)
        if wanted in live:
            conditions.append(runs.c.status.in_([s.value for s in live]))
        elif wanted is not None:
            conditions.append(runs.c.status == wanted.value)
        query = sa.select(runs).where(*conditions).order_by(*ADDED_LAST_FIRST)
        if wanted not in live:
            query = query.limit(limit)
        with self._begin() as conn:
            found = conn.execute(query).all()
            ids = sa.select(query.subquery().c.id)
            by_run = self._labels(conn, ids)
            records = [rows.run_record(row, by_run.get(row.id, {})) for row in found]
        if wanted in live:
            records = [r for r in records if r.status is wanted][:limit]
        return records

    @contextmanager
    def _begin(self, write: bool = False) -> Iterator[Connection]:
        """One transaction, committed on success; database errors become StoreError.

        On SQLite a ``write`` transaction starts with ``BEGIN IMMEDIATE``: a deferred
        transaction that reads first and then writes gets SQLITE_BUSY at once, without
        waiting out the busy timeout, whenever another connection (e.g. a second
        volbench command opening the store) holds the write lock at that moment.
        """
        try:
            with self._engine.connect() as conn:
                if write:
                    conn.execution_options(**{migrations.SQLITE_BEGIN_OPTION: "IMMEDIATE"})
                with conn.begin():
                    yield conn
        except sa.exc.DBAPIError as exc:
            raise StoreError(f"result store {self.url}: {one_line(exc)}") from exc

    @staticmethod
    def _results(conn: Connection, run_id: int, from_round: int = 0) -> tuple[StoredResult, ...]:
        found = conn.execute(_RESULTS, {"run_id": run_id, "from_round": from_round})
        return tuple(rows.stored_result(r) for r in found)

    def _resolve(self, conn: Connection, ref: str | int) -> int:
        """The id of an existing run: ``latest`` (the one added last) or a run id."""
        text = str(ref).strip()
        if text.lower() == "latest":
            last = conn.execute(sa.select(runs.c.id).order_by(*ADDED_LAST_FIRST).limit(1))
            run_id = last.scalar()
            if run_id is None:
                raise StoreError(f"no runs in {self.url} yet")
            return int(run_id)
        run_id = run_number(text)
        if run_id is None:
            raise StoreError(
                f"not a run: {text[:40]!r} (give a run id, 1 to {RUN_ID_MAX:,}, or latest;"
                " see volbench runs)"
            )
        self._status(conn, run_id)
        return run_id

    def _status(self, conn: Connection, run_id: int) -> RunStatus:
        """The status of run ``run_id``; StoreError if there is no such run (the id
        bound as a BIGINT: :data:`RUN_ID`)."""
        status = conn.execute(_STATUS, {"run_id": run_id}).scalar()
        if status is None:
            raise StoreError(f"no run {run_id} in {self.url} (see volbench runs)")
        return RunStatus(status)

    @staticmethod
    def _labels(
        conn: Connection, run_ids: sa.Select[Any] | Sequence[int]
    ) -> dict[int, dict[str, str]]:
        """Labels of the given runs (a list of ids or a query for them), by run id."""
        table = schema.labels
        found = conn.execute(
            sa.select(table).where(table.c.run_id.in_(run_ids)).order_by(table.c.key)
        )
        by_run: dict[int, dict[str, str]] = {}
        for row in found:
            by_run.setdefault(row.run_id, {})[row.key] = row.value
        return by_run
