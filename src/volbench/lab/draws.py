"""Limits drawn at random for a lab guest, and how far a fitted model (``volbench run
limits``, :mod:`volbench.analysis.limiter_model`) is from them: what the lab's CI test
and ``bench/limits.py`` check ``run limits`` with, on every knob of QEMU's throttle group
``lab limit`` sets (docs/lab.md)."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SHAPES = (
    "total",
    "separate",
    "bytes",
    "separate bytes",
    "unit",
    "burst",
    "burst separate",
    "io.max",
    "bytes burst",
    "bytes burst separate",
)
"""The knobs a draw sets: IOPS shared or per direction, MB/s shared or per direction
beside them, an I/O unit (``iops-size``), a burst on a shared budget (``iops-total-max``),
a burst on each direction's (``iops-read-max``, ``iops-write-max``: two buckets), a
burst of MB/s on a shared MB/s cap (``bps-total-max``) or on each direction's
(``bps-read-max``, ``bps-write-max``), all QEMU's; and each direction's IOPS and MB/s
set by the guest kernel's cgroup v2 ``io.max`` (``lab limit --io-max``,
:mod:`volbench.lab.io_max`)."""
BURST_LENGTH = 4
"""Seconds of a full bucket at the burst rate in QEMU's terms (credits = burst x 4)."""
CAP_WITHIN = 0.05
"""A fitted IOPS or MB/s cap, or burst ceiling, within 5 % of the setting is right."""
BUCKET_WITHIN = 0.10
"""A fitted burst bucket (credits) within 10 % of the setting is right."""


