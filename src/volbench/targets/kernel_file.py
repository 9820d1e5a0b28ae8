"""Reading the kernel's text files (procfs, sysfs, cgroupfs) that may be absent: a
device gone, a controller not mounted, a file this kernel has not got.

Read with ``os.open``/``os.read`` into bytes, not ``Path.read_text``: the sampler and
the safety checks read thousands of these small files in a run (a sample of the host
and fio's processes about 50, each second and around each test), and the text layer
(a buffered reader and a text wrapper per file) took twice as long as the read
itself: 21 against 9-10 us a ``/proc/PID/stat`` (BENCHMARKS.md, bench/pts_live)."""

from __future__ import annotations

import os

_CHUNK = 1 << 16


def kernel_text(path: str | os.PathLike[str]) -> str | None:
    """The file's text (bytes that are not UTF-8 replaced; line ends as
    ``Path.read_text`` gives them, CR and CR LF read as LF), None when it cannot be
    read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        chunks = []
        while True:
            data = os.read(fd, _CHUNK)
            if not data:
                break
            chunks.append(data)
    except OSError:
        return None
    finally:
        os.close(fd)
    text = b"".join(chunks).decode("utf-8", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def kernel_value(path: str | os.PathLike[str]) -> str | None:
    """A one-value file's text without its newline (``queue/rotational``), None when
    it cannot be read."""
    text = kernel_text(path)
    return None if text is None else text.strip()
