"""The JSON export of a run whose plan has its own sheet (e.g. QoS verify: a document
without the run's rows) carries the run record, every stored result row and fio's raw
outputs beside the plan's own keys, which stay as they are."""

from __future__ import annotations

import json

from recorded import fixture_text

from stored_rows import bare_row
from volbench.model import (
    HostInfo,
    RunRecord,
    RunSettings,
    RunStatus,
    StoredResult,
    StoredWorkload,
    TargetInfo,
)
from volbench.report.export import export
from volbench.report.plan_view import PlanView
from volbench.report.run_sheets import report_for
from volbench.report.sheet import Column, Sheet

PLAN = "own-sheet-test"


def _result(round_no: int, test: str, iops: float) -> StoredResult:
    return bare_row(
        iops, round=round_no, test=test, workload=StoredWorkload(rw="randread"), runtime_ms=3000
    )


def _own_sheet(run: RunRecord) -> Sheet:
    """A plan's sheet with a document of its own, like QoS verify's."""
    rows = tuple({"tenant": r.test, "achieved_iops": r.iops} for r in run.results)
    document = {"schema": "volbench.own/1", "run_id": run.id, "tenants": list(rows)}
    return Sheet("own", (Column("tenant", "Tenant"),), rows, document)


def test_export_of_a_plan_with_its_own_sheet_adds_the_run_record() -> None:
    raw = (fixture_text("randread_json.json"), fixture_text("numjobs4_jsonplus.json"))
    run = RunRecord(
        id=12,
        plan=PLAN,
        status=RunStatus.FAILED,
        started_at="2024-01-01T00:00:00",
        ended_at=None,
        target=TargetInfo("/dev/x", "block", 0),
        host=HostInfo.from_record({"cpu_count": 2}),
        labels={"vendor": "acme"},
        settings=RunSettings(options={"verify": {"bs_bytes": 4096}}),
        results=(_result(0, "t40", 500.0), _result(1, "t60", 700.0)),
        raw_outputs=raw,
        error="fio of tenant t60 failed",
    )
    _, document = report_for(run, PlanView(sheet=_own_sheet))
    data = json.loads(export(Sheet("report", (), (), document), "json"))
    assert data["schema"] == "volbench.own/1"  # the plan's own keys, unchanged
    assert data["tenants"] == [
        {"tenant": "t40", "achieved_iops": 500.0},
        {"tenant": "t60", "achieved_iops": 700.0},
    ]
    assert data["run_id"] == data["id"] == 12 and data["plan"] == PLAN
    assert data["status"] == "failed" and data["error"] == "fio of tenant t60 failed"
    assert data["labels"] == {"vendor": "acme"} and data["target"]["path"] == "/dev/x"
    assert data["host"]["cpu_count"] == 2 and data["settings"]["verify"] == {"bs_bytes": 4096}
    assert data["fio_outputs"] == list(raw)  # verbatim
    assert [(r["round"], r["test"], r["iops"]) for r in data["results"]] == [
        (0, "t40", 500.0),
        (1, "t60", 700.0),
    ]
