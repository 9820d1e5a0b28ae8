"""Mutations shared by the reader fuzz's generators (:mod:`reader_inputs`): values put
in place of a decoded document's values, keys deleted or added, values nested deep or
repeated, and text-level changes (numbers replaced, truncation, byte flips)."""

from __future__ import annotations

import copy
import datetime
import random
import re
from typing import Any

# The fuzzers' literals, packed: one a line would make these two tables 90 lines long.
# fmt: off
TEXT_NUMBERS = (
    "nan", "NaN", "inf", "-inf", "Infinity", "1e400", "1e308", "-1e308", "1e-400", "-1",
    "0", "-0", "0.5", "1.5", "9" * 5000, str(2**63), str(2**64), str(2**70), "1.2.3", "",
    " ", "0x10", "1_000", "\u0661\u0662", "99999999999999999999999999999999999999999",
    "4k", "8e", "1..2", "1-", "--1", "1e", ".", "+5", "1,,2", "\x00", "\n5",
    "1" + "0" * 399, "-" + "9" * 400, str(2**63 - 1), "99999999999999999999",
)
"""Literals written over a number (many are not numbers at all)."""

VALUES: tuple[Any, ...] = (
    -1, 0, 0.5, 1.5, 1e300, -1e300, 2**63, 2**70, 10**400, float("nan"), float("inf"),
    float("-inf"), True, None, "x", "", "\x00", "9" * 5000, "1e999", [], {}, [1, 2],
    {"a": 1}, [[1]], datetime.date(2001, 1, 1), "size * size", "min()", "(" * 150 + "1",
)
"""Values put in place of a decoded value (wrong types and impossible numbers)."""

PRODUCTS = ("aws-gp3", "aws-io2", "aws-gp2", "aws-st1", "azure-premium-ssd-v2",
            "aliyun-essd-pl1", "tencent-cloud-hssd", "ucloud-rssd", "gcp-pd-ssd")
# fmt: on

NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")


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


def number_text(rng: random.Random) -> str:
    """An option value: hostile, large or plain."""
    pick = rng.random()
    if pick < 0.45:
        return rng.choice(TEXT_NUMBERS)
    if pick < 0.7:
        return str(rng.choice((1, 2, 64, 100, 4096, 4097, 65536, 65537, 10**6, 10**12, 10**13)))
    if pick < 0.85:
        return f"{rng.uniform(0, 1000):.3f}"
    return f"1e{rng.randint(-400, 400)}"
