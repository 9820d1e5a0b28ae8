"""Run bundles: whole stored runs in one file, to move them between stores.

``volbench export RUN... -o FILE.vbundle`` writes one (:func:`dump`), ``volbench import
FILE.vbundle`` reads it (:func:`load`) and :meth:`volbench.store.repository.Store.import_runs`
stores it. A bundle is one JSON document (RFC 8259, UTF-8, no NaN or infinities),
gzip-compressed (RFC 1952)::

    {"schema": "volbench.bundle", "version": 1, "created_at": TIME, "created_by": "volbench V",
     "runs": [RUN, ...]}

and each RUN holds everything the store keeps of it (all times ISO 8601 UTC text):

- ``uuid`` (its identity in every store), ``id`` (its number in the store it came
  from; a store it is imported into gives it its own), ``plan``, ``status``
  (``completed``, ``failed`` or ``interrupted``), ``started_at``, ``ended_at``,
  ``target``, ``host``, ``labels``, ``settings`` (JSON objects as stored), ``error``,
  ``non_compliant``;
- ``rounds``: per committed round ``round``, ``started_at``, ``ended_at``,
  ``committed_at`` and ``fio_output`` (fio's JSON verbatim);
- ``results``: the result rows (:class:`volbench.model.StoredResult`: every field,
  ``workload`` as its stored record);
- ``stalls``: :class:`volbench.model.Stall`, every field;
- ``series``: fio's per-second logs, one entry per job's log and direction: ``round``,
  ``test``, ``kind`` (``iops`` I/O per second, ``bw`` KiB/s, ``lat``/``clat``/``slat``
  ns), ``job``, ``host``, ``direction`` and ``points``, ``[time in ms, value]`` as fio
  wrote them;
- ``trace`` (a ``capture`` run's block I/O trace): its parts as stored, ``first_ns``,
  ``ios`` and ``data`` (the packed part, :mod:`volbench.trace.codec`, in base64).

A run's owner and heartbeat (which process runs it, on which machine) stay behind:
a bundle holds finished runs only. Reading is strict (:func:`load`): anything a
store would not hold, a figure the run's own fio output contradicts
(:mod:`volbench.store.bundle_figures`), or a version this code does not know, is
refused with one line (:class:`BundleError`) that names the file, where in it and
what to do, before anything is stored. A bundle is read as a stream, expanding to at
most :data:`MAX_EXPANDED_BYTES`.
"""

from __future__ import annotations

import base64
import dataclasses
import gzip
import io
import json
import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from volbench import __version__
from volbench.errors import UsageError
from volbench.model import LogSeries, RunRecord, RunStatus, TracePart
from volbench.records import RecordError, json_object
from volbench.store import rows
from volbench.store.bundle_figures import check_figures
from volbench.store.bundle_reader import Reader
from volbench.store.bundle_values import AGAIN, BundleError, kind, no_constant, shown
from volbench.store.repository import Store

__all__ = [
    "SCHEMA",
    "SUFFIX",
    "VERSION",
    "BundleError",
    "Received",
    "dump",
    "import_bundle",
    "load",
]

SCHEMA = "volbench.bundle"
VERSION = 1
SUFFIX = ".vbundle"
"""The file name ending that makes ``volbench export -o`` write a bundle."""

MAX_EXPANDED_BYTES = 1 << 30
"""The most a bundle may expand to (1 GiB of JSON; a 25-round PTS run with its
per-second series is 131 MB, BENCHMARKS.md): more is refused as soon as it is read.
Reading takes several times this in memory (Python's objects of the document)."""

CHUNK_BYTES = 1 << 20
"""How much of a bundle is read (and expanded) at a time."""

_FEWER = "export fewer runs per bundle"

_GZIP_MAGIC = b"\x1f\x8b"
_VOLBENCH_DOCUMENT = re.compile(rb'\A\s*\{\s*"schema"\s*:\s*"(volbench\.[^"\\]{0,100})"')
# --- writing


def dump(runs: Sequence[RunRecord]) -> bytes:
    """The bundle of ``runs`` (each read with its raw outputs and series). UsageError
    for a run still running, or one holding a number JSON cannot carry."""
    texts = []
    for run in runs:
        if run.status is RunStatus.RUNNING:
            raise UsageError(f"run {run.id} is still running: export it once it has ended")
        if not run.uuid or len(run.raw_outputs) != len(run.rounds):
            raise ValueError(f"run {run.id} was not read whole from a store")
        try:
            texts.append(_compact(run_document(run)))
        except ValueError:
            raise UsageError(
                f"run {run.id} holds a NaN or infinite number, which a bundle (JSON) cannot"
                " carry: export its results with --format csv instead"
            ) from None
    head = {
        "schema": SCHEMA,
        "version": VERSION,
        "created_at": rows.now(),
        "created_by": f"volbench {__version__}",
    }
    text = _compact(head)[:-1] + ',"runs":[' + ",".join(texts) + "]}\n"
    return gzip.compress(text.encode("utf-8"), compresslevel=6, mtime=0)


