"""volbench's readers on generated hostile inputs, in a child process of bounded memory.

Each reader (:data:`READERS`) reads what its generator in :mod:`reader_inputs` made
with ``random.Random(f"{seed}:{kind}:{index}")``, so any input is made again from its
kind, seed and index.

An input passes when its reader returns, or ends with one of volbench's errors of
exit code 2 whose message is one line, or with a click usage error (exit 2); a
command that succeeds must print no ``nan`` or ``inf``. Anything else (any other
exception, a traceback) fails, and so does an input read for more than
:data:`SECONDS_PER_INPUT` or a process of more than :data:`MEMORY_BYTES`.

Run as ``python reader_fuzz.py KIND SEED COUNT FOLDER``: the child sets its address
space limit (``RLIMIT_AS``) and a timer per input, then prints one JSON line per
input (kind, index, description, outcome, seconds) and a last line with its peak
resident memory.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import resource
import signal
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from reader_inputs import (
    gen_blkparse,
    gen_catalogue,
    gen_cli,
    gen_qos_plan,
    gen_spec_toml,
    gen_tracepoints,
)
from trace_inputs import gen_trace_times

FIO_OUTPUT = Path(__file__).resolve().parents[1] / "fixtures" / "fio" / "randread_json.json"
"""The fio output stored as run 1 before the inputs are read (``show RUN`` and others)."""

SECONDS_PER_INPUT = 10.0
MEMORY_BYTES = 1 << 30

# --- the readers: what volbench does with each input


def read_catalogue(path: Path) -> None:
    from volbench.specs import catalogue
    from volbench.specs.expectation import expect
    from volbench.specs.price import cost

    for product in catalogue.load((str(path),)).products:
        if product.origin != str(path):
            continue
        for size in {product.min_size, 100.0, min(product.max_size, 1e9)}:
            if size <= 0:
                continue
            found = expect(product, size, None, {})
            _finite(
                found.iops,
                found.throughput_bytes_per_s,
                found.burst_iops,
                found.burst_seconds,
                found.burst_throughput_value,
                found.burst_throughput_seconds,
            )
            for total in cost(product, size, 1.0):
                _finite(total.amount, total.monthly)


def read_spec_toml(path: Path) -> None:
    from volbench.plans import iometer

    specs = iometer.load_specs(path)
    iometer.workloads(iometer.IometerOptions(specs=specs, workers=(1, 4)))


def read_qos_plan(path: Path) -> None:
    from volbench.analysis.qos_document import plan_document
    from volbench.plans.qos.plan_file import read_plan

    json.dumps(plan_document(read_plan(str(path))), allow_nan=False)


def _trace_used(trace: Any) -> None:
    from volbench.analysis.workload_profile import characterise
    from volbench.trace import codec

    codec.pack(trace)
    characterise(trace)


def blkparse_trace(path: Path) -> Any:
    """The trace of ``path`` as ``volbench import`` reads it."""
    from volbench.trace import blkparse_text

    with path.open(errors="replace") as lines:
        found = blkparse_text.events_by_device(lines)
    device = blkparse_text.pick_device(found, str(path))
    return blkparse_text.build(found[device])


def read_blkparse(path: Path) -> None:
    _trace_used(blkparse_trace(path))


def read_trace_times(path: Path) -> None:
    """Either text, by the name :func:`trace_inputs.gen_trace_times` gave it."""
    (read_blkparse if path.name == "trace.txt" else read_tracepoints)(path)


def read_tracepoints(path: Path) -> None:
    from volbench.trace.tracepoint_text import parse_tracepoints

    with path.open(errors="replace") as lines:
        trace = parse_tracepoints(lines, None, 1_000_000)
    if len(trace):
        _trace_used(trace)


class Unfinished(Exception):
    """What a command printed that no user should see (``nan``, ``inf``)."""


_NOT_A_NUMBER = re.compile(r"(?i)(?<![\w-])-?(nan|inf|infinity)(?![\w-])")


def _finite(*values: float | None) -> None:
    if any(v is not None and not math.isfinite(v) for v in values):
        raise Unfinished(f"a figure is not a finite number: {values}")


def read_cli(args: list[str]) -> None:
    import click
    from click.testing import CliRunner

    from volbench.cli.main import cli

    result = CliRunner().invoke(cli, args, standalone_mode=False, catch_exceptions=True)
    exc = result.exception
    if exc is None or (isinstance(exc, SystemExit) and exc.code in (0, None)):
        found = _NOT_A_NUMBER.search(result.output)
        if found:
            raise Unfinished(f"printed {found.group()!r}: {result.output[:300]!r}")
        return
    if isinstance(exc, click.UsageError) and exc.exit_code == 2:
        return
    raise exc


READERS: dict[str, tuple[Callable[..., Any], Callable[..., None]]] = {
    "catalogue": (gen_catalogue, read_catalogue),
    "spec_toml": (gen_spec_toml, read_spec_toml),
    "qos_plan": (gen_qos_plan, read_qos_plan),
    "blkparse": (gen_blkparse, read_blkparse),
    "tracepoints": (gen_tracepoints, read_tracepoints),
    "trace_times": (gen_trace_times, read_trace_times),
    "cli": (gen_cli, read_cli),
}


# --- the child process


class Overtime(BaseException):
    """An input read for longer than SECONDS_PER_INPUT."""


def _overtime(signum: int, frame: Any) -> None:
    raise Overtime(f"over {SECONDS_PER_INPUT:g} s")


def outcome(read: Callable[..., None], given: Any) -> str:
    """ "ok", "refused" (one line, exit 2) or what went wrong (a traceback)."""
    from volbench.errors import VolbenchError

    try:
        read(given)
    except VolbenchError as exc:
        message = str(exc)
        if exc.exit_code == 2 and "\n" not in message and "Traceback" not in message:
            return "refused"
        return f"exit {exc.exit_code} or not one line: {message[:500]!r}"
    except Overtime as exc:
        return str(exc)
    except BaseException:  # every other way out is a failure
        return "".join(traceback.format_exc(limit=-6))[-3000:]
    return "ok"


def main(kind: str, seed: str, count: int, folder: Path) -> None:
    generate, read = READERS[kind]
    os.environ["XDG_CONFIG_HOME"] = str(folder / "config")
    os.environ.pop("VOLBENCH_CATALOGUE", None)
    os.environ["VOLBENCH_DB"] = str(folder / "store.db")
    read_cli(["spec", "expect", "aws-gp3", "--size", "100"])  # import everything first
    read_cli(["import", str(FIO_OUTPUT)])  # run 1, for the commands naming a RUN
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    signal.signal(signal.SIGALRM, _overtime)
    out = sys.stdout
    for index in range(count):
        rng = random.Random(f"{seed}:{kind}:{index}")
        given, what = generate(rng, folder)
        start = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, SECONDS_PER_INPUT)
        try:
            result = outcome(read, given)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        seconds = time.perf_counter() - start
        record = {
            "kind": kind,
            "index": index,
            "what": what[:300],
            "outcome": result,
            "seconds": round(seconds, 4),
        }
        out.write(json.dumps(record) + "\n")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    out.write(json.dumps({"kind": kind, "done": count, "peak_rss_bytes": peak}) + "\n")
    out.flush()


def measure_large(path: Path) -> None:
    """Read the blkparse file ``path`` as :func:`read_blkparse` does, under the same
    address-space limit, and print (one JSON line) the outcome, the requests read,
    the seconds and this process's resident memory before reading and at its peak."""
    import volbench.analysis.workload_profile
    import volbench.trace.blkparse_text
    import volbench.trace.codec  # noqa: F401 (loaded before the memory is measured)

    requests: list[int] = []

    def read_counted(given: Path) -> None:
        trace = blkparse_trace(given)
        requests.append(len(trace))
        _trace_used(trace)

    before = _resident_bytes()
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    start = time.perf_counter()
    result = outcome(read_counted, path)
    record = {
        "outcome": result,
        "requests": requests[0] if requests else 0,
        "seconds": round(time.perf_counter() - start, 2),
        "before_rss_bytes": before,
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }
    sys.stdout.write(json.dumps(record) + "\n")


def _resident_bytes() -> int:
    """This process's resident memory now (``/proc/self/statm``, in pages)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


if __name__ == "__main__":
    if sys.argv[1] == "large":
        measure_large(Path(sys.argv[2]))
    else:
        main(sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]))
