"""The result store: runs, their rounds (raw fio JSON, fio's per-second series) and
normalised result rows.

:class:`Store` is the one interface the rest of volbench uses. Every write is its
own transaction, committed when the method returns, so a crash or Ctrl-C between
rounds loses nothing that :meth:`Store.add_round` already returned from.
The database connection is made by :mod:`volbench.store.database`.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool

from volbench.errors import StoreError
from volbench.model import (
    LogSeries,
    RunRecord,
    RunSettings,
    RunStatus,
    Stall,
    StoredWorkload,
    TestResult,
    TracePart,
)
from volbench.records import json_object
from volbench.store import admission, migrations, owner, rows, schema
from volbench.store.database import (
    connect,
    default_data_dir,
    display_url,
    location,
    one_line,
    redact,
)
from volbench.store.limits import NAME_CHARS
from volbench.store.run_queries import RUN_ID, RunQueries
from volbench.store.schema import rounds, runs
from volbench.store.series import series_rows
from volbench.store.traces import trace_rows

__all__ = ["Store", "default_data_dir"]

_ADMIT_ROUND = sa.select(
    runs.c.status,
    sa.exists()
    .where(rounds.c.run_id == runs.c.id, rounds.c.round == sa.bindparam("round_no"))
    .label("stored"),
).where(runs.c.id == RUN_ID)
"""A run's status and whether its round ``round_no`` is stored, in one statement
built once (:meth:`Store.add_round`, once a cell)."""
_INSERT_ROUND = rounds.insert()
_INSERT_RESULTS = schema.results.insert()
_INSERT_SERIES = schema.series.insert()


def _require_store(engine: Engine, name: str) -> None:
    """Raise StoreError unless the database holds volbench's tables (read-only opening:
    an empty database is not made a store)."""
    with engine.connect() as conn:
        if migrations.current_version(conn, name) == 0:
            shown = engine.url.database if engine.url.get_backend_name() == "sqlite" else name
            raise StoreError(
                f"{shown} holds no volbench results (a run creates them; check --db or VOLBENCH_DB)"
            )


class Store(RunQueries):
    """A result store on SQLite or PostgreSQL; use :meth:`open` to get one."""

    @classmethod
    def open(cls, url: str | None = None, create: bool = True) -> Store:
        """Open (and create or upgrade) the store at ``url``.

        ``url`` is a file path, ``sqlite:///FILE`` or ``postgresql://...``; ``None``
        means ``$VOLBENCH_DB``, else ``volbench.db`` in the user's data directory.
        Commands that only read pass ``create=False``: a store that does not exist,
        or a database without volbench's tables, is then an error and nothing is
        created. Any failure is a one-line :class:`StoreError` without the password.
        """
        engine = connect(url, create)
        name = display_url(engine.url)
        try:
            if not create:
                _require_store(engine, name)
            migrations.upgrade(engine, name=name)
        except sa.exc.DBAPIError as exc:
            engine.dispose()
            message = f"cannot open result store {name}: {one_line(exc)} (set --db or VOLBENCH_DB)"
            raise StoreError(redact(message, location(url))) from None
        except StoreError as exc:
            engine.dispose()
            raise StoreError(redact(str(exc), location(url))) from None
        except BaseException:
            engine.dispose()
            raise
        return cls(engine)

    def create_run(
        self,
        plan: str,
        target: Any,
        host: Any,
        labels: Mapping[str, str],
        settings: RunSettings,
        non_compliant: bool = False,
        *,
        started_at: str | None = None,
    ) -> int:
        """Record a new run with status ``running`` and return its id.

        ``target`` and ``host`` are :class:`TargetInfo` and :class:`HostInfo` (or
        dicts); ``settings`` holds the plan and its options (its ``options`` must be
        JSON-able: dataclasses, enums, tuples and sets are converted). ``started_at`` (ISO
        8601 with a time zone) is for imports; by default it is now. What the store
        cannot keep (:mod:`volbench.store.admission`: a text too long, a start outside
        fio's lifetime, e.g. this machine's clock not set) is a StoreError.
        """
        started = rows.timestamp(started_at)
        values = {
            "plan": plan,
            "status": RunStatus.RUNNING.value,
            "owner": owner.current().text(),
            "heartbeat_at": rows.timestamp(None),
            "started_at": started,
            "target": rows.as_dict(target),
            "host": rows.as_dict(host),
            "settings": settings.record(),
            "non_compliant": non_compliant,
            "uuid": str(uuid.uuid4()),
        }
        admission.text(plan, NAME_CHARS, f"the plan name {plan[:40]!r}")
        admission.labels(labels)
        admission.texts({k: values[k] for k in ("target", "host", "settings")}, "the run")
        admission.time(started, "the run's start (this machine's clock?)")
        with self._begin(write=True) as conn:
            run_id = int(
                conn.execute(runs.insert().values(values).returning(runs.c.id)).scalar_one()
            )
            label_rows = [{"run_id": run_id, "key": k, "value": v} for k, v in labels.items()]
            if label_rows:
                conn.execute(schema.labels.insert(), label_rows)
        return run_id

    def import_runs(
        self, records: Sequence[RunRecord], labels: Mapping[str, str] | None = None
    ) -> list[tuple[int, bool]]:
        """Store finished runs read from another store (a bundle, :mod:`volbench.store.bundle`)
        as they were there, all in one transaction: each run's record, labels (``labels``
        set over them), rounds with fio's outputs and times, results, series and stalls.
        A run whose UUID this store already has is left as it is. Returns, per record,
        its id here and whether it was added. Nothing is stored when any run fails."""
        placed: list[tuple[int, bool]] = []
        with self._begin(write=True) as conn:
            for record in records:
                if record.status is RunStatus.RUNNING or not record.uuid:
                    raise ValueError(f"run {record.uuid or record.id}: a running run or no uuid")
                admission.record(record)
                admission.labels(labels or {})
                found = conn.execute(sa.select(runs.c.id).where(runs.c.uuid == record.uuid))
                had = found.scalar()
                if had is not None:
                    placed.append((int(had), False))
                    continue
                placed.append((self._insert_record(conn, record, labels or {}), True))
        return placed

    @staticmethod
    def _insert_record(conn: Connection, record: RunRecord, labels: Mapping[str, str]) -> int:
        """Insert one whole run read back (:meth:`import_runs`); its new id."""
        values = {
            "uuid": record.uuid,
            "plan": record.plan,
            "status": record.status.value,
            "started_at": record.started_at,
            "ended_at": record.ended_at,
            "target": json_object(record.target),
            "host": json_object(record.host),
            "settings": record.settings.record(),
            "error": record.error,
            "non_compliant": record.non_compliant,
        }
        run_id = int(conn.execute(runs.insert().values(values).returning(runs.c.id)).scalar_one())
        merged = {**record.labels, **labels}
        if merged:
            conn.execute(
                schema.labels.insert(),
                [{"run_id": run_id, "key": k, "value": v} for k, v in merged.items()],
            )
        if len(record.rounds) != len(record.raw_outputs):
            raise ValueError(f"run {record.uuid}: round times and outputs do not pair up")
        if record.rounds:
            conn.execute(
                rounds.insert(),
                [
                    {
                        "run_id": run_id,
                        "round": times.round,
                        "started_at": times.started_at,
                        "ended_at": times.ended_at,
                        "committed_at": times.committed_at,
                        "raw_json": raw,
                    }
                    for times, raw in zip(record.rounds, record.raw_outputs, strict=True)
                ],
            )
        if record.results:
            conn.execute(
                schema.results.insert(),
                [rows.stored_result_row(run_id, r) for r in record.results],
            )
        packed = series_rows(run_id, record.series)
        if packed:
            conn.execute(schema.series.insert(), packed)
        if record.stalls:
            conn.execute(schema.stalls.insert(), [rows.stall_row(run_id, s) for s in record.stalls])
        if record.trace:
            conn.execute(schema.traces.insert(), trace_rows(run_id, record.trace))
        return run_id

    def add_round(
        self,
        run_id: int,
        round_no: int,
        raw_json: str,
        results: Sequence[TestResult],
        workloads: Mapping[str, StoredWorkload],
        *,
        started_at: str | None = None,
        ended_at: str | None = None,
        series: Sequence[LogSeries] = (),
    ) -> None:
        """Store one round in one transaction: fio's raw JSON verbatim, one result row
        per test and active direction (``workloads`` maps test name to its workload
        description), and fio's per-second ``series`` of the round (packed,
        :mod:`volbench.store.series`; their own ``round`` must be ``round_no``).
        Committed when this returns. Times outside fio's lifetime are not kept, an end
        before the start is the start (:func:`volbench.store.admission.round_times`).
        """
        new_rows = [
            row
            for test in results
            for row in rows.result_rows(
                run_id, round_no, test, workloads.get(test.name, StoredWorkload())
            )
        ]
        if any(s.round != round_no for s in series):
            raise ValueError(f"series of another round given with round {round_no}")
        admission.results(new_rows)
        admission.series(series)
        started_at, ended_at = admission.round_times(
            rows.optional_timestamp(started_at), rows.optional_timestamp(ended_at)
        )
        packed = series_rows(run_id, series)
        with self._begin(write=True) as conn:
            found = conn.execute(_ADMIT_ROUND, {"run_id": run_id, "round_no": round_no}).first()
            if found is None:
                raise StoreError(f"no run {run_id} in {self.url} (see volbench runs)")
            status = RunStatus(found.status)
            if status is not RunStatus.RUNNING:
                raise StoreError(f"run {run_id} is {status}: cannot add round {round_no}")
            if found.stored:
                raise StoreError(f"round {round_no} of run {run_id} is already stored")
            conn.execute(
                _INSERT_ROUND,
                {
                    "run_id": run_id,
                    "round": round_no,
                    "started_at": started_at,
                    "ended_at": ended_at,
                    "raw_json": raw_json,
                    "committed_at": rows.now(),
                },
            )
            if new_rows:
                conn.execute(_INSERT_RESULTS, new_rows)
            if packed:
                conn.execute(_INSERT_SERIES, packed)

    def add_stalls(self, run_id: int, found: Sequence[Stall]) -> None:
        """Store the stalls seen in a run (committed when this returns; any run status)."""
        if not found:
            return
        admission.stalls(found)
        with self._begin(write=True) as conn:
            self._status(conn, run_id)
            conn.execute(schema.stalls.insert(), [rows.stall_row(run_id, s) for s in found])

    def finish_run(
        self,
        run_id: int,
        status: RunStatus,
        error: str | None = None,
        *,
        ended_at: str | None = None,
    ) -> None:
        """Mark a running run completed, failed or interrupted (with an error message).
        ``ended_at`` (default now) outside fio's lifetime is a StoreError; before the
        run's start, it is the start (:func:`volbench.store.admission.ended_at`)."""
        status = RunStatus(status)
        if status is RunStatus.RUNNING:
            raise ValueError("finish_run needs a final status, not running")
        ended = rows.timestamp(ended_at)
        admission.time(ended, f"run {run_id}'s end (this machine's clock?)")
        with self._begin(write=True) as conn:
            current = self._status(conn, run_id)
            if current is not RunStatus.RUNNING:
                raise StoreError(f"run {run_id} is already {current}")
            started = conn.execute(sa.select(runs.c.started_at).where(runs.c.id == run_id))
            conn.execute(
                runs.update()
                .where(runs.c.id == run_id)
                .values(
                    status=status.value,
                    error=admission.message(error),
                    ended_at=admission.ended_at(started.scalar_one(), ended),
                )
            )

    def reopen_run(self, run_id: int) -> None:
        """Set an interrupted or failed run back to ``running`` (for ``volbench resume``).

        A run still marked running (its process died) stays so; a completed run
        cannot be reopened.
        """
        with self._begin(write=True) as conn:
            if self._status(conn, run_id) is RunStatus.COMPLETED:
                raise StoreError(f"run {run_id} is completed: nothing to resume")
            conn.execute(
                runs.update()
                .where(runs.c.id == run_id)
                .values(
                    status=RunStatus.RUNNING.value,
                    error=None,
                    ended_at=None,
                    owner=owner.current().text(),
                    heartbeat_at=rows.timestamp(None),
                )
            )

    def retarget_run(self, run_id: int, target: Any) -> None:
        """Record ``target`` (a :class:`TargetInfo`) as the target of a run that is not
        completed: ``volbench resume --same-volume``, the user's word that the volume
        re-attached under a new device number or diskseq is the one the run started on."""
        with self._begin(write=True) as conn:
            if self._status(conn, run_id) is RunStatus.COMPLETED:
                raise StoreError(f"run {run_id} is completed: its target stays as measured")
            conn.execute(
                runs.update().where(runs.c.id == run_id).values(target=rows.as_dict(target))
            )

    def heartbeat(self, run_id: int) -> None:
        """Refresh the heartbeat of a run this process owns (:mod:`volbench.store.owner`).
        An in-memory store (one connection, shared) has no other reader: nothing to do."""
        if isinstance(self._engine.pool, StaticPool):
            return
        with self._begin(write=True) as conn:
            conn.execute(
                runs.update()
                .where(runs.c.id == run_id, runs.c.owner == owner.current().text())
                .values(heartbeat_at=rows.timestamp(None))
            )

    def add_trace(self, run_id: int, parts: Sequence[TracePart]) -> None:
        """Store a capture run's trace (:mod:`volbench.store.traces`), all parts at once."""
        if parts:
            with self._begin(write=True) as conn:
                conn.execute(schema.traces.insert(), trace_rows(run_id, parts))

    def set_labels(
        self, ref: str | int, labels: Mapping[str, str], remove: Sequence[str] = ()
    ) -> int:
        """Set (add or replace) ``labels`` on a run and remove the keys ``remove``."""
        table = schema.labels
        admission.labels(labels)
        with self._begin(write=True) as conn:
            run_id = self._resolve(conn, ref)
            keys = [*labels, *remove]
            if keys:
                conn.execute(table.delete().where(table.c.run_id == run_id, table.c.key.in_(keys)))
            if labels:
                conn.execute(
                    table.insert(),
                    [{"run_id": run_id, "key": k, "value": v} for k, v in labels.items()],
                )
        return run_id

    def delete_run(self, ref: str | int) -> int:
        """Delete a run with its labels, rounds, results, series and stalls; return its id."""
        with self._begin(write=True) as conn:
            run_id = self._resolve(conn, ref)
            conn.execute(runs.delete().where(runs.c.id == run_id))
        return run_id
