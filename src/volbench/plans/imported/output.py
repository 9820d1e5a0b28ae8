"""What one imported fio output states, taken from the file and nothing else.

* Tests: fio's entries grouped as :func:`volbench.analysis.aggregate.group_tests` does;
  a job name that several reporting groups use is told apart as ``NAME-gGROUP``.
  Output of several servers is stored like a run on several places at once: the
  aggregate of every test and each place's share (:func:`place_tests`). A place is a
  server: its host, and its port where two servers share a host. An output holding
  only fio's "All clients" entry (the hosts' entries trimmed away) gives that entry.
* fio's "All clients" entry: where the hosts' entries merged give no percentiles (plain
  ``json``: no bins to merge) and fio's entry covers the same I/Os (equal I/O and byte
  counts per direction), the aggregate's latency is fio's (fio >= 3.x prints its
  percentiles, from the summed histograms).
* Workloads (:func:`volbench.fio.options.workload_record`): each entry's job options
  over its server's and the global options; a field is stated for a test when all its
  entries state the same, and ``rw`` only when the directions fio reports fit it (with
  ``group_reporting`` fio echoes the first job's options for a whole group).
* Target: the files (``filename``, else ``directory``) and the largest ``size`` the
  options state, the devices fio reports (``disk_util``); ioengine(s) as stated. A list
  of files, devices, hosts or engines is kept to ``TEXT_CHARS`` (65,536 characters,
  :mod:`volbench.store.limits`): those that fit, then ``...(N more)``.
* Text: names and places within what the store keeps (``NAME_CHARS``,
  ``HOSTNAME_CHARS``), with ``-gGROUP`` and ``:PORT``; else a ParseError.
* Times (:func:`times`): fio's own, never the import's where the file states one;
  within fio's lifetime and in order, else a ParseError naming the field.
* Notes, stored with the run and printed: where the output yields no result, and why;
  each test whose jobs fio reports an error in (its ``error``, an errno, with fio's own
  words where the text around the JSON has them: :func:`fio_error_texts`), whether they
  did I/O first (their figures are stored, with the error) or none.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from volbench.analysis.aggregate import group_tests, merge_jobs, place_tests
from volbench.errors import ParseError
from volbench.fio.document import LONG_LONG_MAX
from volbench.fio.job_text import opened_file
from volbench.fio.options import workload_record
from volbench.fio.parser import client_key
from volbench.model import (
    DirectionResult,
    FioOutput,
    HostInfo,
    JobResult,
    PlaceRecord,
    RunSettings,
    StoredWorkload,
    TargetInfo,
    TestResult,
)
from volbench.plans.imported.times import times
from volbench.store.limits import (
    HOSTNAME_CHARS,
    NAME_CHARS,
    TEXT_CHARS,
    joined,
)

ALL_CLIENTS = "all-clients"
"""Test name of the aggregate over every host (fio's "All clients")."""

_DIRECTIONS_OF = {
    "read": {"read"},
    "randread": {"read"},
    "write": {"write"},
    "randwrite": {"write"},
    "trim": {"trim"},
    "randtrim": {"trim"},
    "rw": {"read", "write"},
    "randrw": {"read", "write"},
    "trimwrite": {"trim", "write"},
    "randtrimwrite": {"trim", "write"},
}
"""The directions each ``rw`` pattern moves data in."""


@dataclasses.dataclass(frozen=True)
class ImportedOutput:
    """Everything one fio output states, as volbench stores it."""

    tests: list[TestResult]
    workloads: dict[str, StoredWorkload]
    target: TargetInfo
    host: HostInfo
    settings: RunSettings
    started_at: str | None
    ended_at: str | None
    notes: list[str]


def options_of(output: FioOutput, job: JobResult) -> dict[str, str]:
    """The options ``job`` ran with as fio echoed them: its own over its server's
    (fio >= 3.39, several servers) over the global ones."""
    server = output.client_options.get(client_key(job.hostname, job.port), {})
    return {**output.global_options, **server, **job.options}


def _distinct_names(jobs: Sequence[JobResult]) -> list[JobResult]:
    """Jobs whose name several reporting groups use renamed ``NAME-gGROUP``; a name
    that would then be longer than the store keeps (``NAME_CHARS``) is a ParseError."""
    groups: dict[str, set[int]] = {}
    for job in jobs:
        groups.setdefault(job.name, set()).add(job.groupid)
    named = []
    for job in jobs:
        if len(groups[job.name]) > 1:
            job = dataclasses.replace(job, name=f"{job.name}-g{job.groupid}")
            if len(job.name) > NAME_CHARS:
                raise ParseError(
                    f"job name {job.name[:40]!r}... of {len(job.name):,} characters with its"
                    f" group (-g{job.groupid}), more than the store keeps ({NAME_CHARS})"
                )
        named.append(job)
    return named


def _places(jobs: Sequence[JobResult]) -> dict[tuple[str | None, int | None], str]:
    """Each server's place label: its host, or ``HOST:PORT`` where servers share a host;
    one longer than the store keeps (``HOSTNAME_CHARS``) is a ParseError."""
    servers = list(dict.fromkeys((j.hostname, j.port) for j in jobs if j.hostname))
    hosts = [host for host, _ in servers]
    labels: dict[tuple[str | None, int | None], str] = {
        (host, port): host if hosts.count(host) == 1 or port is None else f"{host}:{port}"
        for host, port in servers
    }
    for label in labels.values():
        if len(label) > HOSTNAME_CHARS:
            raise ParseError(
                f"server {label[:40]!r}... (host and port) is {len(label):,} characters"
                f" long, more than the store keeps for a place ({HOSTNAME_CHARS})"
            )
    return labels


def _common(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The fields every record states with the same value."""
    records = list(records)
    first = records[0] if records else {}
    return {k: v for k, v in first.items() if all(r.get(k) == v for r in records[1:])}


def _fits(rw: str | None, directions: Iterable[DirectionResult]) -> bool:
    """Whether the directions fio reports I/O in are ones ``rw`` moves data in."""
    moved = {d.direction for d in directions if d.active}
    allowed = _DIRECTIONS_OF.get(rw or "")
    return allowed is None or "mixed" in moved or moved <= allowed


def _workloads(
    output: FioOutput,
    members: dict[str, list[JobResult]],
    tests: Sequence[TestResult],
    places: int,
) -> dict[str, StoredWorkload]:
    """Each test's workload: what the options of all its entries (``members``, by test
    name) state alike (see the module docstring); ``places`` on the aggregate of a run
    on several places."""
    workloads: dict[str, StoredWorkload] = {}
    for test in tests:
        jobs = members.get(test.name, [])
        record = _common(_storable(workload_record(test.name, options_of(output, j))) for j in jobs)
        record["name"] = test.name
        if not _fits(record.get("rw"), test.directions.values()):
            record.pop("rw", None)
        if test.hostname is None and places > 1:
            record["places"] = places
        workloads.setdefault(test.name, StoredWorkload.from_record(record))
    return workloads


def _storable(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` (a job's workload from its options) without the whole numbers beyond
    the store's signed 64 bits (fio reads sizes up to 2^64 - 1, SQLite and PostgreSQL
    keep 2^63 - 1): such a value is not stated, as any option value volbench cannot
    read (:mod:`volbench.fio.options`)."""

    def fits(value: Any) -> bool:
        if isinstance(value, list):
            return all(fits(item) for item in value)
        return type(value) is not int or value <= LONG_LONG_MAX

    return {key: value for key, value in record.items() if fits(value)}


def _all_clients_latency(test: TestResult, fio_all: Sequence[JobResult]) -> TestResult:
    """``test`` with fio's "All clients" latency where its own has no percentiles and
    fio's entry covers exactly its I/Os (see the module docstring)."""
    for entry in fio_all:
        if set(entry.directions) != set(test.directions) or not all(
            _same_ios(mine, entry.directions[name]) for name, mine in test.directions.items()
        ):
            continue
        directions = {}
        for name, mine in test.directions.items():
            theirs = entry.directions[name]
            own = mine.latency
            if theirs.latency is None or (own is not None and own.percentiles_ns):
                directions[name] = mine
            elif own is None or own.kind == theirs.latency.kind:
                directions[name] = dataclasses.replace(
                    mine, latency=theirs.latency, lat_mean_ns=theirs.lat_mean_ns
                )
            else:
                directions[name] = mine
        return dataclasses.replace(test, directions=directions)
    return test


def _same_ios(mine: DirectionResult, theirs: DirectionResult) -> bool:
    return mine.io_bytes == theirs.io_bytes and mine.total_ios == theirs.total_ios


def _tests(
    output: FioOutput, jobs: list[JobResult], places: int
) -> tuple[list[TestResult], dict[str, list[JobResult]]]:
    """The tests of the output (see the module docstring) and, by test name, the fio
    entries each merges."""
    members: dict[str, list[JobResult]] = {}
    for job in jobs:
        members.setdefault(job.name, []).append(job)
    if not jobs:  # only fio's "All clients": its own figures are the results
        tests = [  # its hostname and port are the last server's: no place
            dataclasses.replace(merge_jobs(e.name, [e]), hostname=None)
            for e in _all_clients_named(output)
        ]
        return tests, members
    placed = dataclasses.replace(output, jobs=tuple(jobs))
    if places <= 1:
        return group_tests(placed), members
    aggregates = place_tests(placed)[0]
    groups: dict[int, list[JobResult]] = {}
    for job in jobs:
        groups.setdefault(job.groupid, []).append(job)
    for gid, group in groups.items():  # one job file per host: fio's "All clients"
        if output.all_clients and len({j.name for j in group}) > 1:
            name = ALL_CLIENTS if len(groups) == 1 else f"{ALL_CLIENTS}-g{gid}"
            aggregates.append(dataclasses.replace(merge_jobs(name, group), hostname=None))
            members[name] = group
    aggregates = [_all_clients_latency(t, output.all_clients) for t in aggregates]
    return [*aggregates, *group_tests(placed)], members


def read_output(
    output: FioOutput, source: Path, said: Mapping[int, str] | None = None
) -> ImportedOutput:
    """Everything ``output`` (read from ``source``) states; see the module docstring.
    ``said``: fio's words for its error numbers, from the text around the JSON
    (:func:`fio_error_texts`)."""
    labels = _places(output.jobs)
    named = _distinct_names(output.jobs)
    placed = [
        dataclasses.replace(j, hostname=labels.get((j.hostname, j.port), j.hostname)) for j in named
    ]
    places = list(dict.fromkeys(labels.values()))
    tests, members = _tests(output, placed, len(places))
    originals = {id(p): n for p, n in zip(placed, named, strict=True)}  # fio's hostnames
    members = {name: [originals[id(j)] for j in jobs] for name, jobs in members.items()}
    workloads = _workloads(output, members, tests, len(places))
    options = [options_of(output, job) for job in output.jobs] or [
        {**output.global_options, **o} for o in output.client_options.values() or [{}]
    ]
    if not output.jobs:  # fio's "All clients" alone: what the global options state
        record = _common(_storable(workload_record(ALL_CLIENTS, o)) for o in options)
        for test in tests:
            fitting = {**record, "name": test.name}
            if not _fits(fitting.get("rw"), test.directions.values()):
                fitting.pop("rw", None)
            workloads[test.name] = StoredWorkload.from_record(fitting)
    engines = sorted({o["ioengine"] for o in options if o.get("ioengine")})
    started, ended, how = times(output)
    settings = RunSettings(
        ioengine=joined(engines, TEXT_CHARS, ", ") or None,
        places=tuple(PlaceRecord(p, p) for p in places) if len(places) > 1 else (),
        options={
            "source": str(source),
            "jobs": len(output.jobs),
            "clients": len(output.all_clients),
            "times": how,
        },
    )
    return ImportedOutput(
        tests=tests,
        workloads=workloads,
        target=_target(output, options, workloads.values(), source),
        host=_host(output, places),
        settings=settings,
        started_at=started,
        ended_at=ended,
        notes=_notes(output, tests, named, said or {}),
    )


def _target(
    output: FioOutput,
    options: Sequence[dict[str, str]],
    workloads: Iterable[StoredWorkload],
    source: Path,
) -> TargetInfo:
    """The files the options name (``filename``, in ``directory`` when relative), else
    the directories; the largest ``size`` they state (0: none states one in bytes);
    the devices fio reports."""
    files = sorted({_file(o) for o in options if o.get("filename")})
    folders = sorted({o["directory"] for o in options if o.get("directory")})
    path = joined(files or folders) or f"(from {source.name})"
    sizes = [w.size_bytes for w in workloads if w.size_bytes]
    devices = list(dict.fromkeys(d.name for d in output.disk_util if d.name))
    return TargetInfo(
        path=path,
        kind="imported",
        capacity_bytes=max(sizes, default=0),
        device=joined(devices) or None,
    )


def _file(options: dict[str, str]) -> str:
    """The file fio opened (:func:`~volbench.fio.job_text.opened_file`), prefixed with
    ``directory`` when relative (fio HOWTO)."""
    name, folder = opened_file(options) or options["filename"], options.get("directory")
    return f"{folder.rstrip('/')}/{name}" if folder and not name.startswith("/") else name


def _host(output: FioOutput, places: Sequence[str]) -> HostInfo:
    return HostInfo(
        hostname=joined(places) or "unknown",
        cpu_count=0,
        cpu_model="unknown",
        memory_bytes=0,
        kernel="unknown",
        fio_version=output.fio_version,
    )


_FIO_ERROR = re.compile(r"err=\s*(\d+)\s*[/(]file:[^,]*, func=[^,]*, error=([^)\r\n]+)")
"""fio's error line (``fio: pid=8281, err=84/file:io_u.c:2141, func=io_u_queued_complete,
error=Invalid or incomplete multibyte or wide character``) and its job line in the
normal output (``err= 5 (file:io_u.c:2008, func=io_u error, error=Input/output
error)``): the errno and fio's words for it (strerror on the machine fio ran on)."""


def fio_error_texts(text: str) -> dict[int, str]:
    """fio's words for each error number its text outside the JSON gives (the first
    said of each): what fio printed beside the job's ``error``."""
    found: dict[int, str] = {}
    for match in _FIO_ERROR.finditer(text):
        found.setdefault(int(match.group(1)), match.group(2).strip()[:200])
    return found


def _error_notes(
    jobs: Sequence[JobResult], tests: Sequence[TestResult], said: Mapping[int, str]
) -> list[str]:
    """A note per test whose entries fio reports an error in: with its figures (what
    they measured until the error) or without any (they did no I/O)."""
    by_test: dict[str, list[JobResult]] = {}
    for job in jobs:
        by_test.setdefault(job.name, []).append(job)
    measured = {t.name for t in tests if any(d.active for d in t.directions.values())}
    notes = []
    for name, entries in by_test.items():
        errors = list(dict.fromkeys(j.error for j in entries if j.error))
        if not errors:
            continue
        words = "; ".join(f"{e} ({said[e]})" if e in said else str(e) for e in errors)
        failed = sum(1 for j in entries if j.error)
        who = f"{name!r}" if len(entries) == 1 else f"{name!r}: {failed} of its {len(entries)} jobs"
        if name in measured:
            notes.append(
                f"warning: {who} ended with fio error {words}; its figures are what fio"
                " measured until then"
            )
        else:
            notes.append(f"warning: {who} ended with fio error {words} before any I/O: no result")
    return notes


def _notes(
    output: FioOutput,
    tests: Sequence[TestResult],
    jobs: Sequence[JobResult],
    said: Mapping[int, str],
) -> list[str]:
    """What the user must be told about the output (stored with the run, printed)."""
    notes = []
    if not output.jobs and output.all_clients:
        notes.append(
            "the output holds only fio's 'All clients' entry: its figures are the results,"
            " no host's own"
        )
    if not any(d.active for t in tests for d in t.directions.values()):
        entries = [*output.jobs, *output.all_clients]
        errors = [f"{j.name!r} ended with error {j.error}" for j in entries if j.error]
        why = (
            "; ".join(errors)
            if errors
            else "it lists no job"
            if not entries
            else "no job moved any data (fio printed zero I/O)"
        )
        notes.append(f"warning: no result in this fio output: {why}")
    else:
        notes += _error_notes(jobs or _all_clients_named(output), tests, said)
    return notes


def _all_clients_named(output: FioOutput) -> list[JobResult]:
    """fio's "All clients" entries named as the tests they give alone (:func:`_tests`)."""
    gids = {entry.groupid for entry in output.all_clients}
    return [
        dataclasses.replace(
            e, name=ALL_CLIENTS if len(gids) == 1 else f"{ALL_CLIENTS}-g{e.groupid}"
        )
        for e in output.all_clients
    ]