def run_document(run: RunRecord) -> dict[str, Any]:
    """One run as a bundle holds it (the module docstring lists the fields)."""
    return {
        "uuid": run.uuid,
        "id": run.id,
        "plan": run.plan,
        "status": run.status.value,
        "started_at": run.started_at,
        "ended_at": run.ended_at,
        "target": json_object(run.target),
        "host": json_object(run.host),
        "labels": run.labels,
        "settings": run.settings.record(),
        "error": run.error,
        "non_compliant": run.non_compliant,
        "rounds": [
            {**dataclasses.asdict(times), "fio_output": raw}
            for times, raw in zip(run.rounds, run.raw_outputs, strict=True)
        ],
        "results": [
            {**dataclasses.asdict(r), "workload": r.workload.record()} for r in run.results
        ],
        "stalls": [dataclasses.asdict(s) for s in run.stalls],
        "series": [_series(s) for s in run.series],
        **({"trace": [_trace_part(p) for p in run.trace]} if run.trace else {}),
    }


def _trace_part(part: TracePart) -> dict[str, Any]:
    data = base64.b64encode(part.data).decode()
    return {"first_ns": part.first_ns, "ios": part.ios, "data": data}


def _series(series: LogSeries) -> dict[str, Any]:
    """One job's log as a bundle holds it (as ``dataclasses.asdict`` would, without
    copying every point: a long PTS run has millions)."""
    return {f.name: getattr(series, f.name) for f in dataclasses.fields(series)}


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


# --- recognising and reading


@dataclasses.dataclass(frozen=True)
class Received:
    """One run ``volbench import`` gave a store: its id there and whether it was added
    (else the store had it already: ``had`` is then that run's status and number of
    rounds there); ``bundled`` the run as its bundle holds it (None: fio output)."""

    run_id: int
    added: bool
    bundled: RunRecord | None = None
    had: tuple[RunStatus, int] | None = None


def import_bundle(
    store: Store,
    path: Path,
    labels: Mapping[str, str],
    check: Callable[[RunRecord], object] = lambda run: None,
) -> list[Received]:
    """Store the runs of the bundle file ``path`` (:func:`read`, each then checked by
    ``check``: the plan's own options, :func:`volbench.plans.kinds.check_setup`;
    then :meth:`Store.import_runs`: all or none; ``labels`` set on the runs added),
    each once: a run whose UUID the store has already is not added again."""
    runs = read(path)
    reader = Reader(str(path))
    for i, run in enumerate(runs):
        try:
            check(run)
        except RecordError as error:
            reader.damaged(f"runs[{i}].settings ({run.plan})", error.problem)
    received = []
    for run, (run_id, added) in zip(runs, store.import_runs(runs, labels), strict=True):
        had = None
        if not added:
            had = (store.get_run(run_id, raw=False).status, store.round_count(run_id))
        received.append(Received(run_id, added, run, had))
    return received


def recognise(path: Path) -> bool:
    """Whether ``path`` is for the bundle reader: gzip-compressed (fio writes no such
    thing), or JSON that names a volbench schema first (a bundle decompressed, or a
    document ``show``/``export --format json`` printed, which :func:`load` explains)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return head.startswith(_GZIP_MAGIC) or _VOLBENCH_DOCUMENT.match(head) is not None


def read(path: Path) -> tuple[RunRecord, ...]:
    """The runs of the bundle file ``path`` (:func:`load`), read as a stream: the file
    is never held whole, its expanded text at most :data:`MAX_EXPANDED_BYTES`."""
    reader = Reader(str(path))
    try:
        with path.open("rb") as handle:
            text = _expand(reader, handle)
    except OSError as exc:
        raise BundleError(f"cannot import {path}: {exc.strerror or exc}") from None
    return _runs(reader, text)


def load(data: bytes, name: str) -> tuple[RunRecord, ...]:
    """The runs of a bundle (gzip-compressed or not), checked whole: BundleError naming
    ``name``, the place in the document and what to do for anything a bundle written
    by :func:`dump` cannot hold. Each run's ``id`` is the one it had where it was
    exported; times are normalised as the store writes them."""
    reader = Reader(name)
    return _runs(reader, _expand(reader, io.BufferedReader(io.BytesIO(data))))


def _runs(reader: Reader, text: bytearray) -> tuple[RunRecord, ...]:
    """The checked runs of a bundle's expanded text (see :func:`load`)."""
    try:
        document = _document(reader, text)
        runs = reader.items(document, "runs", "")
        if not runs:
            reader.fail("runs", f"is empty: the bundle holds no runs ({AGAIN})")
        found = tuple(reader.run(run, f"runs[{i}]") for i, run in enumerate(runs))
        for i, run in enumerate(found):
            check_figures(reader, run, f"runs[{i}]")
    except MemoryError:
        reader.fail("", f"is more than this machine's memory lets volbench read: {_FEWER}")
    seen: dict[str, int] = {}
    for index, run in enumerate(found):
        if run.uuid in seen:
            reader.damaged(f"runs[{index}].uuid", f"{run.uuid} is also runs[{seen[run.uuid]}]'s")
        seen[run.uuid] = index
    return found


