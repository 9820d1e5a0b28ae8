"""The result store's tables (SQLAlchemy Core), at the latest schema version.

Eight tables:

- ``runs``: one row per run of a plan; target, host and settings as JSON;
  ``started_at``/``ended_at`` are ISO-8601 UTC text (``2024-05-01T12:00:00+00:00``),
  which sorts chronologically as text on every backend.
- ``labels``: the run's ``key=value`` labels, indexed for filtering.
- ``rounds``: one row per committed round, with fio's raw JSON output stored
  verbatim so any result can be re-analysed later.
- ``results``: one normalised row per run, round, test and direction (the fields of
  :class:`volbench.model.StoredResult`).
- ``stalls`` (version 3): spans of zero I/O completions seen while a round ran
  (:class:`volbench.model.Stall`); not tied to a stored round, since a round stopped
  by a stall may leave no fio output to store.
- ``series`` (version 5): fio's per-second logs of each round, one row per test, kind
  of log and direction with every job's log in it (:class:`volbench.model.LogSeries`
  is one job's): ``test`` the logs' name, ``kind`` ``iops`` (I/O per second), ``bw``
  (KiB/s) or ``lat``/``clat``/``slat`` (ns), ``host`` the host fio's client got them
  from, ``samples`` the number of points of all jobs, ``data`` each job's number and
  points (time in ms, value as fio wrote it) packed and compressed
  (:mod:`volbench.store.series`).
- ``traces`` (version 7): the block I/O trace of a ``capture`` run, one row per part
  of at most 262,144 requests (``first_ns`` its first issue time, ``ios`` how many,
  ``data`` the packed columns: :mod:`volbench.trace.codec`, :mod:`volbench.store.traces`).
- ``schema_version``: one row per applied migration; the highest is the version.

Version 4 gives ``runs`` its ``owner`` (host, boot, pid of the process running it)
and ``heartbeat_at``, so a run whose process died shows as interrupted. Version 6
gives it ``uuid`` (unique): the run's identity in every store, kept when a bundle
moves it to another (:mod:`volbench.store.bundle`).

Deleting a run cascades to its labels, rounds, results, series, stalls and traces
(SQLite needs ``PRAGMA foreign_keys=ON`` on every connection; the repository sets it).

Text columns are as long as :mod:`volbench.store.limits` bounds their values (a name
200 characters, a label key 200 and value 1,000, a place 255), the bounds every write
and every reader of outside input checks: a change of one is a change of the schema.

Every change here needs a numbered migration in :mod:`volbench.store.migrations`;
``tests/unit/test_migrations.py`` checks that a migrated database matches these
definitions.
"""

from __future__ import annotations

import sqlalchemy as sa

from volbench.store.limits import (
    HOSTNAME_CHARS,
    LABEL_KEY_CHARS,
    LABEL_VALUE_CHARS,
    NAME_CHARS,
)

metadata = sa.MetaData()

# SQLite only auto-increments an INTEGER PRIMARY KEY; PostgreSQL gets a BIGINT identity.
_BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

runs = sa.Table(
    "runs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("plan", sa.String(NAME_CHARS), nullable=False),
    sa.Column("status", sa.String(20), nullable=False),
    sa.Column("started_at", sa.String(40), nullable=False),
    sa.Column("ended_at", sa.String(40), nullable=True),
    sa.Column("target", sa.JSON, nullable=False),
    sa.Column("host", sa.JSON, nullable=False),
    sa.Column("settings", sa.JSON, nullable=False),
    sa.Column("error", sa.Text, nullable=True),
    sa.Column("non_compliant", sa.Boolean, nullable=False, default=False),
    # version 4: the process running the run and its last sign of life (store/owner.py)
    sa.Column("owner", sa.String(300), nullable=True),
    sa.Column("heartbeat_at", sa.String(40), nullable=True),
    # version 6: the run's identity in every store (bundles, store/bundle.py); NOT NULL
    # on PostgreSQL; SQLite cannot add a NOT NULL column to a filled table without a
    # default, and every run is written with one (Store.create_run, Store.import_runs)
    sa.Column("uuid", sa.String(36), nullable=False),
)

