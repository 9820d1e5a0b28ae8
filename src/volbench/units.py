"""Byte-size units: parse the sizes users type and format sizes for messages.

Parsing follows fio's default ``kb_base=1024``, so a size means the same to
volbench as it does to fio with its defaults:

* a plain number is bytes: ``"1024"`` = 1024;
* ``k``/``m``/``g``/``t``/``p`` (any case, with or without a trailing ``b``) are
  binary multiples: ``"4k"`` = ``"4KB"`` = 4096, ``"1G"`` = ``"1gb"`` = 2**30;
* IEC suffixes ``KiB``/``MiB``/``GiB``/``TiB``/``PiB`` are binary too.

Deliberate choice: fio's compatibility mode reads ``KiB`` as 1000 and ``KB`` as
1024, which surprises everyone; volbench reads both as 1024 and offers no
decimal (10**n) suffix at all. Give decimal sizes as plain byte counts
(``"1000000000"``). A trailing ``b``/``B`` alone means bytes (``"512B"``).
Fractions are allowed when a suffix is given (``"1.5g"``) and are rounded down
to whole bytes.

Bounds: a size is at most :data:`MAX_SIZE` = 2**63 - 1 bytes (8 EiB), what fio's
64-bit sizes and the store's 64-bit integers hold, and its number at most
:data:`MAX_DIGITS` digits; anything larger is refused in one line before it is
converted (a 5,000-digit number is not turned into an integer).

Formatting always uses binary units with IEC names (``"1.0 GiB"``).
"""

from __future__ import annotations

import re

from volbench.errors import UsageError

KiB = 1024
MiB = 1024**2
GiB = 1024**3
TiB = 1024**4
PiB = 1024**5

MAX_SIZE = 2**63 - 1
"""The largest size volbench takes, in bytes: fio's sizes are unsigned 64-bit and the
store's integers signed 64-bit (SQLite INTEGER, PostgreSQL BIGINT)."""
MAX_DIGITS = 40
"""The most digits (with a fraction's) a size's number may have."""

_MULTIPLIERS: dict[str, int] = {"": 1, "k": KiB, "m": MiB, "g": GiB, "t": TiB, "p": PiB}

_SIZE_RE = re.compile(
    r"""^\s*
    (?P<number>\d+(?:\.\d*)?|\.\d+)
    \s*
    (?P<prefix>[kmgtp]?)
    (?P<suffix>ib|b|)
    \s*\Z""",
    re.IGNORECASE | re.VERBOSE,
)

_FORMAT_UNITS: tuple[tuple[str, int], ...] = (
    ("PiB", PiB),
    ("TiB", TiB),
    ("GiB", GiB),
    ("MiB", MiB),
    ("KiB", KiB),
)


def parse_size(text: str) -> int:
    """Parse a user size string into bytes (see the module docstring for the rules).

    Raises :class:`~volbench.errors.UsageError` with a one-line message when the
    string is not a size.
    """
    if len(text) > 2 * MAX_DIGITS:
        raise _too_long(text)
    match = _SIZE_RE.match(text)
    if match is None:
        raise UsageError(
            f"invalid size {shown(text)}: use a byte count or a number with k, m, g, t "
            f"(binary: 4k = 4096), e.g. 512m or 1GiB"
        )
    number: str = match.group("number")
    if len(number) > MAX_DIGITS:
        raise _too_long(text)
    prefix: str = match.group("prefix").lower()
    suffix: str = match.group("suffix")
    if suffix.lower() == "ib" and not prefix:
        raise UsageError(f"invalid size {shown(text)}: 'iB' needs a prefix, e.g. KiB or GiB")
    multiplier = _MULTIPLIERS[prefix]
    if "." in number:
        if multiplier == 1:
            raise UsageError(f"invalid size {shown(text)}: a byte count must be a whole number")
        # Exact decimal arithmetic: split into integer and fraction digits.
        whole, _, frac = number.partition(".")
        scale: int = 10 ** len(frac)
        numerator = int(whole or "0") * scale + int(frac or "0")
        return _bounded(numerator * multiplier // scale, text)
    return _bounded(int(number) * multiplier, text)


def _too_long(text: str) -> UsageError:
    return UsageError(
        f"invalid size {shown(text)}: a number of at most {MAX_DIGITS} digits,"
        f" up to 8 EiB ({MAX_SIZE} bytes)"
    )


def _bounded(size: int, text: str) -> int:
    if size > MAX_SIZE:
        raise UsageError(
            f"invalid size {shown(text)}: larger than 8 EiB ({MAX_SIZE} bytes),"
            " the most fio and the store can hold"
        )
    return size


def shown(text: str, limit: int = 40) -> str:
    """``text`` quoted for a message, cut to ``limit`` characters (``'999...'``): a
    hostile value of any length stays a short line."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "..."


def format_bytes(n: int | float) -> str:
    """Format a byte count for messages: ``"512 B"``, ``"64 MiB"``, ``"1.0 GiB"``.

    Binary units; one decimal below 10 units, whole numbers from 10 up.
    """
    sign = "-" if n < 0 else ""
    value = abs(n)
    for name, factor in _FORMAT_UNITS:
        if value >= factor:
            scaled = value / factor
            if round(scaled, 1) < 10:
                return f"{sign}{scaled:.1f} {name}"
            return f"{sign}{scaled:.0f} {name}"
    return f"{sign}{value:.0f} B"


def format_block_size(n: int) -> str:
    """A block size in fio's compact notation: ``"512"``, ``"4k"``, ``"128k"``, ``"1m"``.

    The largest binary unit that divides ``n`` exactly is used, so the result
    parses back to ``n`` with :func:`parse_size` (and means the same to fio).
    """
    for suffix, factor in (("g", GiB), ("m", MiB), ("k", KiB)):
        if n and n % factor == 0:
            return f"{n // factor}{suffix}"
    return str(n)


def format_seconds(seconds: float) -> str:
    """A short span of time, rounded for reading: ``5`` -> ``5 s``, ``1.25`` ->
    ``1.25 s``, ``1800`` -> ``1,800 s``, ``0.0833`` -> ``83 ms``, ``0.004`` -> ``4 ms``."""
    if seconds < 1:
        ms = seconds * 1000
        return f"{ms:.0f} ms" if ms >= 10 else f"{ms:.2g} ms"
    return f"{seconds:,.0f} s" if seconds >= 10 else f"{seconds:.3g} s"
