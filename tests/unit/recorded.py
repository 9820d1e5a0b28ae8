"""The recorded fio outputs in tests/fixtures/fio (see the README there)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIO_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "fio"


def fixture_text(name: str) -> str:
    """A recorded output exactly as fio printed it."""
    return (FIO_FIXTURES / name).read_text()


def raw_document(name: str) -> dict[str, Any]:
    """A recorded output's JSON read independently of volbench's parser."""
    text = fixture_text(name)
    document: dict[str, Any] = json.loads(text[text.index("{") : text.rindex("}") + 1])
    return document
