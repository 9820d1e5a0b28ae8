"""Fuzzing every reader of user files and option values (issue 22), each batch in a
child process limited to 1 GiB of address space, each input to 10 s.

The readers are in :mod:`reader_fuzz`, the inputs in :mod:`reader_inputs` and
:mod:`trace_inputs`: user catalogue YAML, IOMeter spec TOML, QoS plan documents,
blkparse and tracepoint text (also with far, negative and backward times), and option
values through the command line (``run sweep/iometer --dry-run``, ``spec
expect/curve``, ``cost``, ``qos fit/plan/predict``, and the commands naming a RUN or a
label over a store holding one run: ``show``, ``export``, ``label``, ``compare``,
``runs --label``...; run ids and numbers beyond 64 bits or of 400 digits, labels at
and beyond the store's bounds). An input fails the test
when it ends in anything but a one-line error of exit code 2 (or a click usage
error), when a command prints ``nan`` or ``inf``, when it takes over 10 s, or when
its process needs more than 1 GiB (the child's ``RLIMIT_AS``: a MemoryError, or the child dies).

CI reads :data:`COUNTS` (10,300 inputs, two children at a time: 9-32 s on the 2-core
development machine) with seed :data:`SEED`; ``VOLBENCH_FUZZ_SEED`` picks another
seed and ``VOLBENCH_FUZZ_SCALE=N`` multiplies the counts. A failure names the kind,
seed and index: ``python tests/unit/reader_fuzz.py KIND SEED INDEX+1 DIR`` makes it
again (the last line printed is that input).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import reader_fuzz

SEED = os.environ.get("VOLBENCH_FUZZ_SEED", "20261126")
SCALE = float(os.environ.get("VOLBENCH_FUZZ_SCALE", "1"))
COUNTS = {
    "catalogue": 1000,
    "cli": 3000,
    "spec_toml": 1500,
    "qos_plan": 1500,
    "blkparse": 1500,
    "tracepoints": 1500,
    "trace_times": 300,
}
CHILD_TIMEOUT_S = 600.0
"""A child that has not finished by then hangs (each input has its own 10 s timer)."""


def _run_children(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Every kind's records, two children at a time."""
    script = Path(reader_fuzz.__file__)
    waiting = list(COUNTS.items())
    running: list[tuple[str, subprocess.Popen[str], float]] = []
    records: dict[str, list[dict[str, Any]]] = {}
    while waiting or running:
        while waiting and len(running) < 2:
            kind, count = waiting.pop(0)
            work = folder / kind
            work.mkdir()
            child = subprocess.Popen(
                [sys.executable, str(script), kind, SEED, str(round(count * SCALE)), str(work)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            running.append((kind, child, time.monotonic()))
        kind, child, started = running.pop(0)
        try:
            out, err = child.communicate(
                timeout=max(1.0, CHILD_TIMEOUT_S - (time.monotonic() - started))
            )
        except subprocess.TimeoutExpired:
            child.kill()
            out, err = child.communicate()
        lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        if child.returncode != 0 or not lines or "done" not in lines[-1]:
            last = lines[-1] if lines else None
            raise AssertionError(
                f"the {kind} child ended with {child.returncode} after {last!r}: {err[-2000:]}"
            )
        records[kind] = lines
    return records


def test_no_reader_ends_in_a_traceback_a_hang_or_a_blow_up(tmp_path: Path) -> None:
    started = time.monotonic()
    records = _run_children(tmp_path)
    inputs = [r for lines in records.values() for r in lines if "outcome" in r]
    failures = [r for r in inputs if r["outcome"] not in ("ok", "refused")]
    slow = [r for r in inputs if r["seconds"] > reader_fuzz.SECONDS_PER_INPUT]
    peaks = {kind: lines[-1]["peak_rss_bytes"] for kind, lines in records.items()}
    summary = (
        f"{len(inputs)} inputs in {time.monotonic() - started:.1f} s, seed {SEED};"
        f" refused {sum(r['outcome'] == 'refused' for r in inputs)};"
        f" slowest {max(r['seconds'] for r in inputs):.2f} s;"
        f" peak RSS {max(peaks.values()) / 2**20:.0f} MiB"
    )
    print(summary)
    shown = "\n\n".join(
        f"{r['kind']} #{r['index']} ({r['what']}):\n{r['outcome']}" for r in failures[:5]
    )
    assert not failures, f"{len(failures)} inputs failed ({summary}):\n{shown}"
    assert not slow, f"inputs over {reader_fuzz.SECONDS_PER_INPUT} s: {slow[:5]}"
    assert max(peaks.values()) < reader_fuzz.MEMORY_BYTES
    assert len(inputs) >= round(sum(COUNTS.values()) * SCALE) >= 6000 * min(SCALE, 1)
    refused = {
        kind: sum(r.get("outcome") == "refused" for r in lines) for kind, lines in records.items()
    }
    assert all(refused.values()), f"a kind whose inputs were never refused tests nothing: {refused}"
    sane = [r for r in records["trace_times"] if r.get("what", "").startswith("sane")]
    assert sane and all(r["outcome"] == "ok" for r in sane), "a day's trace must be read"


def test_the_harness_fails_what_it_must() -> None:
    """A traceback, an error of another exit code or of two lines and a figure that is
    not finite are failures; a one-line error of exit code 2 is a refusal."""
    from volbench.errors import FioError, UsageError

    def raising(exc: BaseException) -> Any:
        def read(_given: object) -> None:
            raise exc

        return read

    assert reader_fuzz.outcome(raising(UsageError("bad value")), None) == "refused"
    assert reader_fuzz.outcome(lambda _: None, None) == "ok"
    for failing in (ValueError("x"), FioError("x"), UsageError("two\nlines"), MemoryError()):
        assert reader_fuzz.outcome(raising(failing), None) not in ("ok", "refused")
    assert "not a finite" in reader_fuzz.outcome(lambda _: reader_fuzz._finite(float("inf")), None)
    command = ["qos", "fit", "--capability", "100", "--measured", "a=1"]
    assert reader_fuzz.outcome(reader_fuzz.read_cli, command) == "ok"


LARGE_REQUESTS = 500_000
"""A million events: a D and a C line a request (68 MB of blkparse text)."""
LARGE_BYTES_PER_REQUEST = 800
"""The bound on the reader's memory growth a request. Reading keeps 26 bytes an event
(52 a request), the pairing 41 bytes a request and, for each request waiting for its
completion (here all of them at once), a dict entry of about 120; the profile then
takes about 300 bytes a request, once the events are gone: about 330 at the peak,
measured 166 MB for this file alone, and 307 MB (614 a request) in a CI run with the
whole suite beside it (the peak of resident memory moves with when freed arenas go
back). The reader of Nov 2026 took 1,360 a request (680 MB; a million requests ended
in MemoryError under the 1 GiB limit): the bound stays well under that."""


def test_a_million_event_blkparse_file_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """Regression (issue 31): 127 MB of blkparse text of a million I/Os ended in
    MemoryError in the pairing of its events. A million events, every request waiting
    at once, are read, paired, profiled and packed as the fuzz does (child process,
    1 GiB of address space) in bounded memory growth."""
    from trace_inputs import write_large_blkparse

    path = tmp_path / "large.txt"
    write_large_blkparse(path, LARGE_REQUESTS)
    child = subprocess.run(
        [sys.executable, reader_fuzz.__file__, "large", str(path)],
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT_S,
    )
    assert child.returncode == 0, child.stderr[-2000:]
    found = json.loads(child.stdout.splitlines()[-1])
    grown = found["peak_rss_bytes"] - found["before_rss_bytes"]
    print(f"{LARGE_REQUESTS:,} requests in {found['seconds']} s, {grown / 2**20:.0f} MiB more")
    assert found["outcome"] == "ok" and found["requests"] == LARGE_REQUESTS
    assert grown < LARGE_BYTES_PER_REQUEST * LARGE_REQUESTS
