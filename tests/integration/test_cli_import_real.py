"""``volbench import`` of other people's fio outputs through the real command (issue
14): what the file states is what ``show`` prints, and an output that yields no result
says so when imported and when shown. The outputs and their sources are in
tests/fixtures/fio/imported (see its README).
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_harness import Volbench

IMPORTED = Path(__file__).parents[1] / "fixtures" / "fio" / "imported"


def test_import_prints_a_warning_when_the_output_yields_no_result(tmp_path: Path) -> None:
    volbench = Volbench(tmp_path / "volbench")
    failed = IMPORTED / "fio-plot_fio-3.33_write.json"  # fio ended with error 22
    proc = volbench("import", str(failed), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    warning = f"{failed}: warning: no result in this fio output: '1m' ended with error 22"
    assert warning in proc.stderr
    (run,) = json.loads(proc.stdout)["runs"]
    shown = volbench("show", str(run["id"]))
    assert "note: warning: no result in this fio output" in shown.stdout
    assert volbench.show(str(run["id"]))["results"] == []


def test_show_prints_what_the_output_states(tmp_path: Path) -> None:
    """Target and size, ioengine, pattern, places by host and port, fio's start time."""
    volbench = Volbench(tmp_path / "volbench")
    path = IMPORTED / "fio-analyzer_fio-3.43_two-clients-one-host.json"
    proc = volbench("import", str(path), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr
    (run,) = json.loads(proc.stdout)["runs"]
    assert run["started_at"] == "2026-09-28T14:04:36+00:00"  # the earliest job_start
    table = volbench("show", str(run["id"])).stdout
    assert "target /mnt/fio-test (4.0 MiB) · ioengine psync · fio-3.43" in table
    document = volbench.show(str(run["id"]))
    places = sorted(r["place"] for r in document["places"]["rows"])
    assert places == ["127.0.0.1:18801", "127.0.0.1:18802", "all 2 together"]
    (result,) = [r for r in document["results"] if r["hostname"] is None]
    assert result["pattern"] == "randread 4k QD?x1"  # iodepth not stated
    assert result["lat_p99_ns"] == 2008  # fio's "All clients" percentile


def test_latest_is_the_output_imported_last(tmp_path: Path) -> None:
    """An output dated years back, then one stating no time (dated at its import), then
    an old one again: after each import, ``latest`` is the run just imported and ``runs``
    lists it first."""
    volbench = Volbench(tmp_path / "volbench")
    names = [
        "fio-plot_fio-3.1_floppy.json",  # fio's time: 2019
        "pkb_fio-2.1.4_five-groups.json",  # no time: the import's
        "fio-plot_fio-2.18_randread.json",  # fio's time: 2017
    ]
    added: list[int] = []
    for name in names:
        (run,) = volbench.document("import", str(IMPORTED / name))["runs"]
        added.append(run["id"])
        assert volbench.show("latest")["id"] == run["id"]
        listed = volbench.document("runs")["runs"]
        assert [r["id"] for r in listed] == added[::-1]
    assert listed[1]["started_at"] > listed[2]["started_at"] > listed[0]["started_at"]


def test_a_job_error_is_shown_and_fails_check(tmp_path: Path) -> None:
    """fio stopped a job with error 84 after 700 reads (tests/fixtures/fio, (10)): the
    import says so, ``show`` prints the error beside the job's figures, and ``check``
    against a product exits 1 naming it."""
    volbench = Volbench(tmp_path / "volbench")
    path = IMPORTED.parent / "verify_error_jsonplus.txt"
    proc = volbench(
        "import",
        str(path),
        "--label",
        "product=ucloud-rssd",
        "--label",
        "size_gib=2040",
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    words = "Invalid or incomplete multibyte or wide character"
    assert f"warning: 'verify-read' ended with fio error 84 ({words})" in proc.stderr
    shown = volbench("show", "latest")
    assert shown.returncode == 0, shown.stderr
    assert "fio error" in shown.stdout and "│ verify-read │ read │        84 │" in shown.stdout
    checked = volbench("check", "latest")
    assert checked.returncode == 1
    assert "1 figure(s) of a test fio reported an error in" in checked.stderr
    results = {r["test"]: r["error"] for r in volbench.show("latest")["results"]}
    assert results == {"verify-read": 84, "randread": 0}
