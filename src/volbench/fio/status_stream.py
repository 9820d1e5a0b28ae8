"""fio's stdout during a run, read in large chunks: its JSON documents and other text.

With ``--status-interval=1`` fio prints a complete JSON document every second; with
``json+`` each holds every job of the job file with its latency bins. On the full
SNIA PTS IOPS matrix (56 cells x 4 threads = 224 jobs) that is megabytes a second,
and reading it line by line (and keeping every document) made volbench CPU-bound,
fall minutes behind fio and report stalls that were over long ago. So the stream is
read in chunks of up to 1 MiB, split only where a document ends (a line ``}`` at
column 0: nested braces are indented), and only the newest document is kept: the
live display and the stall watch need the latest state, results need the last.
"""

from __future__ import annotations

import codecs
import json
import os
import queue
from dataclasses import dataclass, field
from typing import IO, Any

CHUNK_BYTES = 1 << 20
_END = "\n}\n"
_BULK = ('"bins" : {', '"percentile" : {')
"""The keys of json+'s latency bins and percentile tables, as fio's json.c prints them."""


@dataclass
class DocumentStream:
    """Splits fio's stdout, fed in chunks of any size, into JSON documents and text.

    :meth:`feed` returns the documents the chunk completed (in order); ``text`` keeps
    what fio printed outside documents. A document cut off when fio dies is text.
    """

    text: list[str] = field(default_factory=list)
    _parts: list[str] = field(default_factory=list)
    _tail: str = ""

    def feed(self, chunk: str) -> list[str]:
        found: list[str] = []
        while chunk:
            probe = self._tail + chunk  # an end marker may straddle two chunks
            at = probe.find(_END)
            if at < 0:
                self._parts.append(chunk)
                self._tail = probe[-(len(_END) - 1) :]
                return found
            cut = at + len(_END) - len(self._tail)  # end of the document within chunk
            self._parts.append(chunk[:cut])
            chunk = chunk[cut:]
            self._tail = ""
            segment = "".join(self._parts)
            self._parts = []
            start = 0 if segment.startswith("{\n") else segment.find("\n{\n") + 1
            if start == 0 and not segment.startswith("{\n"):
                self.text.append(segment)  # a `}` line outside any document
                continue
            if start:
                self.text.append(segment[:start])
            found.append(segment[start:])
        return found

    def finish(self) -> None:
        """The stream ended: what is left (text, or a document cut off) is text."""
        rest = "".join(self._parts)
        if rest:
            self.text.append(rest)
        self._parts = []
        self._tail = ""


Item = tuple[str, str] | None
"""("document", text) or ("text", text) from :func:`pump`; None at the end of stream."""


def pump(stream: IO[Any], items: queue.Queue[Item]) -> None:
    """Read fio's stdout (a pipe) in chunks until it closes; queue its documents and
    text as they complete, then None. Runs in a thread of its own."""
    splitter = DocumentStream()
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    fd = stream.fileno()
    while True:
        data = os.read(fd, CHUNK_BYTES)
        text = decoder.decode(data, final=not data)
        for document in splitter.feed(text):
            items.put(("document", document))
        if not data:
            break
    splitter.finish()
    for text in splitter.text:
        items.put(("text", text))
    items.put(None)


def lean_status(document: str) -> dict[str, Any]:
    """An interim status document parsed without its json+ latency bins and percentile
    tables (flat objects, replaced by ``{}``): the live figures and the stall watch
    read only counts, means and runtimes, and the bins are most of the text."""
    parsed: dict[str, Any] = json.loads(without_bulk(document))
    return parsed


def without_bulk(document: str) -> str:
    """``document`` with each flat object under a key of :data:`_BULK` emptied (``{}``);
    an object that holds another is kept whole. Found with ``str.find``: a regular
    expression stepping through each bin's characters took twice as long (0.9-1.1 ms
    for an IOPS cell's 216 kB status document, against 0.44 ms)."""
    kept: list[str] = []
    pos = 0
    found = {key: document.find(key) for key in _BULK}
    while any(at >= 0 for at in found.values()):
        start, key = min((at, key) for key, at in found.items() if at >= 0)
        inside = start + len(key)
        end = document.find("}", inside)
        if end >= 0 and document.find("{", inside, end) < 0:
            kept.append(document[pos:inside])
            pos = end
        found[key] = document.find(key, inside)
    kept.append(document[pos:])
    return "".join(kept)
