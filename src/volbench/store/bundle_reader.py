"""Reading a bundle's runs back, strictly (:mod:`volbench.store.bundle` has the format).

:class:`Reader` checks every value of a bundle's run against what a store can hold
and volbench can have written (types, ranges of the store's columns, finite numbers,
text a database keeps within the store's bounds (:mod:`volbench.store.limits`), times
within fio's lifetime and in order, rounds that exist, known fields only) and builds the
:class:`~volbench.model.RunRecord` the store will give back. The first value that
fails is a :class:`BundleError`: one line naming the file, the JSON path and what
to do.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import math
from collections.abc import Collection
from typing import Any

from volbench.errors import StoreError
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
from volbench.store.bundle_values import INT32_MAX, INT64_MAX, UINT32_MAX, ValueReader, kind, shown
from volbench.store.limits import (
    HOSTNAME_CHARS,
    LABEL_KEY_CHARS,
    LABEL_VALUE_CHARS,
    NAME_CHARS,
    TEXT_CHARS,
)
from volbench.trace.codec import unpack_part

_FINISHED = {s.value for s in RunStatus if s is not RunStatus.RUNNING}
_RESULT_FIELDS = tuple(f.name for f in dataclasses.fields(StoredResult))


class Reader(ValueReader):
    """Checks a bundle's values one by one, failing with where and what."""

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
            self.text(key, f"{at}.labels (a key)", LABEL_KEY_CHARS, empty=False)
            self.text(value, f"{at}.labels.{key}", LABEL_VALUE_CHARS)
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
        started_at = self.time(run["started_at"], f"{at}.started_at")
        ended_at = self.optional(run.get("ended_at"), f"{at}.ended_at", self.time)
        self.in_order(started_at, ended_at, f"{at}.ended_at")
        return RunRecord(
            id=self.integer(run.get("id", 0), f"{at}.id", 0, INT64_MAX),
            plan=self.text(run["plan"], f"{at}.plan", NAME_CHARS, empty=False),
            status=RunStatus(status),
            started_at=started_at,
            ended_at=ended_at,
            target=self.typed(run["target"], f"{at}.target", TargetInfo.from_record),
            host=self.typed(run["host"], f"{at}.host", HostInfo.from_record),
            labels=labels,
            settings=self.typed(run["settings"], f"{at}.settings", RunSettings.from_record),
            error=self.optional(run.get("error"), f"{at}.error", self.text, TEXT_CHARS),
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
            round=self.integer(item["round"], f"{at}.round", 0, INT32_MAX),
            started_at=self.optional(item.get("started_at"), f"{at}.started_at", self.time),
            ended_at=self.optional(item.get("ended_at"), f"{at}.ended_at", self.time),
            committed_at=self.time(item["committed_at"], f"{at}.committed_at"),
        )
        self.in_order(times.started_at, times.ended_at, f"{at}.ended_at")
        return times, self.text(item["fio_output"], f"{at}.fio_output")

    def result(self, value: Any, at: str, rounds: Collection[int]) -> StoredResult:
        item = self.mapping(value, at)
        # lat_total_mean_ns: bundles before schema 8; error: before 9
        optional = {"hostname", "lat_total_mean_ns", "error"}
        self.keys(item, at, set(_RESULT_FIELDS) - optional, optional)
        values: dict[str, Any] = {}
        for name in _RESULT_FIELDS:
            where = f"{at}.{name}"
            field_value = item.get(name)
            if name == "workload":
                values[name] = self.workload(field_value, where)
            elif name in ("round", "jobs"):
                values[name] = self.integer(field_value, where, 0, INT32_MAX)
            elif name == "error":  # fio's errno (a C int), None where not recorded
                values[name] = self.optional(field_value, where, self.integer, 0, INT32_MAX)
            elif name == "io_bytes":
                values[name] = self.integer(field_value, where, 0, INT64_MAX)
            elif name == "test":
                values[name] = self.text(field_value, where, NAME_CHARS)
            elif name == "direction":
                values[name] = self.text(field_value, where, 10)
                if values[name] not in DIRECTIONS:
                    self.damaged(where, f"is {shown(values[name])}, not one of {list(DIRECTIONS)}")
            elif name == "lat_kind":
                values[name] = self.optional(field_value, where, self.text, 10)
            elif name == "hostname":
                values[name] = self.optional(field_value, where, self.text, HOSTNAME_CHARS)
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
            and all(type(n) is int and 0 <= n <= INT64_MAX for n in p)
            for p in pairs
        ):
            self.damaged(f"{at}.bssplit", "is not a list of [block size, percent] pairs")
        places = record.get("places", 1)
        if type(places) is not int or not 1 <= places <= INT32_MAX:
            self.damaged(f"{at}.places", f"is {shown(places)}, not a number of places")
        workload = StoredWorkload.from_record(record)
        if workload.record() != {**workload.record(), **record}:
            wrong = sorted(k for k in record if record[k] != workload.record()[k])
            self.damaged(f"{at}.{wrong[0]}", f"is {shown(record[wrong[0]])}, not what it can be")
        return workload

    def stall(self, value: Any, at: str) -> Stall:
        item = self.mapping(value, at)
        self.keys(
            item,
            at,
            {"round", "test", "started_at", "ended_at", "seconds", "resolved"},
            {"test_offset_s"},
        )
        started_at = self.time(item["started_at"], f"{at}.started_at")
        ended_at = self.time(item["ended_at"], f"{at}.ended_at")
        self.in_order(started_at, ended_at, f"{at}.ended_at")
        return Stall(
            round=self.integer(item["round"], f"{at}.round", 0, INT32_MAX),
            test=self.text(item["test"], f"{at}.test", NAME_CHARS),
            started_at=started_at,
            ended_at=ended_at,
            seconds=self.number(item["seconds"], f"{at}.seconds"),
            resolved=self.boolean(item["resolved"], f"{at}.resolved"),
            test_offset_s=self.optional(
                item.get("test_offset_s"), f"{at}.test_offset_s", self.number
            ),
        )

    def series(self, value: Any, at: str, rounds: Collection[int]) -> LogSeries:
        item = self.mapping(value, at)
        self.keys(item, at, {"round", "test", "kind", "job", "direction", "points"}, {"host"})
        round_no = self.integer(item["round"], f"{at}.round", 0, INT32_MAX)
        self.known_round(round_no, f"{at}.round", rounds)
        points = item["points"]
        if not isinstance(points, list):
            self.damaged(f"{at}.points", f"is {kind(points)}, not a list of [time, value]")
        for index, point in enumerate(points):
            if not (
                type(point) is list
                and len(point) == 2
                and type(point[0]) is int
                and -INT64_MAX <= point[0] <= INT64_MAX
                and (
                    (type(point[1]) is int and -INT64_MAX <= point[1] <= INT64_MAX)
                    or (type(point[1]) is float and math.isfinite(point[1]))
                )
            ):
                self.damaged(
                    f"{at}.points[{index}]",
                    f"is {shown(point)}, not [time in ms, value] (64-bit integers or a number)",
                )
        if len(points) > INT32_MAX:
            self.damaged(f"{at}.points", "holds more points than a store keeps in one log")
        return LogSeries(
            round=round_no,
            test=self.text(item["test"], f"{at}.test", NAME_CHARS),
            kind=self.text(item["kind"], f"{at}.kind", 10),
            job=self.integer(item["job"], f"{at}.job", 0, UINT32_MAX),
            host=self.optional(item.get("host"), f"{at}.host", self.text, HOSTNAME_CHARS),
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
            first_ns=self.integer(item["first_ns"], f"{at}.first_ns", 0, INT64_MAX),
            ios=self.integer(item["ios"], f"{at}.ios", 0, INT32_MAX),
            data=data,
        )

    # -- values
