"""Numbered schema migrations for the result store.

The schema is versioned by a short list of numbered steps, each a function of an
open connection. :func:`upgrade` applies the missing ones in order, all in one
transaction (SQLite and PostgreSQL both have transactional DDL), and records each
step in ``schema_version``; the highest recorded version is the database's version.
We deliberately do not pull in Alembic: a handful of numbered steps on two backends
does not need a migration framework, its configuration files or its CLI.

Rules for adding a step:

- Append ``Migration(N + 1, "what it does", function)``; never edit an applied step.
- Change :mod:`volbench.store.schema` to the new shape as well; the tests check
  that a migrated database matches it.
- Migration 1 builds its five tables from the current definitions in ``schema``
  (columns and constraints, no indexes); a later table is created by its own step.
  A step that adds or changes a *column* must first give migration 1 a frozen copy
  of the version-1 table it changes.

Concurrent openers are serialised: PostgreSQL takes a transaction-scoped advisory
lock, SQLite begins the transaction with ``BEGIN IMMEDIATE`` (see
:data:`SQLITE_BEGIN_OPTION`), and the version is read again under the lock.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from volbench.errors import StoreError
from volbench.store import log_folders, schema

#: Connection execution option read by the repository's SQLite ``begin`` hook:
#: its value ("IMMEDIATE", "EXCLUSIVE") is put after ``BEGIN``.
SQLITE_BEGIN_OPTION = "volbench_sqlite_begin"

_PG_LOCK_KEY = 0x766F6C62  # "volb": serialises concurrent upgrades on one server


@dataclass(frozen=True)
class Migration:
    """One numbered schema step."""

    version: int
    description: str
    apply: Callable[[Connection], None]


_V1 = sa.MetaData()
"""The tables as version 1 made them (foreign keys resolve among them)."""

_RUNS_V1 = sa.Table(
    "runs",
    _V1,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("plan", sa.String(200), nullable=False),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("started_at", sa.String(40), nullable=False),
    sa.Column("ended_at", sa.String(40), nullable=True),
    sa.Column("target", sa.JSON, nullable=False),
    sa.Column("host", sa.JSON, nullable=False),
    sa.Column("settings", sa.JSON, nullable=False),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("non_compliant", sa.Boolean, nullable=False, default=False),
)
"""The runs table as version 1 made it (version 4 adds columns)."""

_RESULTS_V1 = sa.Table(
    "results",
    _V1,
    *(c._copy() for c in schema.results.columns if c.name not in ("lat_total_mean_ns", "error")),
    sa.ForeignKeyConstraint(
        ["run_id", "round"],
        ["rounds.run_id", "rounds.round"],
        ondelete="CASCADE",
        name="fk_results_round",
    ),
)
"""The results table as version 1 made it (version 8 adds lat_total_mean_ns, 9 error)."""

_V1_TABLES = (
    _RUNS_V1,
    schema.labels.to_metadata(_V1),
    schema.rounds.to_metadata(_V1),
    _RESULTS_V1,
    schema.schema_version.to_metadata(_V1),
)


def _create_v1(conn: Connection) -> None:
    """Version 1: runs, labels, rounds, results, schema_version and their indexes."""
    for table in _V1_TABLES:
        conn.execute(sa.schema.CreateTable(table))
    for index in (schema.ix_labels_key_value, schema.ix_results_run_round):
        conn.execute(sa.schema.CreateIndex(index))


def _index_started_at(conn: Connection) -> None:
    """Version 2: an index on runs.started_at for newest-first listing and ``latest``."""
    conn.execute(sa.schema.CreateIndex(schema.ix_runs_started_at))


def _create_stalls(conn: Connection) -> None:
    """Version 3: the stalls table (zero-completion spans of a run) and its index."""
    conn.execute(sa.schema.CreateTable(schema.stalls))
    conn.execute(sa.schema.CreateIndex(schema.ix_stalls_run))


def _add_owner(conn: Connection) -> None:
    """Version 4: runs.owner and runs.heartbeat_at (:mod:`volbench.store.owner`)."""
    for column in (schema.runs.c.owner, schema.runs.c.heartbeat_at):
        kind = column.type.compile(dialect=conn.dialect)
        conn.execute(sa.text(f"ALTER TABLE runs ADD COLUMN {column.name} {kind}"))


def _create_series(conn: Connection) -> None:
    """Version 5: the series table (fio's per-second logs of each round) and its index,
    filled from the logs of stored runs still on disk (:mod:`volbench.store.log_folders`)."""
    conn.execute(sa.schema.CreateTable(schema.series))
    conn.execute(sa.schema.CreateIndex(schema.ix_series_run_round))
    log_folders.fill_series(conn)


_RUNS_V6 = sa.Table(
    "runs",
    sa.MetaData(),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("uuid", sa.String(36), nullable=True),
)
"""The columns of runs that version 6 reads and fills, as it knew them."""
_IX_RUNS_UUID_V6 = sa.Index("ix_runs_uuid", _RUNS_V6.c.uuid, unique=True)


def _add_uuid(conn: Connection) -> None:
    """Version 6: runs.uuid, a fresh random UUID for every stored run (NOT NULL on
    PostgreSQL), and a unique index on it: a run's identity across stores (bundles)."""
    conn.execute(sa.text("ALTER TABLE runs ADD COLUMN uuid VARCHAR(36)"))
    ids = conn.execute(sa.select(_RUNS_V6.c.id).order_by(_RUNS_V6.c.id)).scalars().all()
    if ids:
        conn.execute(
            _RUNS_V6.update()
            .where(_RUNS_V6.c.id == sa.bindparam("run_id"))
            .values(uuid=sa.bindparam("run_uuid")),
            [{"run_id": run_id, "run_uuid": str(uuid.uuid4())} for run_id in ids],
        )
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("ALTER TABLE runs ALTER COLUMN uuid SET NOT NULL"))
    conn.execute(sa.schema.CreateIndex(_IX_RUNS_UUID_V6))


