"""Fixtures of the unit tests: the recorded fio outputs in tests/fixtures/fio."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

FIO_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "fio"


@pytest.fixture(scope="session")
def status_stream() -> str:
    """fio's stdout with ``--status-interval=1`` (see the fixtures README, command 8)."""
    return (FIO_FIXTURES / "status_interval_stream.out").read_text()


@pytest.fixture(scope="session")
def status_documents(status_stream: str) -> list[dict[str, Any]]:
    """The stream's JSON documents, decoded one after another with ``raw_decode``
    (independently of volbench's DocumentSplitter)."""
    decoder = json.JSONDecoder()
    documents = []
    start = status_stream.find("{")
    while start >= 0:
        document, end = decoder.raw_decode(status_stream, start)
        documents.append(document)
        start = status_stream.find("{", end)
    return documents
