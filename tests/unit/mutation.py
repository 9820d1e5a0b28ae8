"""Mutations of recorded fio outputs, for fuzzing ``volbench import``.

A :class:`Mutator` turns one fixture's text into a broken or hostile variant, chosen
by a seeded :class:`random.Random`: truncation, byte flips, numbers replaced in the
text (-1, -5000, 1e300, 2**70, 400-digit numbers, NaN, Infinity, ...), and changes to
the decoded JSON (values replaced or scaled, type swaps, key deletions, deep nesting,
json+ bins with bad keys or a changed ``FIO_IO_U_PLAT_BITS``, percentiles out of order,
clones whose latency blocks differ, texts and keys at and beyond the store's bounds,
times before fio's first release, far ahead or out of order). Every mutation
describes itself, so a failure can be reproduced from the seed and the description.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from typing import Any

NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")

TEXT_NUMBERS = (
    "-1",
    "-5000",
    "1e300",
    "-1e300",
    "1e400",
    str(2**70),
    str(2**63),
    str(-(2**63) - 1),
    "9" * 5000,
    "1" + "0" * 399,
    "-" + "9" * 400,
    "1" + "0" * 399 + ".5",
    str(2**64),
    "NaN",
    "Infinity",
    "-Infinity",
    "0",
    "1.5",
    "-0.0",
    "true",
    "null",
    '"12"',
)
"""Literals written over a number in the text (some are not numbers at all)."""

VALUES: tuple[Any, ...] = (
    -1,
    -5000,
    1e300,
    -1e300,
    2**70,
    -(2**70),
    2**63 - 1,
    2**62,
    10**399,
    -(10**399),
    float("nan"),
    float("inf"),
    float("-inf"),
    0,
    0.5,
    1.5,
    -0.0,
    True,
    None,
    "x",
    "\u0000",
    "\ud800",
    "[/red]",
    [],
    {},
    [1, 2],
    {"a": 1},
)
"""Values put in place of a decoded value (type swaps and impossible numbers)."""

LENGTHS = (127, 200, 201, 255, 256, 1000, 1001, 8192, 8193, 65_536, 65_537, 1_000_000)
"""Lengths of texts written over a string or a key: at and beyond each of the store's
bounds (:mod:`volbench.store.limits`) and far beyond."""

TIMES_S = (0, 5, 1_104_537_599, 1_104_537_600, 1_700_000_000, 4_102_444_800, 253_402_300_799)
"""Times (s since 1970) written over a time: 1970, just before and at 2005-01-01 (fio's
first release), 2023, 2100, the last second of year 9999."""

ISO_TIMES = (
    "0001-01-01T00:00:00+00:00",
    "1970-01-01T00:00:00+00:00",
    "2004-12-31T23:59:59+00:00",
    "2005-01-01T00:00:00+00:00",
    "2010-06-01T12:00:00+02:00",
    "2100-01-01T00:00:00+00:00",
    "9999-12-31T23:59:59+00:00",
)
"""ISO 8601 times written over a bundle's times (the same bounds)."""

_CLOCK_KEYS = {"timestamp": 1, "timestamp_ms": 1000, "job_start": 1000, "elapsed": 1}
"""fio's time fields and their unit per second."""

BAD_KEYS = ("abc", "-5", "1e5", "", "99999999999999999999999", "NaN", "1.5", " 7", "٣", "inf")
PLAT_BITS = (-1, 0, 5, 7, 64, 2**31, 10**6, -(10**6), 2**62)
SCALES = (2, 10, 1000, 10**6, 10**12, -1, 0, 0.5, 1e-9)

Path = tuple[str | int, ...]


