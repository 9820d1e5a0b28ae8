"""Where the result store lives and how to connect to it.

A store location is a plain file path, ``sqlite:///FILE`` or
``postgresql://USER[:PASSWORD]@HOST[:PORT]/DB`` (served by psycopg 3); what looks
like database settings but is neither (a libpq keyword string ``host=H
password=P dbname=D``, a URL without its ``//``, ``USER:PASSWORD@HOST`` without a
scheme) is refused without being shown, not taken as a file name. Without
one, ``$VOLBENCH_DB`` is used, else ``volbench.db`` in the user's data directory
(created if missing). Every failure to connect is a one-line
:class:`~volbench.errors.StoreError` that ends with how to choose another store.

Commands that only read open with ``create=False``: a store that does not exist is
then an error and nothing is created (no file, no folder, no tables). No message
shows a password: URLs are shown masked, and every error raised here has the
location's passwords (as typed, also from a URL too malformed to parse) replaced by
``***`` (:func:`redact`), whatever the database driver put in its text.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from enum import Enum
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import platformdirs
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import StaticPool

from volbench import output_file
from volbench.errors import StoreError, UsageError
from volbench.store.migrations import SQLITE_BEGIN_OPTION

ENV_VAR = "VOLBENCH_DB"
_HINT = "(set --db or VOLBENCH_DB)"
_MISSING_HINT = "(a run creates it; check --db or VOLBENCH_DB)"
_MASK = "***"
_PG_CONNECT_TIMEOUT_S = 10
_SQLITE_BUSY_TIMEOUT_S = 30.0
_SQLITE_BEGIN_MODES = frozenset({"", "DEFERRED", "IMMEDIATE", "EXCLUSIVE"})
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_KEYWORDS = re.compile(r"(?:\A|\s)[A-Za-z_][A-Za-z0-9_]*\s*=|(?i:password\s*=)")
"""libpq's ``keyword=value`` settings (libpq "Connection Strings"): a pair at the start
or after a blank, or a password anywhere."""
_ALMOST_URL = re.compile(r"(?i)(?:postgres(?:ql)?|sqlite)[a-z0-9+]*:(?!//)|[^/\s:@]+:[^/\s@]*@")
"""A database URL without its ``//`` (``postgresql:/h/db``), or its ``USER:PASSWORD@``
without the scheme before it."""


def default_data_dir() -> Path:
    """volbench's directory in the user's data directory (not created here); refused
    in one line when it would be on the filesystem of devices (``XDG_DATA_HOME=/dev``)."""
    return output_file.check_folder(
        Path(platformdirs.user_data_dir("volbench")), "volbench's data folder (XDG_DATA_HOME)"
    )


def default_path() -> Path:
    """The default SQLite file: ``volbench.db`` in :func:`default_data_dir`."""
    return default_data_dir() / "volbench.db"


def location(url: str | None) -> str:
    """The store location as the user gave it (``--db``, else ``$VOLBENCH_DB``), "" for
    the default."""
    return url or os.environ.get(ENV_VAR) or ""


def resolve_url(url: str | None, create: bool = True) -> sa.URL:
    """The SQLAlchemy URL for a store location (see the module docstring); the default
    location's folder is made only when ``create``."""
    text = location(url) or None
    if text is None:
        path = default_path()
        try:
            if create:
                path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot open result store {path}: {exc.strerror} {_HINT}") from exc
        return sa.URL.create("sqlite", database=str(path))
    _check_form(text)
    if "://" not in text:
        return sa.URL.create("sqlite", database=str(Path(text).expanduser().absolute()))
    try:
        parsed = sa.make_url(text)
    except (sa.exc.ArgumentError, ValueError):
        raise StoreError(
            f"cannot open result store {_mask(text)}: not a database URL"
            " (use a file path, sqlite:///FILE or postgresql://USER@HOST/DB)"
        ) from None
    if "@" in (parsed.host or ""):  # "USER:PA@SS@HOST": the host would show "SS@HOST"
        raise StoreError(
            f"cannot open result store {parsed.drivername}://*** (not shown): its user name"
            " or password holds an '@': write it as %40 (postgresql://USER:PASS%40WORD@HOST/DB)"
        )
    backend = parsed.drivername.partition("+")[0]
    if backend in ("postgresql", "postgres"):
        if parsed.drivername not in ("postgresql", "postgres", "postgresql+psycopg"):
            raise StoreError(
                f"cannot open result store {_mask(text)}: volbench talks to PostgreSQL"
                " through psycopg 3 (write postgresql://USER@HOST/DB)"
            )
        return parsed.set(drivername="postgresql+psycopg")
    if parsed.drivername in ("sqlite", "sqlite+pysqlite"):
        return parsed
    raise StoreError(
        f"cannot open result store {_mask(text)}: volbench keeps results in SQLite or"
        " PostgreSQL (use a file path, sqlite:///FILE or postgresql://USER@HOST/DB)"
    )


def _check_form(text: str) -> None:
    """StoreError, without ``text`` (it may hold a password), unless a store location
    is a URL or looks like a file path: a libpq keyword string or a URL missing part of
    its form would otherwise be a SQLite file named after it, printed and created."""
    if _URL.match(text):
        return
    if _KEYWORDS.search(text):
        raise StoreError(
            "cannot open result store: a libpq keyword string (KEY=VALUE ..., not shown) is"
            " no store location: give postgresql://USER:PASSWORD@HOST:PORT/DB, sqlite:///FILE"
            f" or a file path {_HINT}"
        )
    if _ALMOST_URL.match(text):
        raise StoreError(
            "cannot open result store: a database URL without its scheme or '//' (not shown):"
            " give postgresql://USER:PASSWORD@HOST:PORT/DB, sqlite:///FILE or a file path"
            f" {_HINT}"
        )


