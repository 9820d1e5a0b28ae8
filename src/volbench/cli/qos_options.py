"""Option types of the ``volbench qos`` commands: rates, tenants, measured values."""

from __future__ import annotations

import re

from volbench.analysis.qos import Tenant
from volbench.cli.options import Converted
from volbench.errors import UsageError
from volbench.units import GiB, parse_size

_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")


def _float(text: str, what: str) -> float:
    if not _NUMBER.match(text.strip()):
        raise UsageError(f"invalid {what} {text!r}: use a number, e.g. 3888")
    return float(text)


def parse_rates(text: str) -> tuple[float, float]:
    """``iops=N,bps=SIZE`` to (IOPS, bytes/s); either may be left out (0 = not given).

    bps takes a byte count or a size with a binary suffix per second (``400m`` =
    400 MiB/s), as fio's ``rate=`` does.
    """
    iops = bps = 0.0
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        key = key.strip().lower()
        if not sep or key not in ("iops", "bps"):
            raise UsageError(f"invalid rate {part!r}: use iops=N,bps=SIZE, e.g. iops=3888,bps=400m")
        if key == "iops":
            iops = _float(value, "IOPS")
        else:
            bps = float(parse_size(value.strip()))
    return iops, bps


def parse_tenant(text: str) -> Tenant:
    """``NAME:SIZE`` to a tenant: a plain number is GiB (``40``), else a size (``512m``)."""
    name, sep, size = text.rpartition(":")
    if not sep or not name:
        raise UsageError(f"invalid tenant {text!r}: use NAME:SIZE, e.g. web:40 (GiB) or db:512m")
    size = size.strip()
    gib = float(size) if _NUMBER.match(size) else parse_size(size) / GiB
    return Tenant(name.strip(), gib)


def parse_measured(text: str) -> tuple[str, float]:
    """``NAME=VALUE``: a tenant's measured IOPS."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise UsageError(f"invalid measurement {text!r}: use NAME=IOPS, e.g. web=118")
    return name.strip(), _float(value.strip(), "measured value")


RATES = Converted("iops=N,bps=SIZE", parse_rates)
TENANT = Converted("NAME:SIZE", parse_tenant)
MEASURED = Converted("NAME=IOPS", parse_measured)
