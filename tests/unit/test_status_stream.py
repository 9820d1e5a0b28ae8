"""fio's stdout read in chunks: the same documents and text as the line reader, at any
chunk size; interim documents parsed without their bins give the same live figures."""

from __future__ import annotations

import json
import os
import queue
import re
import threading
from typing import Any

import pytest

from volbench.fio.live import job_totals
from volbench.fio.runner import DocumentSplitter
from volbench.fio.status_stream import DocumentStream, Item, lean_status, pump, without_bulk

LATS = ("clat_ns", "lat_ns")


def _by_lines(text: str) -> tuple[list[str], str]:
    splitter = DocumentSplitter()
    for line in text.splitlines(keepends=True):
        splitter.feed(line)
    splitter.finish()
    return splitter.documents, "".join(splitter.text)


def _by_chunks(text: str, size: int) -> tuple[list[str], str]:
    stream = DocumentStream()
    documents = [d for i in range(0, len(text), size) for d in stream.feed(text[i : i + size])]
    stream.finish()
    return documents, "".join(stream.text)


@pytest.mark.parametrize("size", [1, 2, 3, 5, 64, 4096, 1 << 20])
def test_chunks_of_any_size_split_as_lines_do(status_stream: str, size: int) -> None:
    stream = status_stream + 'fio: a last note\n{\n  "cut" : '  # a document cut off
    assert _by_chunks(stream, size) == _by_lines(stream)


def test_lean_status_keeps_every_figure_the_live_display_reads(
    status_documents: list[dict[str, Any]], status_stream: str
) -> None:
    documents, _ = _by_chunks(status_stream, 4096)
    for text, full in zip(documents, status_documents, strict=True):
        lean = lean_status(text)
        assert job_totals(lean) == job_totals(full)
        assert lean["timestamp_ms"] == full["timestamp_ms"]
        stats = [job[d][k] for job in lean["jobs"] for d in ("read", "write") for k in LATS]
        assert all(not s.get("bins") and not s.get("percentile") for s in stats)
        assert len(json.dumps(lean)) < len(json.dumps(full))


@pytest.mark.parametrize(
    "extra",
    [
        "",
        '{"bins" : {"1" : 2}, "percentile" : {"x" : {"1" : 2}}, "bins" : {}}',
        '{"percentile" : {"1.0" : 3, "bins" : {"2" : 1}}}',
        '{"bins" : {"1" : 2',
    ],
)
def test_without_bulk_empties_what_the_regular_expression_did(
    status_stream: str, extra: str
) -> None:
    """Each flat bins or percentile object emptied, a nested one kept whole, a cut-off
    one left as it is: as ``re.sub`` of the pattern below does."""
    pattern = re.compile(r'("(?:bins|percentile)" : )\{[^{}]*\}')
    for text in (*_by_chunks(status_stream, 4096)[0], extra):
        assert without_bulk(text) == pattern.sub(r"\1{}", text)


def test_pump_reads_a_pipe_to_its_end(status_stream: str) -> None:
    read_end, write_end = os.pipe()
    items: queue.Queue[Item] = queue.Queue()
    with os.fdopen(read_end, "rb") as reader:
        thread = threading.Thread(target=pump, args=(reader, items))
        thread.start()
        with os.fdopen(write_end, "wb") as writer:
            data = status_stream.encode()
            for i in range(0, len(data), 777):  # pieces that cut lines and UTF-8 anywhere
                writer.write(data[i : i + 777])
                writer.flush()
        thread.join(timeout=10)
    found: list[Item] = []
    while not items.empty():
        found.append(items.get())
    assert found[-1] is None
    documents = [value for kind, value in (i for i in found if i) if kind == "document"]
    assert documents == _by_lines(status_stream)[0]
