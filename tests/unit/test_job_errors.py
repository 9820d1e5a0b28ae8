"""A fio job that ended with an error after doing I/O: its error is stored with its
results, shown wherever the run is (``show``'s sheet, the summary, the HTML report, the
run's JSON, a bundle), and fails ``check``.

The output is a real one (tests/fixtures/fio/README.md, (10)): fio 3.33 stopped the
``verify-read`` job with ``"error" : 84`` (EILSEQ on Linux) at a block whose verify
header was zeroed, after 700 good reads; ``randread`` ran clean. Every figure asserted is
read from the file with ``json.loads``.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from recorded import FIO_FIXTURES, fixture_text, raw_document

from volbench.analysis.promise import Measured, check
from volbench.model import RunRecord
from volbench.plans.imported.importing import import_file, read_import
from volbench.plans.imported.output import fio_error_texts
from volbench.report.check_sheets import CheckRequest, check_sheet
from volbench.report.html import render_html
from volbench.report.run_sheets import run_sheet
from volbench.specs import catalogue
from volbench.specs.expectation import expect
from volbench.store import bundle
from volbench.store.bundle_values import BundleError
from volbench.store.repository import Store
from volbench.views import report_document, summary_for

NAME = "verify_error_jsonplus.txt"
WORDS = "Invalid or incomplete multibyte or wide character"
"""fio's words for error 84 on Linux (glibc's strerror of EILSEQ), as the file says."""


def _jobs() -> dict[str, dict[str, Any]]:
    return {job["jobname"]: job for job in raw_document(NAME)["jobs"]}


def _run(tmp_path: Path, labels: dict[str, str] | None = None) -> RunRecord:
    with Store.open(str(tmp_path / "store.db")) as store:
        return store.get_run(import_file(store, FIO_FIXTURES / NAME, labels or {}))


def test_the_file_has_a_job_error_with_results() -> None:
    jobs = _jobs()
    assert (jobs["verify-read"]["error"], jobs["randread"]["error"]) == (84, 0)
    assert jobs["verify-read"]["read"]["total_ios"] == 701  # 700 good reads, then the bad one
    assert fio_error_texts(fixture_text(NAME)) == {84: WORDS}


def test_the_error_is_stored_with_the_results_it_ended(tmp_path: Path) -> None:
    run = _run(tmp_path)
    jobs = _jobs()
    assert run.status.value == "completed"
    rows = {row.test: row for row in run.results}
    assert set(rows) == {"verify-read", "randread"}
    for name, row in rows.items():
        read = jobs[name]["read"]
        assert row.error == jobs[name]["error"]
        assert (row.iops, row.io_bytes, row.runtime_ms) == (
            read["iops"],
            read["io_bytes"],
            read["runtime"],
        )
        assert row.lat_mean_ns == read["clat_ns"]["mean"]
    assert run.error == (
        f"warning: 'verify-read' ended with fio error 84 ({WORDS}); its figures are what fio"
        " measured until then"
    )
    assert read_import(FIO_FIXTURES / NAME).notes == (run.error,)


def test_show_prints_the_error_beside_the_results(tmp_path: Path) -> None:
    run = _run(tmp_path)
    sheet = run_sheet(run)
    headers = [c.header for c in sheet.columns]
    assert headers[:3] == ["Test", "Dir", "fio error"]
    by_test = {row["test"]: (i, row) for i, row in enumerate(sheet.rows)}
    errored, clean = by_test["verify-read"], by_test["randread"]
    assert errored[1]["error"] == 84 and clean[1]["error"] == 0
    assert errored[0] in sheet.flagged_rows and clean[0] not in sheet.flagged_rows
    column = sheet.columns[2]
    assert (column.value(errored[1]), column.value(clean[1])) == (84, None)  # shown "-"
    assert f"note: {run.error}" in sheet.notes
    assert any(
        n.startswith("fio error: the test's jobs ended with that error") for n in sheet.notes
    )
    document = sheet.document
    assert {r["test"]: r["error"] for r in document["results"]} == {  # type: ignore[index]
        "verify-read": 84,
        "randread": 0,
    }


def test_the_summary_and_the_report_show_it(tmp_path: Path) -> None:
    run = _run(tmp_path)
    summary = summary_for(run, check=False)
    assert "fio error" in [c.header for c in summary.table.columns]
    flagged = [summary.table.rows[i]["test"] for i in summary.table.flagged_rows]
    assert flagged == ["verify-read"]
    assert f"note: {run.error}" in summary.notes
    page = render_html(report_document([run])).decode()
    assert "fio error" in page and WORDS in page


def test_check_counts_the_error_against_the_test(tmp_path: Path) -> None:
    """UCloud RSSD states a QD 1 latency: both tests are checked. verify-read's figure
    alone is better than stated (above), yet the test fio stopped on an error does not
    meet the promise: the check fails."""
    run = _run(tmp_path, {"product": "ucloud-rssd", "size_gib": "2040"})
    sheet = check_sheet(run, catalogue.load(), CheckRequest(None, None))
    verdicts = {row["test"]: row for row in sheet.rows}
    assert verdicts["verify-read"]["verdict"] == "error"
    assert verdicts["verify-read"]["reason"].startswith(
        "fio error 84: the test stopped on it (above by its figure)"
    )
    assert verdicts["randread"]["verdict"] == "above"
    assert (
        verdicts["verify-read"]["measured"]
        == _jobs()["verify-read"]["read"]["clat_ns"]["mean"] / 1e6
    )
    flagged = {sheet.rows[i]["test"] for i in sheet.flagged_rows}
    assert flagged == {"verify-read"} and sheet.document["passed"] is False
    assert any(n.startswith("error: fio reported an error in verify-read") for n in sheet.notes)
    summary = summary_for(run)
    assert summary.verdict is not None
    assert "1 above, 0 below, 1 error" in summary.verdict
    assert summary.verdict.endswith("; fio error in: verify-read")


@pytest.mark.parametrize("error", [0, 84])
def test_an_error_turns_a_verdict_into_error(error: int) -> None:
    """A QD 1 read of 0.15 ms mean meets UCloud RSSD's 0.1-0.2 ms, but not when fio
    stopped the test on an error."""
    test = Measured("t", "randread", 4096, 1, 1.0, 0.0, 4096.0, 0.0, 150_000.0, None, error=error)
    promised = expect(catalogue.load().find("ucloud-rssd"), 2040)
    (verdict,), _ = check([test], promised)
    assert verdict.verdict == ("error" if error else "meets")
    assert verdict.measured == 0.15


def test_a_bundle_keeps_the_error(tmp_path: Path) -> None:
    run = _run(tmp_path)
    (back,) = bundle.load(bundle.dump([run]), "run.vbundle")
    assert {r.test: r.error for r in back.results} == {"verify-read": 84, "randread": 0}


def test_a_bundle_with_an_error_fio_did_not_report_is_refused(tmp_path: Path) -> None:
    run = _run(tmp_path)
    forged = tuple(
        dataclasses.replace(r, error=5) if r.test == "randread" else r for r in run.results
    )
    data = bundle.dump([dataclasses.replace(run, results=forged)])
    with pytest.raises(BundleError, match=r"results\[1\]\.error is 5, an error no job"):
        bundle.load(data, "run.vbundle")


def test_a_job_that_failed_before_any_io_beside_one_that_ran_is_named(tmp_path: Path) -> None:
    """fio-plot's job that fio refused (error 22, no I/O) beside this output's randread:
    the run has randread's figures and says the other test gave none, and why."""
    failed = raw_document("imported/fio-plot_fio-3.33_write.json")["jobs"][0]
    document = raw_document(NAME)
    document["jobs"] = [_jobs()["randread"], {**failed, "groupid": 1}]
    source = tmp_path / "mixed.json"
    source.write_text(json.dumps(document))
    with Store.open(str(tmp_path / "store.db")) as store:
        run = store.get_run(import_file(store, source, {}))
    assert {r.test: r.error for r in run.results} == {"randread": 0}
    assert run.error == "warning: '1m' ended with fio error 22 before any I/O: no result"
