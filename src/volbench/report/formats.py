"""A Document rendered to the format its output file's name asks for."""

from __future__ import annotations

from pathlib import Path

from volbench.errors import UsageError
from volbench.report.document import Document
from volbench.report.html import render_html
from volbench.report.pdf import render_pdf

RENDERERS = {".html": render_html, ".htm": render_html, ".pdf": render_pdf}


def check_output_name(output: str) -> None:
    """Refuse, before any work, a file name whose format volbench cannot write."""
    if Path(output).suffix.lower() not in RENDERERS:
        raise UsageError(f"cannot tell the format of {output}: name it FILE.html or FILE.pdf")


def render_document(document: Document, output: str) -> bytes:
    """``document`` as HTML or PDF, chosen by ``output``'s suffix."""
    check_output_name(output)
    return RENDERERS[Path(output).suffix.lower()](document)