def display_url(url: sa.URL) -> str:
    """A URL as users write it, with the password masked (also a ``password=`` query
    parameter, which libpq takes as well)."""
    if url.get_backend_name() == "postgresql":
        url = url.set(drivername="postgresql")
    shown = url.render_as_string(hide_password=True)
    return re.sub(r"([?&]password=)[^&]*", rf"\g<1>{_MASK}", shown)


def redact(message: str, where: str) -> str:
    """``message`` with every password of the store location ``where`` (as typed)
    replaced by ``***``: the text between ``USER:`` and the last ``@`` of a URL (a
    password may hold an unescaped ``/`` or ``@``), ``password=`` query values, and
    those values percent-decoded."""
    found: set[str] = set()
    _, sep, rest = where.partition("://")
    if sep and "@" in rest:
        credentials = rest.rpartition("@")[0]
        found.add(credentials.partition(":")[2])
    found.update(re.findall(r"(?i)password=([^&#]*)", rest))
    found |= {unquote(secret) for secret in found}
    for secret in sorted((s for s in found if s), key=len, reverse=True):
        message = message.replace(secret, _MASK)
    return message


def connect(url: str | None, create: bool = True) -> Engine:
    """An engine for the store at ``url`` whose database has answered once.

    SQLite connections enforce foreign keys and run DDL inside transactions;
    PostgreSQL connections are checked before use (runs can idle for hours
    between rounds) and give up connecting after 10 s. Without ``create``, a SQLite
    file that does not exist is a StoreError and nothing is created. Error messages
    never hold the location's password (:func:`redact`).
    """
    try:
        return _connect(url, create)
    except StoreError as exc:
        raise StoreError(redact(str(exc), location(url))) from None


def _connect(url: str | None, create: bool) -> Engine:
    sa_url = resolve_url(url, create)
    shown = display_url(sa_url)
    serializer = partial(json.dumps, default=_jsonable, ensure_ascii=False)
    try:
        if sa_url.get_backend_name() == "sqlite":
            engine = _sqlite_engine(sa_url, serializer, create)
        else:
            args: dict[str, Any] = {}
            if "connect_timeout" not in sa_url.query:
                args["connect_timeout"] = _PG_CONNECT_TIMEOUT_S
            engine = sa.create_engine(
                sa_url, json_serializer=serializer, pool_pre_ping=True, connect_args=args
            )
    except (sa.exc.SQLAlchemyError, ImportError, ValueError, TypeError) as exc:
        raise StoreError(f"cannot open result store {shown}: {one_line(exc)} {_HINT}") from exc
    try:
        with engine.connect():
            pass
    except sa.exc.DBAPIError as exc:
        engine.dispose()
        raise StoreError(f"cannot open result store {shown}: {one_line(exc)} {_HINT}") from exc
    return engine


def one_line(exc: BaseException) -> str:
    """The gist of a database error in one line, e.g. ``connection refused``."""
    orig = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(orig).splitlines() if line.strip()]
    text = lines[0] if lines else type(orig).__name__
    if "failed: " in text:  # psycopg: 'connection to server at "h", port 1 failed: X'
        text = text.rsplit("failed: ", 1)[1]
    text = re.sub(r"^(FATAL|ERROR):\s+", "", text)
    text = re.sub(r"\s+", " ", text)
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def _sqlite_engine(url: sa.URL, serializer: Any, create: bool = True) -> Engine:
    memory = url.database in (None, "", ":memory:")
    if not memory:
        path = Path(str(url.database)).expanduser().absolute()
        if not create and not path.exists():
            raise StoreError(f"no result store at {path} {_MISSING_HINT}")
        if not path.parent.is_dir():
            raise StoreError(
                f"cannot open result store {display_url(url)}: no directory {path.parent} {_HINT}"
            )
        try:
            output_file.check_resolved(path, "the result store")
        except UsageError as exc:
            raise StoreError(f"{exc} {_HINT}") from None
    engine = sa.create_engine(
        url,
        json_serializer=serializer,
        # the pool hands a connection to one thread at a time (the run's heartbeat
        # thread borrows one too): pysqlite's own same-thread check must not refuse it
        connect_args={"timeout": _SQLITE_BUSY_TIMEOUT_S, "check_same_thread": False},
        poolclass=StaticPool if memory else None,
    )
    event.listen(engine, "connect", _sqlite_on_connect)
    event.listen(engine, "begin", _sqlite_on_begin)
    return engine


def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    """Enforce foreign keys; stop pysqlite from managing transactions itself, so
    that DDL runs inside our transactions (SQLAlchemy's documented recipe)."""
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _sqlite_on_begin(conn: Connection) -> None:
    """Emit BEGIN ourselves, as ``BEGIN IMMEDIATE`` when the connection asks for it."""
    mode = str(conn.get_execution_options().get(SQLITE_BEGIN_OPTION, "")).upper()
    if mode not in _SQLITE_BEGIN_MODES:
        raise ValueError(f"unknown SQLite BEGIN mode {mode!r}")
    conn.exec_driver_sql(f"BEGIN {mode}".rstrip())


def _jsonable(value: Any) -> Any:
    """JSON form of values ``json`` does not know: dataclasses, enums, sets, paths."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot store {type(value).__name__} as JSON: {value!r}")


def _mask(text: str) -> str:
    """A URL that SQLAlchemy could not parse, its passwords hidden (:func:`redact`)."""
    return redact(text, text)
