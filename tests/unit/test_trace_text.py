"""Trace text in (tracefs tracepoints, blkparse), paired requests out, stored and back."""

# ruff: noqa: E501 (trace lines as the kernel prints them)

from __future__ import annotations

import re
from pathlib import Path

import pytest

from volbench.errors import UsageError
from volbench.model import TracePart
from volbench.plans.capture import CaptureSetup
from volbench.trace import blkparse_text, codec
from volbench.trace.clock import MAX_SPAN_S
from volbench.trace.events import FLUSH, READ, TRIM, WRITE, TraceBuilder, op_of
from volbench.trace.tracepoint_text import parse_tracepoints

FIXTURES = Path(__file__).parent.parent / "fixtures" / "blkparse"

TRACEPOINTS = """\
# tracer: nop
             fio-31194   [000] ..... 12715.800443: block_rq_issue: 7,0 R 4096 () 31616 + 8 be,0,4 [fio]
             fio-31194   [001] ..... 12715.800500: block_rq_issue: 7,0 WS 65536 () 100 + 128 be,0,4 [fio]
             fio-31194   [001] ..... 12715.800501: block_rq_issue: 7,1 R 4096 () 8 + 8 be,0,4 [fio]
     ksoftirqd/0-14      [000] ..s.. 12715.802762: block_rq_complete: 7,0 R () 31616 + 8 be,0,4 [0]
CPU:1 [LOST 12 EVENTS]
          <idle>-0       [001] d.h1. 12715.803000: block_rq_complete: 7,0 WS () 100 + 128 be,0,4 [0]
             fio-31194   [000] ..... 12715.804000: block_rq_issue: 7,0 R 4096 () 999 + 8 [fio]
             dd-7        [000] ..... 12715.805000: block_rq_issue: 7,0 FF 0 () 0 + 0 be,0,4 [dd]
"""


def test_tracepoints_pair_issue_and_completion_on_the_device() -> None:
    trace = parse_tracepoints(TRACEPOINTS.splitlines(), (7, 0), duration_ns=10_000_000)
    assert trace.ops == "RWRF"  # 7,1 is another device; the old format (no ioprio) reads too
    assert list(trace.offset_bytes) == [31616 * 512, 100 * 512, 999 * 512, 0]
    assert list(trace.size_bytes) == [4096, 65536, 4096, 0]
    assert list(trace.issue_ns) == [0, 57_000, 3_557_000, 4_557_000]
    assert list(trace.latency_ns) == [2_319_000, 2_500_000, -1, -1]  # still in flight: -1
    assert trace.lost == 12
    assert trace.duration_ns == 10_000_000


def test_rwbs_kinds() -> None:
    assert op_of("RA", 8) == READ
    assert op_of("WFS", 8) == WRITE  # a write with a preflush carries data
    assert op_of("DS", 8) == TRIM
    assert op_of("FWS", 0) == FLUSH
    assert op_of("N", 0) is None
    assert op_of("WS", 0) is None


def test_blkparse_default_output() -> None:
    text = (FIXTURES / "mixed.txt").read_text()
    assert blkparse_text.recognise(text[:2000])
    assert not blkparse_text.recognise('{"fio version": "fio-3.33"}')
    found = blkparse_text.events_by_device(text.splitlines())
    assert set(found) == {(8, 0), (8, 16)}
    device = blkparse_text.pick_device(found, "mixed.txt")
    assert device == (8, 0)
    trace = blkparse_text.build(found[device])
    assert trace.ops == "RRWWFRD"
    assert list(trace.size_bytes) == [4096, 4096, 65536, 65536, 0, 4096, 1 << 20]
    assert list(trace.latency_ns) == [
        100_000,
        200_000,
        400_000,
        500_000,
        50_000,
        300_000,
        1_000_000,
    ]
    assert trace.before == 1  # sector 777 was issued before the trace began
    assert trace.issue_ns[0] == 0  # the first event of the device is the trace's start


def test_blkparse_without_issue_events_uses_queue_events() -> None:
    lines = [
        "253,0  0  1  0.000000000  10  Q  R 8 + 8 [app]",
        "253,0  0  2  0.000500000   0  C  R 8 + 8 [0]",
    ]
    found = blkparse_text.events_by_device(lines)
    trace = blkparse_text.build(found[(253, 0)])
    assert trace.ops == "R"
    assert list(trace.latency_ns) == [500_000]


def test_no_events_is_one_line() -> None:
    with pytest.raises(Exception, match="no block I/O events"):
        blkparse_text.pick_device({}, "empty.txt")


def test_out_of_order_events_are_sorted_by_issue_time() -> None:
    builder = TraceBuilder()
    builder.issue(1_000, READ, 8, 4096)
    builder.issue(500, WRITE, 16, 4096)  # another CPU's buffer, read later
    trace = builder.build()
    assert trace.ops == "RW"[::-1]
    assert list(trace.offset_bytes) == [16 * 512, 8 * 512]


