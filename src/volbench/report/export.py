"""Exporters: a Sheet in, bytes out, one per format. One place (the CLI) writes them."""

from __future__ import annotations

import csv
import io
import json
import re
import uuid
from collections.abc import Callable

from volbench.errors import UsageError
from volbench.report.sheet import Sheet
from volbench.visible_text import visible

Exporter = Callable[[Sheet], bytes]

EXPORTERS: dict[str, Exporter] = {}


def exporter(name: str) -> Callable[[Exporter], Exporter]:
    def register(function: Exporter) -> Exporter:
        EXPORTERS[name] = function
        return function

    return register


def _json_default(value: object) -> object:
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


@exporter("json")
def to_json(sheet: Sheet) -> bytes:
    """The sheet's document, indented, keys in a stable order; a list of numbers, or of
    lists of numbers (a series' ``[time, value]`` points), on one line."""
    token = uuid.uuid4().hex
    lines: list[str] = []

    def fold(value: object) -> object:
        if isinstance(value, dict):
            return {key: fold(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            if value and all(_numbers(item) for item in value):
                lines.append(json.dumps(value, default=_json_default))
                return f"{token}:{len(lines) - 1}"
            return [fold(item) for item in value]
        return value

    text = json.dumps(fold(sheet.document), indent=2, default=_json_default)
    text = re.sub(f'"{token}:([0-9]+)"', lambda m: lines[int(m[1])], text)
    return (text + "\n").encode()


def _numbers(value: object) -> bool:
    """A number, or a list of numbers (bools are not numbers here)."""
    if isinstance(value, list | tuple):
        return all(_number(item) for item in value)
    return _number(value)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@exporter("csv")
def to_csv(sheet: Sheet) -> bytes:
    """Every raw field of every row (base units: bytes/s, ns), header first; text with
    its control characters shown as escapes (:func:`volbench.visible_text.visible`;
    lists and mappings as JSON, which escapes them itself)."""
    keys: list[str] = []
    for row in sheet.rows:
        keys += [k for k in row if k not in keys]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=[visible(k) for k in keys], lineterminator="\n")
    writer.writeheader()
    for row in sheet.rows:
        writer.writerow({visible(k): _csv_field(v) for k, v in row.items()})
    return buffer.getvalue().encode()


def _csv_field(value: object) -> object:
    if isinstance(value, dict | list):
        return json.dumps(value)
    return visible(value) if isinstance(value, str) else value


def _md_cell(text: str) -> str:
    """A Markdown table cell (or list item): its control characters shown as escapes,
    ``|`` escaped."""
    return visible(text).replace("|", "\\|")


@exporter("markdown")
def to_markdown(sheet: Sheet) -> bytes:
    """A GitHub-flavoured Markdown table with the sheet's notes below it."""
    headers = [c.header for c in sheet.columns]
    align = ["---:" if c.numeric else "---" for c in sheet.columns]
    lines = [f"## {visible(sheet.title)}", ""]
    lines.append("| " + " | ".join(_md_cell(h) for h in headers) + " |")
    lines.append("| " + " | ".join(align) + " |")
    for cells in sheet.cells():
        lines.append("| " + " | ".join(_md_cell(c) for c in cells) + " |")
    if sheet.notes:
        lines.append("")
        lines += [f"- {_md_cell(n)}" for n in sheet.notes]
    return ("\n".join(lines) + "\n").encode()


def export(sheet: Sheet, fmt: str) -> bytes:
    """Render ``sheet`` as ``fmt`` (json, csv or markdown)."""
    function = EXPORTERS.get(fmt)
    if function is None:
        known = ", ".join(sorted(EXPORTERS))
        raise UsageError(f"unknown format {fmt!r}: use one of {known}")
    return function(sheet)
