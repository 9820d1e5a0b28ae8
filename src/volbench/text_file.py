"""Reading a user's text file at the border: at most a stated size, UTF-8, and every
failure one line naming the file (a device node, a huge or binary file, a missing
one), never a traceback or the whole of ``/dev/zero`` in memory."""

from __future__ import annotations

from pathlib import Path

from volbench.errors import UsageError
from volbench.units import MiB, format_bytes


def read_text(path: Path, limit_bytes: int, what: str) -> str:
    """The UTF-8 text of ``path``, a ``what`` (``"QoS plan"``, ``"access specs"``...)
    of at most ``limit_bytes``; UsageError otherwise. Reads at most one byte more than
    the limit, whatever the file is."""
    try:
        with path.open("rb") as handle:
            data = handle.read(limit_bytes + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if len(data) > limit_bytes:
        raise UsageError(f"{what} {path} is larger than {_size(limit_bytes)}: not a {what} file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{what} {path} is not UTF-8 text (byte {exc.start})") from None


def _size(limit_bytes: int) -> str:
    """A limit as people write it: ``1 MiB``, ``16 MiB``, else :func:`format_bytes`."""
    if limit_bytes % MiB == 0:
        return f"{limit_bytes // MiB} MiB"
    return format_bytes(limit_bytes)
