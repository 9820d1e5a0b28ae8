"""Reading a QoS plan file written by ``volbench qos plan --format json``."""

from __future__ import annotations

import json
from pathlib import Path

from volbench.analysis.qos import QosPlan
from volbench.analysis.qos_document import plan_from_document
from volbench.errors import UsageError


def read_plan(path: str) -> QosPlan:
    """Read a plan file written by ``volbench qos plan --format json``."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise UsageError(f"cannot read QoS plan {path}: {exc.strerror or exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"QoS plan {path} is not JSON (line {exc.lineno}): {exc.msg}") from exc
    return plan_from_document(data)
