"""Captured workloads as runs: trace a device (or import a blkparse capture) and store
it as a run of plan ``capture``, find one by its name, read its trace back.

A capture is stored once it has ended (in about a second, whatever its size); a
capture cut short by Ctrl-C is stored as ``interrupted`` with everything traced
until then. Its name is the label ``workload=NAME`` (``volbench label`` renames it),
so ``volbench workload NAME`` and ``volbench run replay --workload NAME`` find the
capture of that name added last; a run id or ``latest`` works too.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from volbench.analysis.workload_fit import fit, workload_record
from volbench.analysis.workload_profile import characterise
from volbench.errors import FioError, StoreError, UsageError, VolbenchError
from volbench.fio.executable import fio_version
from volbench.model import RunRecord, RunSettings, RunStatus, TargetInfo
from volbench.records import json_object
from volbench.store.repository import Store
from volbench.targets.host import collect_host
from volbench.targets.target import inspect
from volbench.trace import blkparse_text, codec
from volbench.trace.capture import Captured, Tick, capture
from volbench.trace.clock import MAX_SPAN_S
from volbench.trace.events import IoTrace

NAME = "capture"
LABEL = "workload"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}\Z")


def check_name(name: str) -> str:
    """A workload name: letters, digits, ``-``, ``_`` and ``.`` (it names files too)."""
    if not _NAME.match(name):
        raise UsageError(
            f"invalid workload name {name!r}: use letters, digits, -, _ and . (up to 100)"
        )
    return name


def default_name(device: str) -> str:
    """``loop0-20240501T120000``: the device's name and the time."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    return f"{Path(device).name}-{stamp}"


@dataclass(frozen=True)
class StoredCapture:
    run_id: int
    name: str
    status: RunStatus
    ios: int
    message: str | None


@dataclass(frozen=True)
class CaptureDetails:
    """How a capture was taken: its name, the device (``MAJ,MIN`` for an import) and
    its numbers, the method (``blktrace``, ``ftrace`` or ``blkparse import``), the
    seconds traced, whether it was cut short, and an imported file's name."""

    name: str
    device: str
    major: int
    minor: int
    method: str
    duration_s: float
    interrupted: bool = False
    source: str | None = None


@dataclass(frozen=True)
class CaptureSetup:
    """What a capture run records in its settings (:attr:`RunSettings.options`): how
    it was taken, what its trace holds besides the requests, and its workload profile
    with the fitted job (the document :func:`volbench.analysis.workload_fit.workload_record`
    writes and ``volbench workload`` shows)."""

    capture: CaptureDetails
    trace: codec.TraceMeta
    profile: Mapping[str, Any]


def _store(
    store: Store,
    target: TargetInfo | dict[str, Any],
    trace: IoTrace,
    labels: Mapping[str, str],
    details: CaptureDetails,
    started_at: str | None,
    status: RunStatus,
    message: str | None,
) -> int:
    """Store a trace as a finished capture run; nothing is left when that fails."""
    profile = characterise(trace)
    setup = CaptureSetup(details, codec.trace_meta(trace), workload_record(profile, fit(profile)))
    settings = RunSettings(options=json_object(setup))
    name = details.name
    try:
        version = fio_version()
    except FioError:  # a capture needs no fio
        version = ""
    host = collect_host(version)
    run_id = store.create_run(
        NAME, target, host, {**labels, LABEL: name}, settings, started_at=started_at
    )
    try:
        store.add_trace(run_id, codec.pack(trace))
        store.finish_run(run_id, status, message)
    except BaseException:
        with contextlib.suppress(VolbenchError):
            store.delete_run(run_id)
        raise
    return run_id


def _message(captured: Captured) -> str | None:
    notes = []
    if captured.interrupted:
        notes.append(f"ended by the user after {captured.duration_s:.1f} s")
    if captured.trace.lost:
        notes.append(
            f"the kernel dropped {captured.trace.lost} events (its trace buffer was full):"
            " shares are of what was traced"
        )
    if captured.note:
        notes.append(f"traced with the block tracepoints: {captured.note}")
    return "; ".join(notes) or None