def _create_traces(conn: Connection) -> None:
    """Version 7: the traces table (block I/O traces of capture runs, store/traces.py)."""
    conn.execute(sa.schema.CreateTable(schema.traces))


def _add_total_latency(conn: Connection) -> None:
    """Version 8: results.lat_total_mean_ns, fio's mean total latency whichever latency
    kind a row reports (Little's law needs it). Rows of kind ``lat`` already hold it;
    older rows of kind ``clat`` (imported outputs) have none until imported again."""
    conn.execute(sa.text("ALTER TABLE results ADD COLUMN lat_total_mean_ns DOUBLE PRECISION"))
    conn.execute(
        sa.text("UPDATE results SET lat_total_mean_ns = lat_mean_ns WHERE lat_kind = 'lat'")
    )


def _add_job_error(conn: Connection) -> None:
    """Version 9: results.error, fio's error of the test's jobs (0: none). Rows stored
    before have none recorded (NULL) until imported again: their run's message says
    why a run that stopped on an error failed."""
    conn.execute(sa.text("ALTER TABLE results ADD COLUMN error INTEGER"))


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "create runs, labels, rounds, results", _create_v1),
    Migration(2, "index runs.started_at", _index_started_at),
    Migration(3, "create stalls", _create_stalls),
    Migration(4, "runs.owner and runs.heartbeat_at", _add_owner),
    Migration(5, "create series, filled from the runs' log folders", _create_series),
    Migration(6, "runs.uuid, a new one for each stored run", _add_uuid),
    Migration(7, "create traces", _create_traces),
    Migration(8, "results.lat_total_mean_ns, from the stored raw outputs", _add_total_latency),
    Migration(9, "results.error, fio's error of a test's jobs", _add_job_error),
)

#: The newest schema version this volbench knows.
LATEST_VERSION = MIGRATIONS[-1].version


def current_version(conn: Connection, name: str = "") -> int:
    """The schema version of the database behind ``conn``; 0 for an empty database.

    Raises :class:`StoreError` when the volbench tables exist without a version,
    i.e. the database was not made by volbench.
    """
    inspector = sa.inspect(conn)
    if not inspector.has_table(schema.schema_version.name):
        if inspector.has_table(schema.runs.name):
            raise StoreError(
                f"database {name or conn.engine.url} has a runs table but no schema_version:"
                " not a volbench result store"
            )
        return 0
    version = conn.execute(sa.select(sa.func.max(schema.schema_version.c.version))).scalar()
    return int(version or 0)


def check_known(version: int, name: str) -> None:
    """Refuse a database whose schema is newer than this volbench knows."""
    if version > LATEST_VERSION:
        raise StoreError(
            f"database {name} has schema version {version}, this volbench knows up to"
            f" {LATEST_VERSION}: upgrade volbench"
        )


def upgrade(engine: Engine, *, target: int | None = None, name: str | None = None) -> int:
    """Bring the database to ``target`` (default: the latest) and return its version.

    All missing steps run in one transaction: either all of them are applied or
    none. ``name`` is how error messages call the database (default: its URL with
    the password hidden). A database newer than this code raises StoreError; one
    already at or past ``target`` is left alone.
    """
    goal = LATEST_VERSION if target is None else target
    if not 0 <= goal <= LATEST_VERSION:
        raise ValueError(f"schema version {goal} is not between 0 and {LATEST_VERSION}")
    display = name or engine.url.render_as_string(hide_password=True)
    with engine.connect() as plain:
        conn = plain.execution_options(**{SQLITE_BEGIN_OPTION: "IMMEDIATE"})
        with conn.begin():
            if conn.dialect.name == "postgresql":
                conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_PG_LOCK_KEY)))
            version = current_version(conn, display)
            check_known(version, display)
            for step in MIGRATIONS:
                if version < step.version <= goal:
                    step.apply(conn)
                    conn.execute(
                        schema.schema_version.insert().values(
                            version=step.version,
                            description=step.description,
                            applied_at=datetime.now(UTC).isoformat(timespec="seconds"),
                        )
                    )
                    version = step.version
    return version
