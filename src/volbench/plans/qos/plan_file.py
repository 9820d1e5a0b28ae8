"""Reading a QoS plan file written by ``volbench qos plan --format json``.

The file is hostile input: at most :data:`MAX_BYTES` (1 MiB) of UTF-8 JSON, nested
at most :data:`MAX_DEPTH` deep, with no ``NaN`` or ``Infinity`` (Python's ``json``
reads them; JSON itself has no such numbers); the document is then checked field
by field (:func:`volbench.analysis.qos_document.plan_from_document`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from volbench.analysis.qos import QosPlan
from volbench.analysis.qos_document import plan_from_document
from volbench.errors import UsageError
from volbench.text_file import read_text

MAX_BYTES = 1 << 20
MAX_DEPTH = 32


def read_plan(path: str) -> QosPlan:
    """Read a plan file written by ``volbench qos plan --format json``."""
    text = read_text(Path(path), MAX_BYTES, "QoS plan")
    if _depth(text) > MAX_DEPTH:
        raise UsageError(f"QoS plan {path} is nested more than {MAX_DEPTH} deep: not a plan")
    try:
        data = json.loads(text, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise UsageError(f"QoS plan {path} is not JSON (line {exc.lineno}): {exc.msg}") from exc
    except ValueError as exc:
        raise UsageError(f"QoS plan {path}: {exc}") from None
    return plan_from_document(data)


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON holds")


def _depth(text: str) -> int:
    """How deep the brackets of ``text`` nest (outside strings): checked before parsing,
    as Python's ``json`` recurses once per level."""
    deepest = depth = 0
    inside = escaped = False
    for char in text:
        if inside:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                inside = False
        elif char == '"':
            inside = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest
