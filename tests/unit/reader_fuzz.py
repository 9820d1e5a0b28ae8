"""Generated hostile inputs for volbench's readers, and the child process that reads them.

Each reader (:data:`READERS`) has a generator that turns a valid input into a broken
or hostile one, chosen by ``random.Random(f"{seed}:{kind}:{index}")`` so any input is
made again from its kind, seed and index: values replaced in the decoded document
(``nan``, ``inf``, 2**70, 5,000 digits, wrong types, deep nesting), keys deleted or
added, numbers in the text replaced, truncation, byte flips, lines cut or repeated;
option values through the command line (``--dry-run``, ``spec``, ``cost``, ``qos``).

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

import copy
import datetime
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

import yaml

SECONDS_PER_INPUT = 10.0
MEMORY_BYTES = 1 << 30

HERE = Path(__file__).parent
BLKPARSE = (HERE.parent / "fixtures" / "blkparse" / "mixed.txt").read_text()
TRACEPOINTS = """\
# tracer: nop
             fio-31194   [000] ..... 12715.800443: block_rq_issue: 7,0 R 4096 () 31616 + 8 be,0,4 [fio]
             fio-31194   [001] ..... 12715.800500: block_rq_issue: 7,0 WS 65536 () 100 + 128 be,0,4 [fio]
     ksoftirqd/0-14      [000] ..s.. 12715.802762: block_rq_complete: 7,0 R () 31616 + 8 be,0,4 [0]
CPU:1 [LOST 12 EVENTS]
          <idle>-0       [001] d.h1. 12715.803000: block_rq_complete: 7,0 WS () 100 + 128 be,0,4 [0]
             fio-31194   [000] ..... 12715.804000: block_rq_issue: 7,0 R 4096 () 999 + 8 [fio]
             dd-7        [000] ..... 12715.805000: block_rq_issue: 7,0 FF 0 () 0 + 0 be,0,4 [dd]
