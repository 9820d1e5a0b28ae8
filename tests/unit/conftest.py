"""Fixtures of the unit tests: the recorded fio outputs in tests/fixtures/fio."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from recorded import FIO_FIXTURES


@pytest.fixture(scope="session")
def status_stream() -> str:
    """fio's stdout with ``--status-interval=1`` (see the fixtures README, command 8)."""
    return (FIO_FIXTURES / "status_interval_stream.out").read_text()


@pytest.fixture(scope="session")
def status_documents(status_stream: str) -> list[dict[str, Any]]:
    """The stream's JSON documents, decoded one after another with ``raw_decode``
    (independently of volbench's DocumentSplitter)."""
    decoder = json.JSONDecoder()
    documents = []
    start = status_stream.find("{")
    while start >= 0:
        document, end = decoder.raw_decode(status_stream, start)
        documents.append(document)
        start = status_stream.find("{", end)
    return documents


# --- result store backends: SQLite always, PostgreSQL when VOLBENCH_TEST_PG_URL is set

PG_URL = os.environ.get("VOLBENCH_TEST_PG_URL", "")

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param(
        "postgresql",
        id="postgresql",
        marks=[
            pytest.mark.postgres,
            pytest.mark.skipif(not PG_URL, reason="VOLBENCH_TEST_PG_URL is not set"),
        ],
    ),
]


@contextmanager
def scratch_pg_database(server_url: str) -> Iterator[str]:
    """A new, empty database on the test server; dropped afterwards."""
    admin_url = sa.make_url(server_url).set(drivername="postgresql+psycopg")
    admin = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    name = f"volbench_test_{uuid.uuid4().hex[:12]}"
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        yield admin_url.set(database=name).render_as_string(hide_password=False)
        with admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        admin.dispose()


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A store location: a plain SQLite file path, or a scratch PostgreSQL database."""
    if request.param == "sqlite":
        yield str(tmp_path / "results.db")
    else:
        with scratch_pg_database(PG_URL) as url:
            yield url


@pytest.fixture
def other_db_url(db_url: str, tmp_path: Path) -> Iterator[str]:
    """A second, empty store on ``db_url``'s database: another SQLite file, or another
    scratch PostgreSQL database (for moving runs between two stores)."""
    if db_url.startswith("postgresql"):
        with scratch_pg_database(PG_URL) as url:
            yield url
    else:
        yield str(tmp_path / "other.db")