def share(rate: float, most: int) -> int:
    """``rate`` IOPS, at most ``most``, rounded down to two significant digits (a limit
    a person would set), at least 10."""
    value = min(float(most), rate)
    step = 10 ** max(0, math.floor(math.log10(max(value, 1))) - 1)
    return max(10, int(value // step * step))


@dataclass(frozen=True)
class Draw:
    """One draw: its shape, the ``lab limit`` options that set it, and what the fit
    must find: ``read``/``write`` IOPS caps, ``shared`` (1: one budget), and as the shape
    has them ``read_bytes``/``write_bytes`` (bytes/s), ``unit`` (bytes), ``ceiling``
    (IOPS) and ``credits`` (I/Os), ``bytes_ceiling`` (bytes/s) and ``bytes_credits``
    (bytes) of a MB/s burst (``write_``: the writes' own bucket)."""

    shape: str
    options: tuple[str, ...]
    wanted: Mapping[str, float]

    def text(self) -> str:
        return f"{self.shape}: {' '.join(self.options)}"


def draw_limits(shape: str, draw: random.Random, top: int, most_mbps: float) -> Draw:
    """Limits of ``shape`` with IOPS caps of 40-100 % of ``top``. A MB/s cap is 24,000
    to 48,000 bytes an I/O of the IOPS cap: 16 KiB to 64 KiB in the size ladder, and off
    every power of two (where a cap and a unit are the same limit); at most
    ``most_mbps``, the IOPS cap lowered to keep it so."""
    per_io = [draw.choice([24_000, 40_000, 48_000]) for _ in range(2)]
    iops = [share(min(top * draw.uniform(0.4, 1.0), most_mbps * 1e6 / b), top) for b in per_io]
    mbps = [round(i * b / 1e6, 1) for i, b in zip(iops, per_io, strict=True)]
    one: dict[str, float] = {"read": iops[0], "write": iops[0], "shared": 1}
    two: dict[str, float] = {"read": iops[0], "write": iops[1], "shared": 0}
    if shape == "total":
        return Draw(shape, ("--iops-total", str(iops[0])), one)
    if shape == "separate":
        return Draw(shape, ("--iops-read", str(iops[0]), "--iops-write", str(iops[1])), two)
    if shape == "bytes":
        options: tuple[str, ...] = ("--iops-total", str(iops[0]), "--mbps", str(mbps[0]))
        bytes_cap = mbps[0] * 1e6
        return Draw(shape, options, {**one, "read_bytes": bytes_cap, "write_bytes": bytes_cap})
    if shape in ("separate bytes", "io.max"):
        options = (
            "--iops-read",
            str(iops[0]),
            "--iops-write",
            str(iops[1]),
            "--mbps-read",
            str(mbps[0]),
            "--mbps-write",
            str(mbps[1]),
        )
        options += ("--io-max",) if shape == "io.max" else ()
        return Draw(
            shape, options, {**two, "read_bytes": mbps[0] * 1e6, "write_bytes": mbps[1] * 1e6}
        )
    if shape == "unit":
        unit = draw.choice([8, 16, 32]) * 1024
        options = ("--iops-total", str(iops[0]), "--io-unit", f"{unit // 1024}k")
        return Draw(shape, options, {**one, "unit": unit})
    if shape in ("bytes burst", "bytes burst separate"):
        return _bytes_burst(shape, iops, mbps)
    if shape not in ("burst", "burst separate"):
        raise ValueError(f"unknown shape {shape!r}: one of {', '.join(SHAPES)}")
    base = share(0.3 * iops[0], top)
    credits = BURST_LENGTH * iops[0]
    if shape == "burst separate":
        other = share(0.3 * iops[1], top)
        options = (
            "--iops-read",
            str(base),
            "--iops-write",
            str(other),
            "--burst-iops",
            str(iops[0]),
            "--burst-credits",
            str(credits),
        )
        wanted = {
            "read": base,
            "write": other,
            "shared": 0,
            "ceiling": iops[0],
            "credits": credits,
            "write_ceiling": iops[0],
            "write_credits": credits,
        }
        return Draw(shape, options, wanted)
    options = (
        "--iops-total",
        str(base),
        "--burst-iops",
        str(iops[0]),
        "--burst-credits",
        str(credits),
    )
    wanted = {"read": base, "write": base, "shared": 1, "ceiling": iops[0], "credits": credits}
    return Draw(shape, options, wanted)


def _bytes_burst(shape: str, iops: list[int], mbps: list[float]) -> Draw:
    """A burst of MB/s: the drawn MB/s the ceiling (at most what the guest holds), a
    third of it the MB/s cap, a bucket of :data:`BURST_LENGTH` s at the ceiling; beside
    IOPS caps (shared, or each direction's with a MB/s cap each)."""
    ceiling = mbps[0]
    base = round(ceiling / 3, 1)
    bucket_mb = BURST_LENGTH * ceiling
    burst = ("--burst-mbps", f"{ceiling:g}", "--burst-mb", f"{bucket_mb:g}")
    wanted: dict[str, float] = {
        "read": iops[0],
        "write": iops[0],
        "shared": 1,
        "read_bytes": base * 1e6,
        "write_bytes": base * 1e6,
        "bytes_ceiling": ceiling * 1e6,
        "bytes_credits": bucket_mb * 1e6,
    }
    if shape == "bytes burst":
        return Draw(shape, ("--iops-total", str(iops[0]), "--mbps", f"{base:g}", *burst), wanted)
    options = (
        "--iops-read",
        str(iops[0]),
        "--iops-write",
        str(iops[1]),
        "--mbps-read",
        f"{base:g}",
        "--mbps-write",
        f"{base:g}",
        *burst,
    )
    wanted |= {
        "write": iops[1],
        "shared": 0,
        "write_bytes_ceiling": ceiling * 1e6,
        "write_bytes_credits": bucket_mb * 1e6,
    }
    return Draw(shape, options, wanted)


def fitted_figures(document: Mapping[str, Any], wanted: Mapping[str, float]) -> dict[str, Any]:
    """The figures of the limits card's JSON ``document`` that ``wanted`` names, by the
    same keys (None: not found)."""
    model, burst = document["model"], document["burst"] or {}

    def value(figure: Mapping[str, Any] | None) -> float | None:
        return None if figure is None else float(figure["value"])

    found: dict[str, Any] = {}
    for direction in ("read", "write"):
        found[direction] = value(model[direction]["iops_cap"])
        found[f"{direction}_bytes"] = value(model[direction]["bytes_cap"])
    found["unit"] = (model["read"]["unit"] or {}).get("bytes")
    found["shared"] = model["shared_iops"]
    found["ceiling"] = burst.get("ceiling")
    found["credits"] = burst.get("credits")
    writes = document.get("write_burst") or {}
    found["write_ceiling"] = writes.get("ceiling")
    found["write_credits"] = writes.get("credits")
    for prefix, key in (("", "bytes_burst"), ("write_", "write_bytes_burst")):
        mb = document.get(key) or {}  # MB/s and MB
        ceiling, credits = mb.get("ceiling"), mb.get("credits")
        found[f"{prefix}bytes_ceiling"] = None if ceiling is None else ceiling * 1e6
        found[f"{prefix}bytes_credits"] = None if credits is None else credits * 1e6
    return {key: found[key] for key in wanted}


def misfits(document: Mapping[str, Any], wanted: Mapping[str, float]) -> list[str]:
    """What the fitted model in ``document`` gets wrong of ``wanted`` (none: all right):
    caps and the burst ceiling within :data:`CAP_WITHIN`, the bucket within
    :data:`BUCKET_WITHIN`, the unit exact, one budget or two right."""
    found = fitted_figures(document, wanted)
    wrong = []
    for key, setting in wanted.items():
        got = found[key]
        if key == "shared":
            if got is not bool(setting):
                wrong.append(f"shared IOPS {got}")
        elif key == "unit":
            if got != setting:
                wrong.append(f"unit {got} for {setting:g}")
        else:
            within = BUCKET_WITHIN if key.endswith("credits") else CAP_WITHIN
            if got is None or abs(got - setting) > within * setting:
                wrong.append(f"{key} {got} for {setting:g}")
    return wrong