def _paths(doc: Any) -> list[Path]:
    """Every path of a decoded document (containers and leaves), without recursion."""
    found: list[Path] = []
    stack: list[tuple[Any, Path]] = [(doc, ())]
    while stack:
        value, path = stack.pop()
        found.append(path)
        if isinstance(value, dict):
            stack.extend((v, (*path, k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, (*path, i)) for i, v in enumerate(value))
    return found


def _get(doc: Any, path: Path) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def _set(doc: Any, path: Path, value: Any) -> None:
    _get(doc, path[:-1])[path[-1]] = value


class Mutator:
    """Seeded mutations of one fio output (``text``: the file as recorded)."""

    def __init__(self, text: str, rng: random.Random) -> None:
        self.text = text
        self.rng = rng
        start, end = text.index("{"), text.rindex("}") + 1
        self.head, self.body, self.tail = text[:start], text[start:end], text[end:]
        doc = json.loads(self.body)
        self.paths = _paths(doc)[1:]
        self.latency_paths = [p for p in self.paths if _latency_block(_get(doc, p))]

    def mutate(self) -> tuple[bytes, str]:
        """One mutated file (bytes) and a description of what was done."""
        rng = self.rng
        steps = [rng.choice(TREE_STEPS) for _ in range(rng.choice((0, 1, 1, 2, 3)))]
        doc = json.loads(self.body)
        done: list[str] = []
        marks: dict[str, str] = {}
        for step in steps:
            done.append(step(self, doc, marks))
        text = self.head + json.dumps(doc, indent=rng.choice((None, 2))) + self.tail
        for mark, replacement in marks.items():
            text = text.replace(json.dumps(mark), replacement)
        if not steps or rng.random() < 0.4:
            text, what = rng.choice(TEXT_STEPS)(self, text)
            done.append(what)
        data = text.encode("utf-8", "surrogatepass")
        if rng.random() < 0.1 or not done:
            data, what = self.flip(data)
            done.append(what)
        return data, "; ".join(done)

    def _path(self, doc: Any, want: Callable[[Any], bool] = lambda _: True) -> Path | None:
        """A random existing path whose value passes ``want`` (None if 200 tries find
        none; earlier steps may have removed or replaced parts of ``doc``)."""
        pool = self.latency_paths if want is _latency_block else self.paths
        for _ in range(200 if pool else 0):
            path = self.rng.choice(pool)
            if _exists(doc, path) and want(_get(doc, path)):
                return path
        return None

    # text-level steps

    def truncate(self, text: str) -> tuple[str, str]:
        cut = self.rng.randrange(len(text))
        return text[:cut], f"truncated at {cut}"

    def numbers(self, text: str) -> tuple[str, str]:
        found = list(NUMBER.finditer(text))
        chosen = sorted(
            self.rng.sample(found, min(len(found), self.rng.randint(1, 3))), key=lambda m: m.start()
        )
        out, last, what = [], 0, []
        for match in chosen:
            literal = self.rng.choice(TEXT_NUMBERS)
            out += [text[last : match.start()], literal]
            last = match.end()
            what.append(f"{match.group()}@{match.start()}->{literal[:12]}")
        return "".join(out) + text[last:], "numbers " + ",".join(what)

    def flip(self, data: bytes) -> tuple[bytes, str]:
        buffer = bytearray(data or b" ")
        spots = [self.rng.randrange(len(buffer)) for _ in range(self.rng.randint(1, 8))]
        for spot in spots:
            buffer[spot] = self.rng.randrange(256)
        return bytes(buffer), f"flipped bytes {spots}"

    # tree-level steps: change ``doc`` in place, return a description

    def replace(self, doc: Any, marks: dict[str, str]) -> str:
        path = self._path(doc, lambda v: not isinstance(v, dict | list))
        if path is None:
            return "replace: nothing"
        value = self.rng.choice(VALUES)
        _set(doc, path, value)
        return f"replace {path} -> {value!r:.20}"

    def scale(self, doc: Any, marks: dict[str, str]) -> str:
        path = self._path(doc, lambda v: isinstance(v, int | float) and not isinstance(v, bool))
        if path is None:
            return "scale: nothing"
        factor = self.rng.choice(SCALES)
        value = _get(doc, path) * factor
        _set(doc, path, int(value) if isinstance(factor, int) and isinstance(value, int) else value)
        return f"scale {path} x{factor}"

    def swap_type(self, doc: Any, marks: dict[str, str]) -> str:
        path = self._path(doc)
        if path is None:
            return "swap: nothing"
        value = self.rng.choice((*VALUES[-6:], "text", 3, 2.5))
        _set(doc, path, value)
        return f"swap {path} -> {value!r:.20}"

    def delete(self, doc: Any, marks: dict[str, str]) -> str:
        path = self._path(doc)
        if path is None:
            return "delete: nothing"
        del _get(doc, path[:-1])[path[-1]]
        return f"delete {path}"

    def nest(self, doc: Any, marks: dict[str, str]) -> str:
        path = self._path(doc)
        if path is None:
            return "nest: nothing"
        depth = self.rng.choice((40, 900, 5000, 100_000))
        mark = f"@nest{len(marks)}@"
        opener, closer = self.rng.choice((("[", "]"), ('{"a":', "}")))
        marks[mark] = opener * depth + "1" + closer * depth
        _set(doc, path, mark)
        return f"nest {path} {depth} deep"

    def plat_bits(self, doc: Any, marks: dict[str, str]) -> str:
        path = self._path(doc, _latency_block)
        if path is None:
            return "plat bits: nothing"
        bins = _get(doc, path).setdefault("bins", {"100": 1})
        bins["FIO_IO_U_PLAT_BITS"] = bits = self.rng.choice(PLAT_BITS)
        if self.rng.random() < 0.5:
            bins["FIO_IO_U_PLAT_VAL"] = self.rng.choice((64, 1 << 40, -1))
            bins["FIO_IO_U_PLAT_NR"] = self.rng.choice((1216, 1856, 0, 10**9))
        bins[str(self.rng.choice((0, 127, 1215, 1855, 1856, 10**6)))] = 1
        return f"plat bits {path} = {bits}"

    def bad_bin(self, doc: Any, marks: dict[str, str]) -> str:
        path = self._path(doc, _latency_block)
        if path is None:
            return "bad bin: nothing"
        bins = _get(doc, path).setdefault("bins", {})
        key = self.rng.choice((*BAD_KEYS, str(10**15), "1"))
        bins[key] = self.rng.choice((1, -1, 0, 2**62, 1.5, "x"))
        return f"bin {path} {key!r}={bins[key]!r}"

    def percentile(self, doc: Any, marks: dict[str, str]) -> str:
        path = self._path(doc, _latency_block)
        if path is None:
            return "percentile: nothing"
        table = _get(doc, path).setdefault("percentile", {})
        key = self.rng.choice((*BAD_KEYS, "99.000000", "50.000000", "100.000000", "101", "-1"))
        table[key] = self.rng.choice((0, 1, 10**12, 2**63 - 1, -1, 5.5))
        return f"percentile {path} {key!r}={table[key]!r}"

    def long_text(self, doc: Any, marks: dict[str, str]) -> str:
        """A string (a job name, host, option, label, test...) or a key made long."""
        length = self.rng.choice(LENGTHS)
        text = self.rng.choice(("x", "é", "名")) * length
        path = self._path(doc, lambda v: isinstance(v, str))
        if path is not None and self.rng.random() < 0.8:
            _set(doc, path, text)
            return f"long text {path} {length}"
        path = self._path(doc, lambda v: isinstance(v, dict))
        if path is None:
            return "long text: nothing"
        _get(doc, path)[text] = self.rng.choice(("v", 1, "x" * length))
        return f"long key {path} {length}"

    def clock(self, doc: Any, marks: dict[str, str]) -> str:
        """A time made one fio cannot have printed or a store cannot hold (before 2005,
        far ahead), or two times put out of order (a start after its end)."""
        path = self._path(
            doc,
            lambda v: isinstance(v, str) and v[:2] in ("19", "20") and "T" in v[:12],
        )
        if path is not None and self.rng.random() < 0.5:  # a bundle's ISO times
            value = self.rng.choice(ISO_TIMES)
            _set(doc, path, value)
            return f"clock {path} = {value}"
        paths = [p for p in self.paths if p and p[-1] in _CLOCK_KEYS and _exists(doc, p)]
        if not paths:
            return "clock: nothing"
        path = self.rng.choice(paths)
        unit = _CLOCK_KEYS[str(path[-1])]
        if path[-1] == "elapsed":
            seconds = self.rng.choice((0, 1, 10**6, 10**9, 2 * 10**9))
        else:
            seconds = self.rng.choice(TIMES_S)
        _set(doc, path, seconds * unit)
        if self.rng.random() < 0.3 and isinstance(doc, dict):
            doc.pop(self.rng.choice(("timestamp", "timestamp_ms")), None)
        return f"clock {path} = {seconds * unit}"

    def clone(self, doc: Any, marks: dict[str, str]) -> str:
        """A copy of a job whose latency blocks lose their distribution (a clone that
        reports another latency kind), sometimes in another group or on another host."""
        jobs = doc.get("jobs") or doc.get("client_stats")
        if not isinstance(jobs, list) or not jobs or not isinstance(jobs[0], dict):
            return "clone: nothing"
        copy = json.loads(json.dumps(self.rng.choice(jobs)))
        for name in ("read", "write"):
            block = copy.get(name)
            if isinstance(block, dict):
                for kind in self.rng.sample(["lat_ns", "clat_ns", "lat", "clat"], 2):
                    if isinstance(block.get(kind), dict):
                        block[kind].pop("percentile", None)
                        block[kind].pop("bins", None)
                        if self.rng.random() < 0.3:
                            del block[kind]
        if self.rng.random() < 0.3:
            copy["hostname"] = "elsewhere"
        jobs.append(copy)
        return "clone with other latency blocks"


def _latency_block(value: Any) -> bool:
    return isinstance(value, dict) and "min" in value and "max" in value


def _exists(doc: Any, path: Path) -> bool:
    """Whether ``path`` leads through containers (dicts and lists) to a value: an earlier
    step may have replaced a list by a text, which an index still reads (a letter) but
    no step can write into."""
    for key in path:
        if not isinstance(doc, dict | list):
            return False
        try:
            doc = doc[key]
        except (KeyError, IndexError, TypeError):
            return False
    return True


TEXT_STEPS: tuple[Callable[[Mutator, str], tuple[str, str]], ...] = (
    Mutator.truncate,
    Mutator.numbers,
    Mutator.numbers,
)
TREE_STEPS: tuple[Callable[[Mutator, Any, dict[str, str]], str], ...] = (
    Mutator.replace,
    Mutator.replace,
    Mutator.scale,
    Mutator.swap_type,
    Mutator.delete,
    Mutator.nest,
    Mutator.plat_bits,
    Mutator.bad_bin,
    Mutator.percentile,
    Mutator.clone,
    Mutator.long_text,
    Mutator.clock,
)
