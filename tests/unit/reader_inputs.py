"""Hostile inputs for volbench's readers, each made again from its kind, seed and index.

A generator turns a valid input into a broken or hostile one with the
``random.Random`` it is given (:mod:`reader_fuzz` seeds it with
``f"{seed}:{kind}:{index}"``) and the mutations of :mod:`reader_mutations`; trace text
also has lines cut, shuffled or repeated, and option values go through the command
line (``--dry-run``, ``spec``, ``cost``, ``qos``). Each returns what to read (a file
written under the folder it is given, or the command's arguments) and what it did.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import yaml
from reader_mutations import PRODUCTS, VALUES, mutate_text, mutate_tree, number_text

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

# --- the generators: one hostile input each, written under ``folder``


USER_CATALOGUE = """\
sources: {NE1: "a private cloud's page (undated)"}
source_dates: {NE1: 2015-06-01}
products:
  - id: private-ssd
    vendor: Private
    name: SSD
    size_unit: GiB
    capacity: {min: 10, max: 2000, quote: q, st: V, src: [NE1]}
    latency: {max_ms: 2, text: under 2 ms, st: S, src: [NE1]}
    editions:
      - from: 2015-06-01
        label: v1
        iops: {expr: "min(30 * size, 20000)", quote: q, st: V, src: [NE1]}
        throughput: {tiers: [[100, 50], [2000, 400]], unit: MB/s, quote: q, st: V, src: [NE1]}
        burst: {iops: 30000, max_minutes: 10, quote: b, st: S, src: [NE1]}
        limits:
          - {variable: provisioned_iops, max: 10 * size, quote: q, st: V, src: [NE1]}
    prices:
      - {value: 0.5, currency: CNY, per: GB-month, quote: "0.5", st: R, src: [NE1]}
"""
"""A valid user catalogue (CATALOGUE.md's schema): the input every mutation starts from."""


def _user_catalogue() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(USER_CATALOGUE)
    return document


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
    if isinstance(value, int | str):  # an int of any size: TOML's own limit is the test
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
        lines[index] = f"{key} = {_toml_value(value)}"
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


def _options(rng: random.Random, names: tuple[str, ...]) -> list[str]:
    """One to three of ``names``, each with a value (:data:`_RUN_VALUES` or a number)."""
    args: list[str] = []
    for name in rng.sample(names, rng.randint(1, min(3, len(names)))):
        make = _RUN_VALUES.get(name, number_text)
        args += [name, make(rng)]
    return args


def _count_list(rng: random.Random) -> str:
    low, high = rng.choice((1, 0, 2, 5)), number_text(rng)
    return rng.choice((f"{low}..{high}", f"{low}-{high}", f"{low},{high}", high))


_RUN_VALUES = {
    "--label": lambda r: f"size_gib={number_text(r)}",
    "--iodepth": _count_list,
    "--numjobs": _count_list,
    "--workers": _count_list,
    "--bs": lambda r: number_text(r) + r.choice(("", "k", "m", "g", "p")),
    "--latency-target": lambda r: number_text(r) + r.choice(("ms", "us")),
    "--host-reserve": lambda r: f"riops={number_text(r)}",
}
"""Option values of a form of their own (any other option gets a number's text)."""


def run_ref(rng: random.Random) -> str:
    """A RUN: the stored run (1, latest), one not stored, or any number's text (beyond
    64 bits, 400 digits, negative, not a number)."""
    pick = rng.random()
    if pick < 0.3:
        return rng.choice(("1", "latest", " 1 ", "LATEST", "2", str(2**63 - 1), str(2**63)))
    return number_text(rng)


def long_label(rng: random.Random) -> str:
    """A label whose key or value is at, beyond or far beyond what the store keeps."""
    key_length, value_length = rng.choice(((1, 1000), (1, 1001), (200, 5), (201, 5), (5, 10**6)))
    return "k" * key_length + "=" + rng.choice(("v", "é")) * value_length


def gen_store_cli(rng: random.Random) -> list[str]:
    """A command over the store (holding run 1, an imported fio output) naming a RUN
    or a label: ``show``, ``export``, ``explain``, ``check``, ``compare``, ``label``,
    ``runs --label``, ``fingerprint``, ``pts-report``, ``qos fit``."""
    ref = run_ref(rng)
    return rng.choice(
        (
            ["show", ref],
            ["export", ref, "--format", "csv"],
            ["explain", ref],
            ["check", ref],
            ["compare", "1", ref, "--format", "json"],
            ["label", ref, "a=b"],
            ["runs", "--label", long_label(rng)],
            ["fingerprint", ref],
            ["pts-report", ref],
            ["qos", "fit", ref],
            ["label", "1", long_label(rng)],
            ["export", "1", ref, "-o", "-"],
        )
    )


def gen_cli(rng: random.Random, folder: Path) -> tuple[list[str], str]:
    target = str(folder / "no-such-target.img")
    run = ["--dry-run", "--target", target, "--size", "8m"]
    n = number_text
    kind = rng.choice(
        ("sweep", "iometer", "expect", "curve", "cost", "fit", "plan", "predict", "store")
    )
    if kind == "store":
        args = gen_store_cli(rng)
        return args, " ".join(a[:30] for a in args[:12])
    if kind == "sweep":
        args = [
            "run",
            "sweep",
            *run,
            *_options(
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
            ),
        ]
        if "--label" in args and rng.random() < 0.7:
            args += ["--product", rng.choice(PRODUCTS)]
    elif kind == "iometer":
        args = [
            "run",
            "iometer",
            *run,
            *_options(rng, ("--workers", "--outstanding", "--runtime", "--ramp-time")),
        ]
        if rng.random() < 0.3:
            args += ["--spec-file", str(gen_spec_toml(rng, folder)[0]), "--spec", "oltp"]
    elif kind == "expect":
        args = [
            "spec",
            "expect",
            rng.choice(PRODUCTS),
            "--size",
            n(rng),
            *_options(
                rng, ("--provisioned-iops", "--provisioned-mbps", "--extra-performance", "--as-of")
            ),
        ]
        if rng.random() < 0.15:
            args[2:3] = ["private-ssd", "--catalogue", str(gen_catalogue(rng, folder)[0])]
    elif kind == "curve":
        args = [
            "spec",
            "curve",
            rng.choice(PRODUCTS),
            "--max-size",
            n(rng),
            *_options(rng, ("--points", "--provisioned-iops")),
        ]
    elif kind == "cost":
        args = [
            "cost",
            rng.choice(PRODUCTS),
            "--size",
            n(rng),
            *_options(rng, ("--months", "--hours", "--provisioned-iops", "--provisioned-mbps")),
        ]
    elif kind == "fit":
        args = [
            "qos",
            "fit",
            "--capability",
            n(rng),
            "--host-used",
            n(rng),
            f"--measured=a={n(rng)}",
            f"--measured=b={n(rng)}",
        ]
    elif kind == "plan":
        args = [
            "qos",
            "plan",
            "--capability",
            f"iops={n(rng)},bps={n(rng)}",
            "--tenant",
            f"a:{n(rng)}",
            "--tenant",
            f"b:{n(rng)}",
            *_options(rng, ("--alpha", "--volume-size", "--host-reserve")),
        ]
    else:
        args = [
            "qos",
            "predict",
            "--capability",
            f"iops={n(rng)}",
            "--alpha",
            n(rng),
            "--tenant",
            f"a:{n(rng)}",
            "--host-used",
            f"iops={n(rng)}",
        ]
    if rng.random() < 0.2:
        args += ["--format", "json"]
    return args, " ".join(a[:30] for a in args[:12])