def test_codec_round_trip_in_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codec, "PART_IOS", 3)
    trace = parse_tracepoints(TRACEPOINTS.splitlines(), (7, 0), duration_ns=10_000_000)
    parts = codec.pack(trace)
    assert [p.ios for p in parts] == [3, 1]
    assert codec.unpack(parts, codec.trace_meta(trace)) == trace


def test_codec_refuses_what_it_did_not_write() -> None:
    with pytest.raises(Exception, match="not readable"):
        codec.unpack([TracePart(0, 1, b"not zlib")], {})


BLKPARSE_D = "  8,0    3        1     {time}   697  D  WS {sector} + {count} [fio]\n"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"sector": 2**63}, "sector 9223372036854775808 is beyond 18,014,398,509,481,984"),
        ({"sector": 2**54 - 4, "count": 8}, "sectors 18,014,398,509,481,980 + 8 end beyond"),
        ({"count": 10**30}, "sector count 100000000000000000000000 is beyond"),
        ({"sector": "9" * 5000}, "longer than 4096 characters"),
        ({"time": "9" * 30 + ".5"}, "time 999999999999999999999999 is beyond 9,000,000,000"),
    ],
)
def test_blkparse_numbers_beyond_64_bits_are_one_line(
    tmp_path: Path, fields: dict[str, object], message: str
) -> None:
    """Regression (issue 22): a sector >= 2**63 was an OverflowError in the columns."""
    values: dict[str, object] = {"time": "0.000001000", "sector": 8, "count": 8, **fields}
    path = tmp_path / "hostile.txt"
    path.write_text(BLKPARSE_D.format(**values))
    with path.open() as lines, pytest.raises(UsageError) as caught:
        blkparse_text.events_by_device(lines)
    assert str(caught.value).startswith(f"{path} line 1: ") or "longer than" in str(caught.value)
    assert message in str(caught.value)


def test_trace_text_without_line_breaks_is_not_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "one-line.txt"
    path.write_text("8" * (1 << 22))
    with path.open() as lines, pytest.raises(UsageError, match="line 1: longer than 4096"):
        blkparse_text.events_by_device(lines)


def test_tracepoint_numbers_are_bounded() -> None:
    line = TRACEPOINTS.splitlines()[1].replace("31616 + 8", f"{2**60} + 8")
    with pytest.raises(UsageError, match="line 1: sector 1152921504606846976 is beyond"):
        parse_tracepoints([line])


def test_an_event_before_the_first_one_starts_the_trace() -> None:
    """Found by the reader fuzz: a CPU's event earlier than the first line printed gave
    a negative issue time (the profile's per-second table failed on it)."""
    lines = TRACEPOINTS.splitlines()
    lines[-1] = lines[-1].replace("12715.805000", "12715.700000")
    trace = parse_tracepoints(lines)
    assert min(trace.issue_ns) == 0 and trace.issue_ns[0] == 0
    assert trace.duration_ns == 12715_804_000_000 - 12715_700_000_000


def test_import_of_blkparse_output_is_a_captured_workload(tmp_path: Path) -> None:
    from volbench.plans import capture
    from volbench.plans.imported.importing import import_path
    from volbench.store.repository import Store

    with Store.open(str(tmp_path / "v.db")) as store:
        (received,) = import_path(store, FIXTURES / "mixed.txt", {"host": "db1"})
        run = capture.find_capture(store, "mixed")
        assert run.id == received.run_id and run.plan == capture.NAME
        assert run.labels == {"host": "db1", "workload": "mixed"}
        assert "also traces 8,16: kept 8,0" in (run.error or "")
        assert run.setup(CaptureSetup).profile["counts"] == {
            "read": 3,
            "write": 2,
            "trim": 1,
            "flush": 1,
        }
        trace = capture.load_trace(store, run)
        assert trace.ops == "RRWWFRD"
        assert capture.find_capture(store, "latest").id == run.id
        with pytest.raises(Exception, match="no captured workload 'other'"):
            capture.find_capture(store, "other")


FAR = """\
  8,0    3        1     0.000000000   697  D  WS 3414123 + 8 [kjournald]
  8,0    0        1     999999999.000000000     0  C  WS 3414123 + 8 [0]
"""


def test_a_completion_a_billion_seconds_after_its_dispatch_is_one_line(tmp_path: Path) -> None:
    """Regression (issue 31): this two-line trace made the profile allocate a row for
    each of its 999,999,999 seconds (23.8 GB, then the kernel killed it)."""
    path = tmp_path / "far.txt"
    path.write_text(FAR)
    with path.open() as lines, pytest.raises(UsageError) as caught:
        blkparse_text.events_by_device(lines)
    assert str(caught.value) == (
        f"{path} line 2: the trace would span 999,999,999 s (line 1 to line 2), beyond"
        " 604,800 s (7 days): check the file's times, or split it (blkparse -w START:END)"
        " and import each part"
    )