def _document(reader: Reader, text: bytearray) -> dict[str, Any]:
    """The checked top of a bundle document (schema, version), from its text."""
    match = _VOLBENCH_DOCUMENT.match(text[:4096])
    schema = match.group(1).decode("utf-8", "replace") if match else None
    if schema is not None and schema != SCHEMA:
        reader.fail(
            "",
            f"is a volbench document of schema {schema!r} (what show or export --format"
            " json print, for reading), not a bundle: to move runs, export them with"
            " `volbench export RUN... -o FILE.vbundle` and import that",
        )
    try:
        document = json.loads(text.decode("utf-8"), parse_constant=no_constant)
    except UnicodeDecodeError as exc:
        reader.damaged("", f"is not UTF-8 text at byte {exc.start}")
    except json.JSONDecodeError as exc:
        reader.damaged("", f"is not valid JSON at line {exc.lineno} column {exc.colno}")
    except ValueError as exc:  # NaN/Infinity, or an integer of more than 4300 digits
        reader.damaged("", f"holds a number JSON does not allow: {exc}")
    except RecursionError:
        reader.damaged("", "nests arrays or objects deeper than a bundle does")
    if not isinstance(document, dict):
        reader.damaged("", f"holds {kind(document)}, not a bundle object")
    if document.get("schema") != SCHEMA:
        reader.fail(
            "",
            f"is not a volbench bundle (its schema is {shown(document.get('schema'))},"
            f" not {SCHEMA!r}): import fio's own output uncompressed, or a bundle"
            " written by `volbench export RUN... -o FILE.vbundle`",
        )
    version = document.get("version")
    if type(version) is not int or version < 1:
        reader.damaged("version", f"is {shown(version)}, not a bundle version")
    if version > VERSION:
        reader.fail(
            "",
            f"is a bundle of version {version}, this volbench reads up to version"
            f" {VERSION}: upgrade volbench to import it",
        )
    reader.keys(document, "", {"schema", "version", "runs"}, {"created_at", "created_by"})
    return document


def _expand(reader: Reader, handle: io.BufferedReader) -> bytearray:
    """A bundle's JSON text from ``handle`` (gunzipped when it is gzip), read
    :data:`CHUNK_BYTES` at a time: more than :data:`MAX_EXPANDED_BYTES` is refused
    as soon as it is seen, and no buffer larger than what was read is asked for."""
    packed = handle.peek(len(_GZIP_MAGIC))[: len(_GZIP_MAGIC)] == _GZIP_MAGIC
    stream: io.BufferedIOBase = gzip.GzipFile(fileobj=handle) if packed else handle
    text = bytearray()
    try:
        while chunk := stream.read(CHUNK_BYTES):
            if len(text) + len(chunk) > MAX_EXPANDED_BYTES:
                _too_big(reader)
            text += chunk
    except EOFError:
        reader.fail("", f"is truncated (it ends inside its gzip stream): copy it again, or {AGAIN}")
    except (gzip.BadGzipFile, zlib.error) as exc:
        reader.fail("", f"is damaged (gzip: {exc}): copy it again, or {AGAIN}")
    except OSError as exc:
        if not packed:
            raise  # reading the file itself failed: the caller names why
        reader.fail("", f"is damaged (gzip: {exc}): copy it again, or {AGAIN}")
    except MemoryError:
        reader.fail("", f"is more than this machine's memory lets volbench read: {_FEWER}")
    return text


def _too_big(reader: Reader) -> NoReturn:
    reader.fail(
        "",
        f"expands to more than {MAX_EXPANDED_BYTES >> 20} MiB, more than volbench reads"
        f" at once: {_FEWER}",
    )