labels = sa.Table(
    "labels",
    metadata,
    sa.Column(
        "run_id",
        sa.Integer,
        sa.ForeignKey("runs.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("key", sa.String(LABEL_KEY_CHARS), primary_key=True),
    sa.Column("value", sa.String(LABEL_VALUE_CHARS), nullable=False),
)

rounds = sa.Table(
    "rounds",
    metadata,
    sa.Column(
        "run_id",
        sa.Integer,
        sa.ForeignKey("runs.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    sa.Column("round", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("started_at", sa.String(40), nullable=True),
    sa.Column("ended_at", sa.String(40), nullable=True),
    sa.Column("raw_json", sa.Text, nullable=False),
    sa.Column("committed_at", sa.String(40), nullable=False),
)

results = sa.Table(
    "results",
    metadata,
    sa.Column("id", _BigId, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.Integer, nullable=False),
    sa.Column("round", sa.Integer, nullable=False),
    sa.Column("test", sa.String(NAME_CHARS), nullable=False),
    sa.Column("direction", sa.String(10), nullable=False),
    sa.Column("workload", sa.JSON, nullable=False),
    sa.Column("iops", sa.Double, nullable=False),
    sa.Column("bw_bytes_per_s", sa.Double, nullable=False),
    sa.Column("io_bytes", sa.BigInteger, nullable=False),
    sa.Column("runtime_ms", sa.Double, nullable=False),
    sa.Column("lat_kind", sa.String(10), nullable=True),
    sa.Column("lat_mean_ns", sa.Double, nullable=True),
    sa.Column("lat_min_ns", sa.Double, nullable=True),
    sa.Column("lat_max_ns", sa.Double, nullable=True),
    sa.Column("lat_stddev_ns", sa.Double, nullable=True),
    sa.Column("lat_p50_ns", sa.Double, nullable=True),
    sa.Column("lat_p90_ns", sa.Double, nullable=True),
    sa.Column("lat_p99_ns", sa.Double, nullable=True),
    sa.Column("lat_p999_ns", sa.Double, nullable=True),
    sa.Column("lat_p9999_ns", sa.Double, nullable=True),
    sa.Column("usr_cpu_pct", sa.Double, nullable=False),
    sa.Column("sys_cpu_pct", sa.Double, nullable=False),
    sa.Column("jobs", sa.Integer, nullable=False),
    sa.Column("hostname", sa.String(HOSTNAME_CHARS), nullable=True),
    sa.Column("lat_total_mean_ns", sa.Double, nullable=True),  # version 8
    sa.Column("error", sa.Integer, nullable=True),  # version 9
    sa.ForeignKeyConstraint(
        ["run_id", "round"],
        ["rounds.run_id", "rounds.round"],
        ondelete="CASCADE",
        name="fk_results_round",
    ),
)

stalls = sa.Table(
    "stalls",
    metadata,
    sa.Column("id", _BigId, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    sa.Column("round", sa.Integer, nullable=False),
    sa.Column("test", sa.String(NAME_CHARS), nullable=False),
    sa.Column("started_at", sa.String(40), nullable=False),
    sa.Column("ended_at", sa.String(40), nullable=False),
    sa.Column("seconds", sa.Double, nullable=False),
    sa.Column("resolved", sa.Boolean, nullable=False),
    sa.Column("test_offset_s", sa.Double, nullable=True),
)

series = sa.Table(
    "series",
    metadata,
    sa.Column("id", _BigId, primary_key=True, autoincrement=True),
    sa.Column("run_id", sa.Integer, nullable=False),
    sa.Column("round", sa.Integer, nullable=False),
    sa.Column("test", sa.String(NAME_CHARS), nullable=False),
    sa.Column("kind", sa.String(10), nullable=False),
    sa.Column("host", sa.String(HOSTNAME_CHARS), nullable=True),
    sa.Column("direction", sa.String(10), nullable=False),
    sa.Column("samples", sa.Integer, nullable=False),
    sa.Column("data", sa.LargeBinary, nullable=False),
    sa.ForeignKeyConstraint(
        ["run_id", "round"],
        ["rounds.run_id", "rounds.round"],
        ondelete="CASCADE",
        name="fk_series_round",
    ),
)

traces = sa.Table(
    "traces",
    metadata,
    sa.Column("run_id", sa.Integer, sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("part", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("first_ns", sa.BigInteger, nullable=False),
    sa.Column("ios", sa.Integer, nullable=False),
    sa.Column("data", sa.LargeBinary, nullable=False),
)

schema_version = sa.Table(
    "schema_version",
    metadata,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("description", sa.String(200), nullable=False),
    sa.Column("applied_at", sa.String(40), nullable=False),
)

# Indexes, named so that migrations can create exactly the ones of their version.
ix_labels_key_value = sa.Index("ix_labels_key_value", labels.c.key, labels.c.value)
ix_results_run_round = sa.Index("ix_results_run_round", results.c.run_id, results.c.round)
# Version 2: runs by start time (lists and ``latest`` go by id since: run_queries.py).
ix_runs_started_at = sa.Index("ix_runs_started_at", runs.c.started_at)
# Version 3: a run's stalls.
ix_stalls_run = sa.Index("ix_stalls_run", stalls.c.run_id)
# Version 5: a run's series, by round.
ix_series_run_round = sa.Index("ix_series_run_round", series.c.run_id, series.c.round)
# Version 6: one run per UUID (a bundle imported twice adds its runs once).
ix_runs_uuid = sa.Index("ix_runs_uuid", runs.c.uuid, unique=True)

#: The result columns that hold one percentile each, keyed by fio's percentile.
PERCENTILE_COLUMNS: dict[float, str] = {
    50.0: "lat_p50_ns",
    90.0: "lat_p90_ns",
    99.0: "lat_p99_ns",
    99.9: "lat_p999_ns",
    99.99: "lat_p9999_ns",
}