"""  # noqa: E501 (as the kernel prints them)

TEXT_NUMBERS = (
    "nan",
    "NaN",
    "inf",
    "-inf",
    "Infinity",
    "1e400",
    "1e308",
    "-1e308",
    "1e-400",
    "-1",
    "0",
    "-0",
    "0.5",
    "1.5",
    "9" * 5000,
    str(2**63),
    str(2**64),
    str(2**70),
    "1.2.3",
    "",
    " ",
    "0x10",
    "1_000",
    "\u0661\u0662",
    "99999999999999999999999999999999999999999",
    "4k",
    "8e",
    "1..2",
    "1-",
    "--1",
    "1e",
    ".",
    "+5",
    "1,,2",
    "\x00",
    "\n5",
)
"""Literals written over a number (many are not numbers at all)."""

VALUES: tuple[Any, ...] = (
    -1,
    0,
    0.5,
    1.5,
    1e300,
    -1e300,
    2**63,
    2**70,
    10**400,
    float("nan"),
    float("inf"),
    float("-inf"),
    True,
    None,
    "x",
    "",
    "\x00",
    "9" * 5000,
    "1e999",
    [],
    {},
    [1, 2],
    {"a": 1},
    [[1]],
    datetime.date(2001, 1, 1),
    "size * size",
    "min()",
    "(" * 150 + "1",
)
"""Values put in place of a decoded value (wrong types and impossible numbers)."""

NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")

PRODUCTS = (
    "aws-gp3",
    "aws-io2",
    "aws-gp2",
    "aws-st1",
    "azure-premium-ssd-v2",
    "aliyun-essd-pl1",
    "tencent-cloud-hssd",
    "ucloud-rssd",
    "gcp-pd-ssd",
)


# --- mutations of decoded documents and of text


def _paths(doc: Any) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(doc, ())]
    while stack and len(found) < 20_000:
        value, path = stack.pop()
        found.append(path)
        if len(path) > 12:  # what an earlier step nested: not walked into
            continue
        if isinstance(value, dict):
            stack.extend((v, (*path, k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, (*path, i)) for i, v in enumerate(value))
    return found


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        doc = doc[key]
    return doc


def _nested(rng: random.Random) -> Any:
    value: Any = rng.choice((1, "x", None))
    for _ in range(rng.choice((20, 200, 3000))):
        value = [value] if rng.random() < 0.5 else {"k": value}
    return value


def mutate_tree(doc: Any, rng: random.Random) -> str:
    """Change ``doc`` in place 1-3 times; return what was done."""
    done = []
    for _ in range(rng.choice((1, 1, 2, 3))):
        paths = _paths(doc)[1:]
        if not paths:
            break
        path = rng.choice(paths)
        parent = _parent(doc, path)
        step = rng.random()
        if step < 0.55:
            parent[path[-1]] = rng.choice(VALUES)
            done.append(f"replace {path}")
        elif step < 0.7 and isinstance(parent, dict):
            del parent[path[-1]]
            done.append(f"delete {path}")
        elif step < 0.8 and isinstance(parent, dict):
            parent[rng.choice(("extra", "1", "", "name"))] = rng.choice(VALUES)
            done.append(f"add key at {path[:-1]}")
        elif step < 0.9:
            parent[path[-1]] = _nested(rng)
            done.append(f"nest {path}")
        else:
            value, times = parent[path[-1]], rng.choice((2, 200))
            try:
                parent[path[-1]] = [copy.deepcopy(value) for _ in range(times)]
            except RecursionError:  # a value nested by an earlier step: the same object
                parent[path[-1]] = [value] * times
            done.append(f"repeat {path}")
    return "; ".join(done)


def mutate_text(text: str, rng: random.Random) -> tuple[bytes, str]:
    """A text-level change of ``text``: numbers replaced, truncated, bytes flipped."""
    step = rng.random()
    if step < 0.55:
        found = list(NUMBER.finditer(text))
        if found:
            match = rng.choice(found)
            literal = rng.choice(TEXT_NUMBERS)
            text = text[: match.start()] + literal + text[match.end() :]
            return text.encode("utf-8", "surrogatepass"), f"number@{match.start()}->{literal[:12]}"
    if step < 0.7:
        cut = rng.randrange(len(text) + 1)
        return text[:cut].encode(), f"truncated at {cut}"
    data = bytearray(text.encode() or b" ")
    spots = [rng.randrange(len(data)) for _ in range(rng.randint(1, 8))]
    for spot in spots:
        data[spot] = rng.randrange(256)
    return bytes(data), f"flipped {spots}"


def _number_text(rng: random.Random) -> str:
    """An option value: hostile, large or plain."""
    pick = rng.random()
    if pick < 0.45:
        return rng.choice(TEXT_NUMBERS)
    if pick < 0.7:
        return str(rng.choice((1, 2, 64, 100, 4096, 4097, 65536, 65537, 10**6, 10**12, 10**13)))
    if pick < 0.85:
        return f"{rng.uniform(0, 1000):.3f}"
    return f"1e{rng.randint(-400, 400)}"


# --- the generators: one hostile input each, written under ``folder``


def _user_catalogue() -> dict[str, Any]:
    return {
        "sources": {"NE1": "a private cloud's page (undated)"},
        "source_dates": {"NE1": "2015-06-01"},
        "products": [
            {
                "id": "private-ssd",
                "vendor": "Private",
                "name": "SSD",
                "size_unit": "GiB",
                "capacity": {"min": 10, "max": 2000, "quote": "q", "st": "V", "src": ["NE1"]},
                "latency": {"max_ms": 2, "text": "under 2 ms", "st": "S", "src": ["NE1"]},
                "editions": [
                    {
                        "from": "2015-06-01",
                        "label": "v1",
                        "iops": {
                            "expr": "min(30 * size, 20000)",
                            "quote": "q",
                            "st": "V",
                            "src": ["NE1"],
                        },
                        "throughput": {
                            "tiers": [[100, 50], [2000, 400]],
                            "unit": "MB/s",
                            "quote": "q",
                            "st": "V",
                            "src": ["NE1"],
                        },
                        "burst": {
                            "iops": 30000,
                            "max_minutes": 10,
                            "quote": "b",
                            "st": "S",
                            "src": ["NE1"],
                        },
                        "limits": [
                            {
                                "variable": "provisioned_iops",
                                "max": "10 * size",
                                "quote": "q",
                                "st": "V",
                                "src": ["NE1"],
                            }
                        ],
                    }
                ],
                "prices": [
                    {
                        "value": 0.5,
                        "currency": "CNY",
                        "per": "GB-month",
                        "quote": "0.5",
                        "st": "R",
                        "src": ["NE1"],
                    }
                ],
            }
        ],
    }


def gen_catalogue(rng: random.Random, folder: Path) -> tuple[Path, str]:
    doc = _user_catalogue()
    what = mutate_tree(doc, rng) if rng.random() < 0.8 else "valid"
    try:
        text = yaml.safe_dump(doc, sort_keys=False)
    except (yaml.YAMLError, RecursionError):
        text = "products: []\n"
        what += "; not dumpable"
    data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.3:
        data, more = mutate_text(text, rng)
        what += "; " + more
    path = folder / "catalogue.yaml"
    path.write_bytes(data)
    return path, what


SPEC = "[[spec]]\nname = 'oltp'\ntransfer = '8k'\nread_pct = 70\nrandom_pct = 100\nalign = '4k'\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(str(value), repr(value))
    if isinstance(value, int | str):
        return json.dumps(value) if isinstance(value, str) else str(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"
    return '"other"'


def gen_spec_toml(rng: random.Random, folder: Path) -> tuple[Path, str]:
    lines = SPEC.splitlines()
    step = rng.random()
    if step < 0.5:
        index = rng.randrange(1, len(lines))
        key = lines[index].split(" = ")[0]
        value = rng.choice(VALUES)
        lines[index] = (
            f"{key} = {_toml_value(value) if not isinstance(value, int) or abs(value) < 2**63 else value}"  # noqa: E501
        )
        what = f"{key} -> {str(value)[:20]}"
    elif step < 0.6:
        lines = [f"spec = {_toml_value(rng.choice(VALUES))}"]
        what = "spec is a value"
    elif step < 0.7:
        depth = rng.choice((50, 2000))
        lines = ["spec = " + "[" * depth + "]" * depth]
        what = f"nested {depth}"
    elif step < 0.8:
        lines = lines * rng.choice((2, 300))
        what = "repeated"
    else:
        data, what = mutate_text(SPEC, rng)
        path = folder / "specs.toml"
        path.write_bytes(data)
        return path, what
    path = folder / "specs.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    return path, what


def _plan_document() -> dict[str, Any]:
    from volbench.analysis.qos import Rates, Tenant, make_plan
    from volbench.analysis.qos_document import plan_document

    plan = make_plan(
        Rates(3888, 156, 4e8, 2e8),
        Rates(975, 0, 0, 0),
        [Tenant("web", 40), Tenant("db", 60)],
        alpha=0.2,
    )
    return plan_document(plan)


def gen_qos_plan(rng: random.Random, folder: Path) -> tuple[Path, str]:
    doc = _plan_document()
    what = mutate_tree(doc, rng) if rng.random() < 0.85 else "valid"
    try:
        text = json.dumps(doc)
    except (ValueError, RecursionError, TypeError):
        text = json.dumps(_plan_document())
        what += "; not dumpable"
    data = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.3:
        data, more = mutate_text(text, rng)
        what += "; " + more
    path = folder / "plan.json"
    path.write_bytes(data)
    return path, what


def _lines_mutated(text: str, rng: random.Random) -> tuple[bytes, str]:
    lines = text.splitlines(keepends=True)
    step = rng.random()
    if step < 0.6:
        return mutate_text(text, rng)
    if step < 0.75:
        index = rng.randrange(len(lines))
        lines[index] = lines[index].rstrip("\n") * rng.choice((2, 100)) + "\n"
        return "".join(lines).encode(), f"line {index} repeated within"
    if step < 0.9:
        rng.shuffle(lines)
        return "".join(lines).encode(), "shuffled"
    return ("".join(lines) * rng.choice((2, 50))).encode(), "repeated"


def gen_blkparse(rng: random.Random, folder: Path) -> tuple[Path, str]:
    data, what = _lines_mutated(BLKPARSE, rng)
    path = folder / "trace.txt"
    path.write_bytes(data)
    return path, what


def gen_tracepoints(rng: random.Random, folder: Path) -> tuple[Path, str]:
    data, what = _lines_mutated(TRACEPOINTS, rng)
    path = folder / "tracepoints.txt"
    path.write_bytes(data)
    return path, what


def _options(rng: random.Random, names: tuple[str, ...], special: dict[str, Any]) -> list[str]:
    args: list[str] = []
    for name in rng.sample(names, rng.randint(1, min(3, len(names)))):
        make = special.get(name)
        args += [name, make(rng) if make else _number_text(rng)]
    return args


def _count_list(rng: random.Random) -> str:
    low, high = rng.choice((1, 0, 2, 5)), _number_text(rng)
    return rng.choice((f"{low}..{high}", f"{low}-{high}", f"{low},{high}", high))


def gen_cli(rng: random.Random, folder: Path) -> tuple[list[str], str]:
    target = str(folder / "no-such-target.img")
    kind = rng.choice(("sweep", "iometer", "expect", "curve", "cost", "fit", "plan", "predict"))
    if kind == "sweep":
        args = ["run", "sweep", "--dry-run", "--target", target, "--size", "8m"]
        args += _options(
            rng,
            (
                "--bs",
                "--iodepth",
                "--numjobs",
                "--runtime",
                "--ramp-time",
                "--latency-target",
                "--rwmixread",
                "--size",
                "--hourly-cost",
                "--label",
                "--stall-seconds",
            ),
            {
                "--label": lambda r: f"size_gib={_number_text(r)}",
                "--iodepth": _count_list,
                "--numjobs": _count_list,
                "--bs": lambda r: _number_text(r) + r.choice(("", "k", "m", "g", "p")),
                "--latency-target": lambda r: _number_text(r) + r.choice(("ms", "us")),
            },
        )
    elif kind == "iometer":
        args = ["run", "iometer", "--dry-run", "--target", target, "--size", "8m"]
        args += _options(
            rng,
            ("--workers", "--outstanding", "--runtime", "--ramp-time"),
            {"--workers": _count_list},
        )
        if rng.random() < 0.3:
            path, _ = gen_spec_toml(rng, folder)
            args += ["--spec-file", str(path), "--spec", "oltp"]
        if "--label" in args and rng.random() < 0.7:
            args += ["--product", rng.choice(PRODUCTS)]
    elif kind == "expect":
        args = ["spec", "expect", rng.choice(PRODUCTS), "--size", _number_text(rng)]
        if rng.random() < 0.15:
            path, _ = gen_catalogue(rng, folder)
            args[2:3] = ["private-ssd", "--catalogue", str(path)]
        args += _options(
            rng, ("--provisioned-iops", "--provisioned-mbps", "--extra-performance", "--as-of"), {}
        )
    elif kind == "curve":
        args = ["spec", "curve", rng.choice(PRODUCTS), "--max-size", _number_text(rng)]
        args += _options(rng, ("--points", "--provisioned-iops"), {})
    elif kind == "cost":
        args = ["cost", rng.choice(PRODUCTS), "--size", _number_text(rng)]
        args += _options(
            rng, ("--months", "--hours", "--provisioned-iops", "--provisioned-mbps"), {}
        )
    elif kind == "fit":
        args = ["qos", "fit", "--capability", _number_text(rng), "--host-used", _number_text(rng)]
        args += [f"--measured=a={_number_text(rng)}", f"--measured=b={_number_text(rng)}"]
    elif kind == "plan":
        args = [
            "qos",
            "plan",
            "--capability",
            f"iops={_number_text(rng)},bps={_number_text(rng)}",
            "--tenant",
            f"a:{_number_text(rng)}",
            "--tenant",
            f"b:{_number_text(rng)}",
        ]
        args += _options(
            rng,
            ("--alpha", "--volume-size", "--host-reserve"),
            {"--host-reserve": lambda r: f"riops={_number_text(r)}"},
        )
    else:
        args = [
            "qos",
            "predict",
            "--capability",
            f"iops={_number_text(rng)}",
            "--alpha",
            _number_text(rng),
            "--tenant",
            f"a:{_number_text(rng)}",
            "--host-used",
            f"iops={_number_text(rng)}",
        ]
    if rng.random() < 0.2:
        args += ["--format", "json"]
    return args, " ".join(a[:30] for a in args[:12])


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
    from volbench.plans.qos_plan_file import read_plan

    json.dumps(plan_document(read_plan(str(path))), allow_nan=False)


def _trace_used(trace: Any) -> None:
    from volbench.analysis.workload_profile import characterise
    from volbench.trace import codec

    codec.pack(trace)
    characterise(trace)


def read_blkparse(path: Path) -> None:
    from volbench.trace import blkparse_text

    with path.open(errors="replace") as lines:
        found = blkparse_text.events_by_device(lines)
    device = blkparse_text.pick_device(found, str(path))
    _trace_used(blkparse_text.build(found[device]))


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


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]))
