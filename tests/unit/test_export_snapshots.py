"""Snapshots of the text exporters (Markdown, CSV) on recorded fio outputs.

A change to what volbench prints shows up here as a diff. After checking the
diff is intended, rewrite the snapshots with VOLBENCH_UPDATE_SNAPSHOTS=1.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from recorded import FIO_FIXTURES

from volbench.plans.imported.importing import import_file
from volbench.report.comparison import comparison_sheet
from volbench.report.export import export
from volbench.report.run_sheets import run_sheet
from volbench.report.sheet import Sheet
from volbench.store.repository import Store

SNAPSHOTS = Path(__file__).resolve().parents[1] / "fixtures" / "snapshots"
RECORDED = {
    "quick": "quick/round-000.json",
    "stonewall": "stonewall_jsonplus.json",
    "numjobs4": "numjobs4_jsonplus.json",
    "randrw": "randrw_lat_percentiles_jsonplus.json",
}


def _check(sheet: Sheet, name: str) -> None:
    for fmt, suffix in (("markdown", "md"), ("csv", "csv")):
        path = SNAPSHOTS / f"{name}.{suffix}"
        text = export(sheet, fmt).decode()
        if os.environ.get("VOLBENCH_UPDATE_SNAPSHOTS"):
            path.write_text(text)
        assert text == path.read_text(), f"{path.name} changed (see the module docstring)"


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_run_exports_match_their_snapshots(name: str, tmp_path: Path) -> None:
    with Store.open(str(tmp_path / "store.db")) as store:
        run = store.get_run(import_file(store, FIO_FIXTURES / RECORDED[name], {}))
    _check(run_sheet(run), name)


def test_comparison_exports_match_their_snapshots(tmp_path: Path) -> None:
    with Store.open(str(tmp_path / "store.db")) as store:
        runs = [
            store.get_run(import_file(store, FIO_FIXTURES / RECORDED[n], {"disk": n}))
            for n in ("stonewall", "randrw")
        ]
    _check(comparison_sheet(runs, ("disk",)), "compare-stonewall-randrw")
