"""PDF renderer: the print form of the HTML page, printed by headless Chromium.

Chromium prints the SVG that plotly draws as vector paths and text, so the
charts in the PDF are the same chart definitions as the page's, and vector.
No second plotting library is involved.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from volbench.errors import UsageError, VolbenchError
from volbench.report.document import Document
from volbench.report.html import render_html

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
PRINT_TIMEOUT_S = 180.0

# Flags for a closed, offline machine: no background connections, no sandbox as
# root (Chromium refuses to start as root with it), a throwaway profile.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--no-pdf-header-footer",
    "--virtual-time-budget=30000",
    "--run-all-compositor-stages-before-draw",
)


def chromium_path() -> str:
    """Chromium's executable: $VOLBENCH_CHROMIUM, else the first known name on PATH."""
    configured = os.environ.get("VOLBENCH_CHROMIUM")
    if configured:
        if not shutil.which(configured):
            raise UsageError(f"VOLBENCH_CHROMIUM={configured} is not an executable")
        return configured
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    raise UsageError(
        "PDF reports are printed by Chromium, which is not installed: install it "
        "(e.g. 'sudo apt-get install chromium'), set VOLBENCH_CHROMIUM, or write .html"
    )


def render_pdf(document: Document) -> bytes:
    """The report as a paginated A4 PDF (bytes)."""
    chromium = chromium_path()
    with tempfile.TemporaryDirectory(prefix="volbench-pdf-") as folder:
        page = Path(folder) / "report.html"
        out = Path(folder) / "report.pdf"
        page.write_bytes(render_html(document, for_print=True))
        command = [
            chromium,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={Path(folder) / 'profile'}",
            f"--print-to-pdf={out}",
            page.as_uri(),
        ]
        try:
            proc = subprocess.run(
                command, capture_output=True, text=True, timeout=PRINT_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise VolbenchError(
                f"Chromium did not print the report within {PRINT_TIMEOUT_S:.0f} s"
            ) from exc
        if proc.returncode != 0 or not out.exists():
            last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
            raise VolbenchError(f"Chromium could not print the report: {last}")
        return out.read_bytes()