def test_a_day_long_trace_is_profiled() -> None:
    """A quiet device traced for a day (or a week, the limit) reads and profiles."""
    from volbench.analysis.workload_profile import characterise

    for span_s in (86_400, MAX_SPAN_S):
        lines = [
            BLKPARSE_D.format(time="0.000000000", sector=8, count=8),
            BLKPARSE_D.format(time=f"{span_s}.000000000", sector=64, count=8),
        ]
        trace = blkparse_text.build(blkparse_text.events_by_device(lines)[(8, 0)])
        assert trace.duration_ns == span_s * 10**9
        assert len(characterise(trace).per_second) == span_s


@pytest.mark.parametrize(
    ("times", "message"),
    [
        (("0.5", "-3.000000000"), "line 2: time -3.000000000 is negative"),
        (("5000.0", "4989.999999999"), "line 2: time 4989.999999999 s is 10 s before line 1's"),
        (("3600.0", "3600.5", "0.25"), "line 3: time 0.250000000 s is 3,600 s before line 2's"),
        (("1.0", "604801.000000001"), "line 2: the trace would span 604,800 s (line 1 to"),
        (("9.0", "0.0", "604808.5"), "line 3: the trace would span 604,808 s (line 2 to line 3)"),
    ],
)
def test_times_no_kernel_prints_are_one_line(times: tuple[str, ...], message: str) -> None:
    """A negative time, a step back beyond the CPUs' clocks (two traces joined), and
    a span beyond a week are refused naming the lines (issue 31)."""
    lines = [BLKPARSE_D.format(time=t, sector=8 * i, count=8) for i, t in enumerate(times)]
    with pytest.raises(UsageError, match=re.escape(message)):
        blkparse_text.events_by_device(lines)


def test_times_a_little_out_of_order_are_sorted() -> None:
    """What CPUs' clocks leave out of order (up to 10 s back) is sorted, not refused."""
    lines = [
        BLKPARSE_D.format(time=t, sector=s, count=8)
        for t, s in (("20.0", 8), ("10.000000001", 16), ("25.0", 24))
    ]
    trace = blkparse_text.build(blkparse_text.events_by_device(lines)[(8, 0)])
    assert list(trace.offset_bytes) == [16 * 512, 8 * 512, 24 * 512]
    assert list(trace.issue_ns) == [0, 9_999_999_999, 14_999_999_999]


def test_tracepoint_times_are_checked() -> None:
    lines = TRACEPOINTS.splitlines()
    lines[4] = lines[4].replace("12715.802762", "999912715.802762")
    with pytest.raises(UsageError, match="line 5: the trace would span 999,900,000 s"):
        parse_tracepoints(lines)


def test_a_file_of_more_devices_than_traced_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blkparse_text, "MAX_DEVICES", 2)
    lines = [
        BLKPARSE_D.format(time="0.1", sector=8, count=8).replace("8,0", f"8,{minor}")
        for minor in (0, 16, 32)
    ]
    with pytest.raises(UsageError, match="line 3: more than 2 devices traced"):
        blkparse_text.events_by_device(lines)


def test_queue_events_count_until_the_device_dispatches(monkeypatch: pytest.MonkeyPatch) -> None:
    """blkparse prints Q, G, I, D and C for each request; volbench keeps D and C, so
    the event limit counts those (a million requests of real blkparse text read)."""
    monkeypatch.setattr(blkparse_text, "MAX_EVENTS", 4)

    def requests(count: int) -> list[str]:
        return [
            f"  8,0  0  {i}  0.{10 * i + step:09d}  697  {action}  R {8 * i} + 8 [fio]"
            for i in range(count)
            for step, action in enumerate("QGIDC")
        ]

    found = blkparse_text.events_by_device(requests(2))
    assert len(found[(8, 0)]) == 4 and found[(8, 0)].issues == 4
    assert list(blkparse_text.build(found[(8, 0)]).latency_ns) == [1, 1]
    with pytest.raises(UsageError, match="more than 4 events"):
        blkparse_text.events_by_device(requests(3))


def test_requests_waiting_on_one_sector_complete_in_issue_order() -> None:
    builder = TraceBuilder()
    for time_ns in (0, 10, 20):
        builder.issue(time_ns, WRITE, 8, 4096)
    builder.issue(30, READ, 8, 4096)  # another kind on the same sector
    for time_ns in (100, 200):
        builder.complete(time_ns, WRITE, 8)
    builder.issue(300, WRITE, 8, 4096)
    for time_ns in (400, 500, 600):  # the last: none waits (issued before the trace)
        builder.complete(time_ns, WRITE, 8)
    builder.complete(700, READ, 8)
    builder.complete(800, READ, 8)
    trace = builder.build()
    assert trace.ops == "WWWRW"
    assert list(trace.latency_ns) == [100, 190, 380, 670, 200]
    assert trace.before == 2 and trace.duration_ns == 800