def capture_device(
    store: Store,
    device: str,
    duration_s: float,
    name: str,
    labels: Mapping[str, str],
    scratch: Path,
    tick: Tick | None = None,
) -> StoredCapture:
    """Trace ``device`` for ``duration_s`` and store it as capture ``name``; a
    :class:`UsageError` before tracing when the capture would be longer than a trace
    may span (:data:`~volbench.trace.clock.MAX_SPAN_S`)."""
    check_name(name)
    if duration_s > MAX_SPAN_S:
        raise UsageError(
            f"a capture lasts at most {MAX_SPAN_S:,} s (7 days), not {duration_s:,.0f} s:"
            " capture in parts"
        )
    target = inspect(device)  # sysfs only: the device is not opened
    captured = capture(device, duration_s, scratch, tick)
    details = CaptureDetails(
        name,
        device,
        captured.major,
        captured.minor,
        captured.method,
        round(captured.duration_s, 3),
        captured.interrupted,
    )
    status = RunStatus.INTERRUPTED if captured.interrupted else RunStatus.COMPLETED
    message = _message(captured)
    run_id = _store(
        store, target, captured.trace, labels, details, captured.started_at, status, message
    )
    return StoredCapture(run_id, name, status, len(captured.trace), message)


def recognise(path: Path) -> bool:
    """Whether ``path`` holds blkparse's default text output (its first lines are events)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return blkparse_text.recognise(head.decode("utf-8", "replace"))


def import_blkparse(
    store: Store, path: Path, labels: Mapping[str, str], name: str | None = None
) -> StoredCapture:
    """Store blkparse's default text output in ``path`` as a capture (named after the
    file unless ``name``): UsageError when it holds no block I/O events."""
    name = check_name(name or re.sub(r"[^A-Za-z0-9_.-]", "-", path.stem).lstrip("-._") or "import")
    try:
        with path.open(errors="replace") as lines:
            found = blkparse_text.events_by_device(lines)
    except OSError as exc:
        raise UsageError(f"cannot import {path}: {exc.strerror or exc}") from None
    device = blkparse_text.pick_device(found, str(path))
    others = ", ".join(f"{a},{b}" for a, b in sorted(found) if (a, b) != device)
    trace = blkparse_text.build(found.pop(device))
    found.clear()  # the events, read into the trace: their memory is the profile's
    notes = [f"imported from blkparse output {path.name}"]
    if others:
        notes.append(f"the file also traces {others}: kept {device[0]},{device[1]}")
    details = CaptureDetails(
        name,
        f"{device[0]},{device[1]}",
        device[0],
        device[1],
        "blkparse import",
        round(trace.duration_ns / 1e9, 3),
        source=path.name,
    )
    target = {"path": f"{device[0]},{device[1]}", "kind": "block", "capacity_bytes": 0}
    message = "; ".join(notes)
    run_id = _store(store, target, trace, labels, details, None, RunStatus.COMPLETED, message)
    return StoredCapture(run_id, name, RunStatus.COMPLETED, len(trace), message)


def find_capture(store: Store, ref: str) -> RunRecord:
    """The capture ``ref`` names: the one of that name added last, else a run id or
    ``latest`` (the capture added last)."""
    named = store.list_runs(labels={LABEL: ref}, plan=NAME, limit=1)
    if named:
        return store.get_run(named[0].id, raw=False)
    if ref.strip().lower() == "latest":
        newest = store.list_runs(plan=NAME, limit=1)
        if not newest:
            raise StoreError("no captured workloads yet (volbench capture --device /dev/X)")
        return store.get_run(newest[0].id, raw=False)
    try:
        run = store.get_run(int(ref), raw=False)
    except (ValueError, StoreError):
        raise StoreError(
            f"no captured workload {ref!r} (see volbench runs --plan capture)"
        ) from None
    if run.plan != NAME:
        raise StoreError(f"run {run.id} is a {run.plan} run, not a captured workload")
    return run


def load_trace(store: Store, run: RunRecord) -> IoTrace:
    """The trace of capture run ``run``."""
    found = run if run.trace else store.get_run(run.id)
    return codec.unpack(found.trace, run.setup(CaptureSetup).trace)


def workload_name(run: RunRecord) -> str:
    """The name a capture run was stored with."""
    return run.labels.get(LABEL) or run.setup(CaptureSetup).capture.name
