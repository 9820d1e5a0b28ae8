"""The stall watch on synthetic status documents and on a recorded stalled stream.

Synthetic documents carry only what the watch reads: per job ``total_ios`` (issued),
latency samples ``N`` (completed) and ``job_runtime``. Times are seconds.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from recorded import FIO_FIXTURES

from volbench.fio.stall import StallPolicy, StallWatch, stall_reason, utc_text
from volbench.model import RW, Stall, Workload
from volbench.plans.runs.round_status import RoundStatus

T0 = 1_700_000_000.0


def job(name: str, issued: int, done: int, runtime_ms: int) -> dict[str, Any]:
    read = {"total_ios": issued, "io_bytes": done * 4096, "lat_ns": {"N": done, "mean": 1e5}}
    return {"jobname": name, "job_runtime": runtime_ms, "read": read}


def doc(*jobs: dict[str, Any]) -> dict[str, Any]:
    return {"jobs": list(jobs)}


def watch(seconds: float = 5.0, **kwargs: Any) -> StallWatch:
    return StallWatch(0, T0, "a", seconds, **kwargs)


def test_steady_progress_is_no_stall() -> None:
    w = watch()
    for second in range(1, 20):
        assert (
            w.status(T0 + second, doc(job("a", 100 * second, 100 * second - 2, 1000 * second)))
            == []
        )
    assert w.finish(T0 + 20) == []


def test_five_one_second_intervals_without_completions_open_a_stall() -> None:
    w = watch()
    w.status(T0 + 1, doc(job("a", 100, 98, 1000)))
    opened = [w.status(T0 + s, doc(job("a", 100, 98, 1000 * s))) for s in range(2, 7)]
    assert [len(o) for o in opened] == [0, 0, 0, 0, 1]  # 4 s is not enough, 5 s is
    (stall,) = opened[-1]
    assert (stall.test, stall.started_at, stall.seconds) == ("a", utc_text(T0 + 1), 5.0)
    w.status(T0 + 9, doc(job("a", 104, 102, 9000)))  # completions again at 9 s
    (closed,) = w.finish(T0 + 10)
    assert (closed.ended_at, closed.seconds, closed.resolved) == (utc_text(T0 + 9), 8.0, True)
    assert closed.test_offset_s == 1.0


def test_ticks_open_a_stall_while_fio_is_silent_and_finish_closes_it_unresolved() -> None:
    w = watch(seconds=3)
    w.status(T0 + 1, doc(job("a", 10, 9, 1000)))
    assert w.tick(T0 + 3.5) == []
    (opened,) = w.tick(T0 + 4.0)
    assert w.tick(T0 + 5.0) == []  # reported once
    (stall,) = w.finish(T0 + 6.0)
    assert (stall.started_at, stall.seconds, stall.resolved) == (utc_text(T0 + 1), 5.0, False)
    assert opened.test == stall.test == "a"


def test_a_device_hung_from_the_start_stalls_the_first_job() -> None:
    w = watch()
    assert w.tick(T0 + 4.8) == []
    (stall,) = w.tick(T0 + 5.0)
    assert (stall.test, stall.started_at, stall.test_offset_s) == ("a", utc_text(T0), 0.0)


def test_finished_and_not_started_jobs_are_not_outstanding() -> None:
    w = watch(seconds=2, planned_s={"a": 1.0, "b": 1.0})
    # a finished at 1 s (runtime frozen); b, stonewalled, has issued nothing
    for second in range(1, 10):
        assert w.status(T0 + second, doc(job("a", 50, 50, 2000), job("b", 0, 0, 0))) == []
    assert w.finish(T0 + 10) == []


def test_think_time_is_allowed_on_top_of_the_stall_seconds() -> None:
    w = watch(seconds=2, think_s={"a": 4.0})
    w.status(T0 + 1, doc(job("a", 10, 10, 1000)))
    assert w.tick(T0 + 6.5) == []  # 5.5 s idle < 2 + 4
    assert len(w.tick(T0 + 7.0)) == 1


def test_silence_past_the_planned_end_belongs_to_the_next_job() -> None:
    w = watch(seconds=2, planned_s={"a": 1.0, "b": 1.0, "c": 1.0})
    w.status(T0 + 1, doc(job("a", 10, 10, 900), job("b", 0, 0, 0), job("c", 0, 0, 0)))
    (stall,) = w.tick(T0 + 6)  # a was due to end at about 1.1 s: b started and blocked
    assert stall.test == "b"
    assert w.tick(T0 + 20) == []  # a blocked b does not end on time: never moved on to c


def test_reason_line() -> None:
    stall = Stall(
        0, "randread-4k", "2024-05-01T12:03:04+00:00", "2024-05-01T12:03:09+00:00", 5.0, False
    )
    assert stall_reason(stall) == "stalled: 0 IOPS for 5 s at 12:03:04 UTC on randread-4k"


@pytest.fixture(scope="module")
def stalled_stream() -> list[dict[str, Any]]:
    """The recorded stream of a stalling device (fixtures README, command 9)."""
    text = (FIO_FIXTURES / "stalled_status_stream.out").read_text()
    decoder = json.JSONDecoder()
    documents, start = [], text.find("{")
    while start >= 0:
        document, end = decoder.raw_decode(text, start)
        documents.append(document)
        start = text.find("{", end)
    return documents


def test_recorded_stream_of_a_stalling_device(stalled_stream: list[dict[str, Any]]) -> None:
    """One 4 KiB read every 8 s: every gap between documents is a stall of the job
    that runs then; fio started 9 s (``elapsed``) before its first document."""
    first_ms = stalled_stream[0]["timestamp_ms"]
    started = first_ms / 1000 - stalled_stream[0]["jobs"][0]["elapsed"]
    w = StallWatch(0, started, "a", 5.0, planned_s={"a": 3.0, "b": 3.0})
    for document in stalled_stream:
        w.status(document["timestamp_ms"] / 1000, document)
    stalls = w.finish(stalled_stream[-1]["timestamp_ms"] / 1000)
    assert [s.test for s in stalls] == ["a", "a", "b", "b"]
    assert all(s.resolved and 7.9 <= s.seconds <= 9.1 for s in stalls)
    times = [datetime.fromisoformat(s.started_at) for s in stalls]
    assert times == sorted(times)
    last = datetime.fromisoformat(stalls[-1].ended_at).timestamp()
    assert last == pytest.approx(stalled_stream[-2]["timestamp_ms"] / 1000, abs=1)


def test_recorded_healthy_stream_has_no_stall(status_documents: list[dict[str, Any]]) -> None:
    w = StallWatch(0, status_documents[0]["timestamp_ms"] / 1000 - 1, "status", 2.0)
    for document in status_documents:
        assert w.status(document["timestamp_ms"] / 1000, document) == []
    assert w.finish(status_documents[-1]["timestamp_ms"] / 1000) == []


class _Notes:
    """A reporter that keeps its notes (and ignores the live figures)."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def note(self, message: str) -> None:
        self.notes.append(message)

    def sample(self, sample: object) -> None:
        pass


def test_qos_verify_watches_every_tenant_for_stalls() -> None:
    """QoS verify runs one fio per tenant at once: each gets its own watch; a tenant
    whose completions stop for 7 s while the other goes on is a stall of its own."""
    now = [T0]
    notes = _Notes()
    live = RoundStatus(
        notes,  # type: ignore[arg-type]
        StallPolicy(5.0),
        0,
        [(Workload("web", RW.RANDREAD),), (Workload("db", RW.RANDREAD),)],
        clock=lambda: now[0],
    )
    for second in range(1, 12):
        now[0] = T0 + second
        live.on_status(1, doc(job("db", 100 * second, 100 * second, 1000 * second)))
        done = 100 * min(second, 3)  # web's device stops completing after 3 s
        if second in (1, 2, 3, 11):  # fio prints nothing while its job waits
            live.on_status(0, doc(job("web", done + 4, done, 1000 * second)))
    (stall,) = live.finish(T0 + 12)
    assert (stall.round, stall.test, stall.resolved) == (0, "web", False)
    assert stall.seconds >= 7
    assert any("stalled: 0 IOPS" in n and "on web" in n for n in notes.notes)
