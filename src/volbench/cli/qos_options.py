"""Option types of the ``volbench qos`` commands: rates, tenants, measured values."""

from __future__ import annotations

import re

import click

from volbench.analysis.qos import Rates, Tenant
from volbench.cli.options import Converted, parse_number
from volbench.errors import UsageError
from volbench.units import GiB, parse_size, shown

_NUMBER = re.compile(r"^\d{1,40}(?:\.\d{1,40})?\Z")
MAX_FIGURE = 1e12
"""The largest IOPS or GiB taken (far above any device): every figure is finite."""


def _float(text: str, what: str) -> float:
    if not _NUMBER.match(text.strip()):
        raise UsageError(f"invalid {what} {shown(text)}: use a number, e.g. 3888")
    return parse_number(text, 0.0, MAX_FIGURE, what)


_KEYS = {
    "iops": ("read_iops", "write_iops"),
    "bps": ("read_bps", "write_bps"),
    "riops": ("read_iops",),
    "wiops": ("write_iops",),
    "rbps": ("read_bps",),
    "wbps": ("write_bps",),
}


def parse_rates(text: str) -> Rates:
    """``riops=N,wiops=N,rbps=SIZE,wbps=SIZE`` to :class:`Rates`; ``iops=``/``bps=``
    set both directions (a per-direction key wins); any may be left out (0 = not given).

    bps takes a byte count or a size with a binary suffix per second (``400m`` =
    400 MiB/s), as fio's ``rate=`` does.
    """
    both: dict[str, float] = {}
    one: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        key = key.strip().lower()
        if not sep or key not in _KEYS:
            raise UsageError(
                f"invalid rate {shown(part)}: use iops=N,bps=SIZE or riops=,wiops=,rbps=,wbps=,"
                " e.g. riops=3888,wiops=156,bps=400m"
            )
        number = _float(value, "IOPS") if key.endswith("iops") else float(parse_size(value))
        for field in _KEYS[key]:
            (both if len(_KEYS[key]) == 2 else one)[field] = number
    return Rates(**(both | one))


def parse_tenant(text: str) -> Tenant:
    """``NAME:SIZE`` to a tenant: a plain number is GiB (``40``), else a size (``512m``)."""
    name, sep, size = text.rpartition(":")
    if not sep or not name:
        raise UsageError(
            f"invalid tenant {shown(text)}: use NAME:SIZE, e.g. web:40 (GiB) or db:512m"
        )
    size = size.strip()
    gib = _float(size, "tenant size") if _NUMBER.match(size) else parse_size(size) / GiB
    return Tenant(name.strip(), gib)


def parse_measured(text: str) -> tuple[str, float]:
    """``NAME=VALUE``: a tenant's measured IOPS."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise UsageError(f"invalid measurement {shown(text)}: use NAME=IOPS, e.g. web=118")
    return name.strip(), _float(value.strip(), "measured value")


RATES = Converted("riops=N,wiops=N,rbps=SIZE,wbps=SIZE", parse_rates)
TENANT = Converted("NAME:SIZE", parse_tenant)
MEASURED = Converted("NAME=IOPS", parse_measured)


nominal_option = click.option(
    "--nominal-sizes",
    is_flag=True,
    help="Tenant sizes are proportions only: not checked against the device's capacity.",
)
GUESTS_HELP = (
    "Each tenant is the running lab guest of its name (limits in its QEMU throttle group)."
)
