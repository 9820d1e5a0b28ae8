"""Reading a bundle's runs back, strictly (:mod:`volbench.store.bundle` has the format).

:class:`Reader` checks every value of a bundle's run against what a store can hold
and volbench can have written (types, ranges of the store's columns, finite numbers,
text a database keeps, rounds that exist, known fields only) and builds the
:class:`~volbench.model.RunRecord` the store will give back. The first value that
fails is a :class:`BundleError`: one line naming the file, the JSON path and what
to do.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import math
import uuid
from collections.abc import Callable, Collection, Mapping
from typing import Any, NoReturn, TypeVar

from volbench.errors import StoreError, UsageError
from volbench.model import (
    DIRECTIONS,
    HostInfo,
    LogSeries,
    RoundTimes,
    RunRecord,
    RunSettings,
    RunStatus,
    Stall,
    StoredResult,
    StoredWorkload,
    TargetInfo,
    TracePart,
)
from volbench.records import RecordError
from volbench.store import rows
from volbench.trace.codec import unpack_part

T = TypeVar("T")

AGAIN = "export the runs again with `volbench export RUN... -o FILE.vbundle`"
_DAMAGED = f"the bundle is damaged or was changed after volbench wrote it: {AGAIN}"
_INT32 = 2**31 - 1
_INT64 = 2**63 - 1
_UINT32 = 2**32 - 1
_MAX_NESTING = 64
_FINISHED = {s.value for s in RunStatus if s is not RunStatus.RUNNING}
_RESULT_FIELDS = tuple(f.name for f in dataclasses.fields(StoredResult))


class BundleError(UsageError):
    """A file that cannot be imported as a bundle (exit 2), in one line."""


class Reader:
    """Checks a bundle's values one by one, failing with where and what."""

    def __init__(self, name: str) -> None:
        self.name = name

    def fail(self, where: str, problem: str) -> NoReturn:
        where = where if len(where) <= 100 else where[:97] + "..."
        raise BundleError(f"cannot import {self.name}: {where or 'it'} {problem}")

    def damaged(self, where: str, problem: str) -> NoReturn:
        """Fail on a value volbench cannot have written (the bundle was changed)."""
        self.fail(where, f"{problem} ({_DAMAGED})")

    # -- one run

    def run(self, value: Any, at: str) -> RunRecord:
        run = self.mapping(value, at)
        self.keys(
            run,
            at,
            {"uuid", "plan", "status", "started_at", "target", "host", "labels", "settings"},
            {"id", "ended_at", "error", "non_compliant", "rounds", "results", "stalls", "series"}
            | {"trace"},
        )
        run_uuid = self.run_uuid(run["uuid"], f"{at}.uuid")
        status = self.text(run["status"], f"{at}.status", 20)
        if status == RunStatus.RUNNING.value:
            self.fail(
                f"{at}.status",
                f"says run {run_uuid} is still running: a bundle holds finished runs;"
                " export it again once it has ended where it runs",
            )
        if status not in _FINISHED:
            self.damaged(f"{at}.status", f"is {shown(status)}, not one of {sorted(_FINISHED)}")
        labels = self.mapping(run["labels"], f"{at}.labels")
        for key, value in labels.items():
            self.text(key, f"{at}.labels (a key)", 200, empty=False)
            self.text(value, f"{at}.labels.{key}", 1000)
        round_list = [
            self.round(r, f"{at}.rounds[{i}]") for i, r in enumerate(self.items(run, "rounds", at))
        ]
        numbers: set[int] = set()
        for index, (times, _) in enumerate(round_list):
            if times.round in numbers:
                self.damaged(f"{at}.rounds[{index}].round", f"{times.round} is there twice")
            numbers.add(times.round)
        round_list.sort(key=lambda pair: pair[0].round)
        results = tuple(
            self.result(r, f"{at}.results[{i}]", numbers)
            for i, r in enumerate(self.items(run, "results", at))
        )
        stalls = tuple(
            self.stall(s, f"{at}.stalls[{i}]") for i, s in enumerate(self.items(run, "stalls", at))
        )
        series = tuple(
            self.series(s, f"{at}.series[{i}]", numbers)
            for i, s in enumerate(self.items(run, "series", at))
        )
        return RunRecord(
            id=self.integer(run.get("id", 0), f"{at}.id", 0, _INT64),
            plan=self.text(run["plan"], f"{at}.plan", 200, empty=False),
            status=RunStatus(status),
            started_at=self.time(run["started_at"], f"{at}.started_at"),
            ended_at=self.optional(run.get("ended_at"), f"{at}.ended_at", self.time),
            target=self.typed(run["target"], f"{at}.target", TargetInfo.from_record),
            host=self.typed(run["host"], f"{at}.host", HostInfo.from_record),
            labels=labels,
            settings=self.typed(run["settings"], f"{at}.settings", RunSettings.from_record),
            error=self.optional(run.get("error"), f"{at}.error", self.text),
            non_compliant=self.boolean(run.get("non_compliant", False), f"{at}.non_compliant"),
            results=results,
            raw_outputs=tuple(raw for _, raw in round_list),
            stalls=stalls,
            rounds=tuple(times for times, _ in round_list),
            series=series,
            trace=tuple(
                self.trace_part(p, f"{at}.trace[{i}]")
                for i, p in enumerate(self.items(run, "trace", at))
            ),
            uuid=run_uuid,
        )

    def round(self, value: Any, at: str) -> tuple[RoundTimes, str]:
        item = self.mapping(value, at)
        self.keys(item, at, {"round", "committed_at", "fio_output"}, {"started_at", "ended_at"})
        times = RoundTimes(
            round=self.integer(item["round"], f"{at}.round", 0, _INT32),
            started_at=self.optional(item.get("started_at"), f"{at}.started_at", self.time),
            ended_at=self.optional(item.get("ended_at"), f"{at}.ended_at", self.time),
            committed_at=self.time(item["committed_at"], f"{at}.committed_at"),
        )
        return times, self.text(item["fio_output"], f"{at}.fio_output")

    def result(self, value: Any, at: str, rounds: Collection[int]) -> StoredResult:
        item = self.mapping(value, at)
        optional = {"hostname", "lat_total_mean_ns"}  # the latter: bundles before schema 8
        self.keys(item, at, set(_RESULT_FIELDS) - optional, optional)
        values: dict[str, Any] = {}
        for name in _RESULT_FIELDS:
            where = f"{at}.{name}"
            field_value = item.get(name)
            if name == "workload":
                values[name] = self.workload(field_value, where)
            elif name in ("round", "jobs"):
                values[name] = self.integer(field_value, where, 0, _INT32)
            elif name == "io_bytes":
                values[name] = self.integer(field_value, where, 0, _INT64)
            elif name == "test":
                values[name] = self.text(field_value, where, 200)
            elif name == "direction":
                values[name] = self.text(field_value, where, 10)
                if values[name] not in DIRECTIONS:
                    self.damaged(where, f"is {shown(values[name])}, not one of {list(DIRECTIONS)}")
            elif name == "lat_kind":
                values[name] = self.optional(field_value, where, self.text, 10)
            elif name == "hostname":
                values[name] = self.optional(field_value, where, self.text, 255)
            elif name in ("iops", "bw_bytes_per_s", "runtime_ms", "usr_cpu_pct", "sys_cpu_pct"):
                values[name] = self.number(field_value, where)
            else:  # the latency figures, None where not measured
                values[name] = self.optional(field_value, where, self.number)
        self.known_round(values["round"], f"{at}.round", rounds)
        return StoredResult(**values)

    def workload(self, value: Any, at: str) -> StoredWorkload:
        record = self.json_object(value, at)
        known = {f.name for f in dataclasses.fields(StoredWorkload)}
        self.keys(record, at, set(), known)
        pairs = record.get("bssplit", [])
        if not isinstance(pairs, list) or not all(
            isinstance(p, list)
            and len(p) == 2
            and all(type(n) is int and 0 <= n <= _INT64 for n in p)
            for p in pairs
        ):
            self.damaged(f"{at}.bssplit", "is not a list of [block size, percent] pairs")
        places = record.get("places", 1)
        if type(places) is not int or not 1 <= places <= _INT32:
            self.damaged(f"{at}.places", f"is {shown(places)}, not a number of places")
        workload = StoredWorkload.from_record(record)
        if workload.record() != {**workload.record(), **record}:
            wrong = sorted(k for k in record if record[k] != workload.record()[k])
            self.damaged(f"{at}.{wrong[0]}", f"is {shown(record[wrong[0]])}, not what it can be")
        return workload

    def stall(self, value: Any, at: str) -> Stall:
        item = self.mapping(value, at)
        self.keys(item, at, {"round", "test", "started_at", "ended_at", "seconds", "resolved"},
                  {"test_offset_s"})  # fmt: skip
        return Stall(
            round=self.integer(item["round"], f"{at}.round", 0, _INT32),
            test=self.text(item["test"], f"{at}.test", 200),
            started_at=self.time(item["started_at"], f"{at}.started_at"),
            ended_at=self.time(item["ended_at"], f"{at}.ended_at"),
            seconds=self.number(item["seconds"], f"{at}.seconds"),
            resolved=self.boolean(item["resolved"], f"{at}.resolved"),
            test_offset_s=self.optional(
                item.get("test_offset_s"), f"{at}.test_offset_s", self.number
            ),
        )

    def series(self, value: Any, at: str, rounds: Collection[int]) -> LogSeries:
        item = self.mapping(value, at)
        self.keys(item, at, {"round", "test", "kind", "job", "direction", "points"}, {"host"})
        round_no = self.integer(item["round"], f"{at}.round", 0, _INT32)
        self.known_round(round_no, f"{at}.round", rounds)
        points = item["points"]
        if not isinstance(points, list):
            self.damaged(f"{at}.points", f"is {kind(points)}, not a list of [time, value]")
        for index, point in enumerate(points):
            if not (
                type(point) is list
                and len(point) == 2
                and type(point[0]) is int
                and -_INT64 <= point[0] <= _INT64
                and (
                    (type(point[1]) is int and -_INT64 <= point[1] <= _INT64)
                    or (type(point[1]) is float and math.isfinite(point[1]))
                )
            ):
                self.damaged(
                    f"{at}.points[{index}]",
                    f"is {shown(point)}, not [time in ms, value] (64-bit integers or a number)",
                )
        if len(points) > _INT32:
            self.damaged(f"{at}.points", "holds more points than a store keeps in one log")
        return LogSeries(
            round=round_no,
            test=self.text(item["test"], f"{at}.test", 200),
            kind=self.text(item["kind"], f"{at}.kind", 10),
            job=self.integer(item["job"], f"{at}.job", 0, _UINT32),
            host=self.optional(item.get("host"), f"{at}.host", self.text, 255),
            direction=self.text(item["direction"], f"{at}.direction", 10),
            points=tuple((t, v) for t, v in points),
        )

    def trace_part(self, value: Any, at: str) -> TracePart:
        item = self.mapping(value, at)
        self.keys(item, at, {"first_ns", "ios", "data"}, set())
        text = self.text(item["data"], f"{at}.data")
        try:
            data = base64.b64decode(text, validate=True)
            unpack_part(data, 0)
        except (binascii.Error, StoreError) as exc:
            self.damaged(f"{at}.data", f"is not a packed trace part ({exc})")
        return TracePart(
            first_ns=self.integer(item["first_ns"], f"{at}.first_ns", 0, _INT64),
            ios=self.integer(item["ios"], f"{at}.ios", 0, _INT32),
            data=data,
        )

    # -- values

    def known_round(self, number: int, at: str, rounds: Collection[int]) -> None:
        if number not in rounds:
            self.damaged(at, f"is {number}, a round the run's rounds do not hold")

    def keys(
        self, item: Mapping[str, Any], at: str, required: set[str], optional: set[str]
    ) -> None:
        missing = sorted(required - set(item))
        if missing:
            self.damaged(f"{at}.{missing[0]}".lstrip("."), "is missing")
        unknown = sorted(set(item) - required - optional)
        if unknown:
            self.damaged(
                f"{at}.{unknown[0]}".lstrip("."), "is not a field of a bundle of its version"
            )

    def mapping(self, value: Any, at: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.damaged(at, f"is {kind(value)}, not an object")
        return value

    def items(self, item: Mapping[str, Any], key: str, at: str) -> list[Any]:
        value = item.get(key, [])
        if not isinstance(value, list):
            self.damaged(f"{at}.{key}" if at else key, f"is {kind(value)}, not a list")
        return value

    def json_object(self, value: Any, at: str) -> dict[str, Any]:
        """A JSON object stored as it is (target, host, settings, a workload): its
        strings storable, its numbers finite, a few levels deep."""
        found = self.mapping(value, at)
        stack: list[tuple[Any, str, int]] = [(found, at, 1)]
        while stack:
            item, where, depth = stack.pop()
            if isinstance(item, dict | list) and depth > _MAX_NESTING:
                self.damaged(where, f"nests more than {_MAX_NESTING} levels deep")
            if isinstance(item, dict):
                for key, inner in item.items():
                    self._storable(key, f"{where} (a key)")
                    stack.append((inner, f"{where}.{key}", depth + 1))
            elif isinstance(item, list):
                stack += [(inner, f"{where}[{i}]", depth + 1) for i, inner in enumerate(item)]
            elif isinstance(item, str):
                self._storable(item, where)
            elif isinstance(item, float) and not math.isfinite(item):
                self.damaged(where, "is a number beyond what JSON can hold")
            elif type(item) is int and not -_INT64 - 1 <= item <= _INT64:
                self.damaged(where, f"{shown(item)} is beyond a 64-bit integer")
        return found

    def typed(self, value: Any, at: str, read: Callable[[dict[str, Any], str], T]) -> T:
        """A run's target, host or settings: a JSON object whose values fit their types."""
        found = self.json_object(value, at)
        try:
            return read(found, at)
        except RecordError as error:
            self.damaged(at, error.problem)

    def text(self, value: Any, at: str, limit: int | None = None, empty: bool = True) -> str:
        if not isinstance(value, str):
            self.damaged(at, f"is {kind(value)}, not text")
        if limit is not None and len(value) > limit:
            self.damaged(at, f"is {len(value)} characters long, more than the store's {limit}")
        if not empty and not value:
            self.damaged(at, "is empty")
        return self._storable(value, at)

    def _storable(self, value: str, at: str) -> str:
        if "\x00" in value:
            self.damaged(at, "holds a NUL character, which no store keeps")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            self.damaged(at, "holds a lone UTF-16 surrogate, which is not text")
        return value

    def integer(self, value: Any, at: str, low: int, high: int) -> int:
        if type(value) is not int:
            self.damaged(at, f"is {kind(value)}, not a whole number")
        if not low <= value <= high:
            self.damaged(at, f"{shown(value)} is not between {low} and {high}")
        return value

    def number(self, value: Any, at: str) -> float:
        if type(value) is int:
            if abs(value) > _INT64:
                self.damaged(at, f"{shown(value)} is beyond the numbers a store keeps")
            return float(value)
        if type(value) is not float:
            self.damaged(at, f"is {kind(value)}, not a number")
        if not math.isfinite(value):
            self.damaged(at, "is a number beyond what JSON can hold")
        return value

    def boolean(self, value: Any, at: str) -> bool:
        if type(value) is not bool:
            self.damaged(at, f"is {kind(value)}, not true or false")
        return value

    def time(self, value: Any, at: str) -> str:
        text = self.text(value, at, 40)
        try:
            return rows.timestamp(text)
        except ValueError:
            self.damaged(at, f"is {shown(text)}, not an ISO 8601 time with a time zone")

    def run_uuid(self, value: Any, at: str) -> str:
        text = self.text(value, at, 36)
        try:
            canonical = str(uuid.UUID(text))
        except ValueError:
            canonical = ""
        if canonical != text:
            self.damaged(at, f"is {shown(text)}, not a UUID (8-4-4-4-12 lowercase hex digits)")
        return text

    def optional(self, value: Any, at: str, check: Callable[..., Any], *args: Any) -> Any:
        return None if value is None else check(value, at, *args)


def no_constant(name: str) -> NoReturn:
    """``json.loads``'s ``parse_constant``: NaN and infinities are not JSON."""
    raise ValueError(f"{name} is not a JSON number")


def kind(value: Any) -> str:
    """What a JSON value is, as a message says it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return f"the number {shown(value)}"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "an object"


def shown(value: Any) -> str:
    """A value as a message shows it: its JSON, cut to 40 characters."""
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
