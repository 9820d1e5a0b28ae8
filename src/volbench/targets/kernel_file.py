"""Reading the kernel's text files (procfs, sysfs, cgroupfs) that may be absent: a
device gone, a controller not mounted, a file this kernel has not got."""

from __future__ import annotations

from pathlib import Path


def kernel_text(path: Path) -> str | None:
    """The file's text (bytes that are not UTF-8 replaced), None when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def kernel_value(path: Path) -> str | None:
    """A one-value file's text without its newline (``queue/rotational``), None when
    it cannot be read."""
    text = kernel_text(path)
    return None if text is None else text.strip()
