"""``volbench pts`` end to end on loop devices: every implemented test, resume, bad input.

Cells are 0.1-0.5 s and rounds at most 5 (marked non-compliant); the devices are 64 MiB
image-backed loop devices made and detached by the ``loop_device`` fixture.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import random
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_harness import Volbench, error_line, finish, fio_jobs, fio_json
from test_cli_kill import fio_processes, wait_for

from volbench.errors import VolbenchError
from volbench.model import RunRecord
from volbench.plans.pts import driver, state
from volbench.plans.pts.options import PtsSetup
from volbench.plans.pts.wsat import WSAT_LAST_SAMPLE_MARGIN
from volbench.store.repository import Store

Loop = Callable[..., str]
ZRAM_CONTROL = Path("/sys/class/zram-control")

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="loop devices need root"),
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed"),
]

SHORT = ("--cell-seconds", "500ms", "--max-rounds", "5", "--threads", "2", "--iodepth", "4")


def _pts(volbench: Volbench, device: str, *args: str) -> tuple[str, ...]:
    return ("pts", *args, "--target", device, *SHORT, "--runs-dir", str(volbench.runs_dir))


def _tables(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["title"]: t for t in document["tables"]}


def test_every_test_end_to_end(volbench: Volbench, loop_device: Loop) -> None:
    device = loop_device(64)
    tests = "iops,throughput,latency,wsat,ecw,dirth"  # HIR and XSR: their own tests below
    args = _pts(volbench, device, tests, "--block-sizes", "4k,1024k", "--mixes", "100/0,0/100")
    proc = volbench(
        *args, "--cell-seconds", "200ms", "--toio-grid", "4,1", "--format", "json", timeout=400
    )
    assert proc.returncode == 0, proc.stderr
    assert "estimate:" in proc.stderr and "purged (discard" in proc.stderr
    document = json.loads(proc.stdout)
    assert document["schema"] == "volbench.pts/1" and document["non_compliant"]
    assert any("NON-COMPLIANT" in line for line in document["header"])
    assert document["settings"]["purge_method"].startswith("discard")
    tables = _tables(document)
    iops = {r["block_size"]: r for r in tables["IOPS (average over the window)"]["rows"]}
    assert iops["4k"]["iops_100"] > iops["1m"]["iops_100"] > 0
    for size in ("1024 KiB", "128 KiB"):  # each block size a test of its own (PTS-E 1.1)
        throughput = tables[f"Throughput SEQ {size}"]["rows"]
        assert [r["cell"] for r in throughput] == [f"SEQ {size} write", f"SEQ {size} read"]
        assert all(r["bw_bytes_per_s"] > 0 for r in throughput)
    for test in ("throughput-1024k", "throughput-128k"):  # its own purge and WIPC
        assert (
            f"{test}: purged (" in proc.stderr and f"{test}: preconditioning (WIPC" in proc.stderr
        )
    latency = tables["Latency (response time)"]["rows"]  # reduced like IOPS: 4k x 2 mixes
    assert [r["cell"] for r in latency] == ["RND 4 KiB R/W 100/0", "RND 4 KiB R/W 0/100"]
    assert all(0 < r["lat_mean_ns"] <= r["lat_p99999_ns"] <= r["lat_max_ns"] for r in latency)
    wsat = tables["WSAT: IOPS vs time and vs total GB written"]["rows"]
    assert wsat[-1]["written_gb"] >= 4 * 64 * (1 << 20) / 1e9
    assert [r["sample"] for r in wsat] == list(range(1, len(wsat) + 1))
    for title in ("ECW: demand-intensity sweep", "DIRTH: demand-intensity sweep"):
        rows = tables[title]["rows"]
        assert sorted(r["toio"] for r in rows) == [1, 4, 4, 16]
    points = {r["point"] for r in tables["DIRTH: demand-intensity sweep"]["rows"]}
    assert {"MaxIOPS", "MinIOPS"} <= {p for point in points if point for p in point.split("+")}
    histograms = tables["DIRTH response-time histograms"]["rows"]
    assert histograms and all(sum(r["histogram"].values()) > 0 for r in histograms)
    steady = tables["Steady state (PTS 5-round window)"]["rows"]
    assert {r["test"] for r in steady} == {
        "iops",
        "throughput-1024k",
        "throughput-128k",
        "latency",
        "ecw",
        "dirth",
    }
    assert all(r["average"] > 0 and len(r["values"]) == 5 for r in steady)

    # Per-cell IOPS equal fio's own numbers in the stored raw JSON.
    with Store.open(str(volbench.db)) as store:
        run = store.get_run("latest")
    # the probe's output first (no cell): the estimate's speed is fio's write bandwidth in it
    probe = fio_jobs(fio_json(run.raw_outputs[driver.PROBE_ROUND]))
    assert [j["jobname"] for j in probe] == [driver.PROBE]
    speed = run.setup(PtsSetup).seq_write_bytes_per_s
    assert speed == sum(j["write"]["bw_bytes"] for j in probe) > 0
    checked = 0
    for round_no, raw in enumerate(run.raw_outputs[driver.PROBE_ROUND + 1 :], 1):
        fio_iops: dict[str, float] = {}
        for job in fio_jobs(fio_json(raw)):
            fio_iops[job["jobname"]] = fio_iops.get(job["jobname"], 0.0) + sum(
                job[d]["iops"] for d in ("read", "write")
            )
        for name, value in fio_iops.items():
            stored = sum(r.iops for r in run.results if r.round == round_no and r.test == name)
            assert stored == pytest.approx(value, rel=1e-9), name
            checked += 1
    assert checked > 50

    report = volbench("pts-report", "latest", "--format", "markdown")
    assert report.returncode == 0 and "## Steady state (PTS 5-round window)" in report.stdout


def test_hir_end_to_end(volbench: Volbench, loop_device: Loop) -> None:
    device = loop_device(32)
    args = _pts(volbench, device, "hir", "--hir-cycles", "3")
    proc = volbench(*args, "--cell-seconds", "100ms", "--format", "json", timeout=200)
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert any("3 cycles per wait state" in line for line in document["header"])
    rows = _tables(document)["HIR: IOPS per wait state"]["rows"]
    assert [r["wait_s"] * 600 for r in rows] == pytest.approx([5, 10, 15, 25, 50])
    for row in rows:
        assert row["continuous_iops"] > 0 and row["steady_state_iops"] > 0
        assert row["write_period_iops"] > row["cycle_iops"] > 0  # idle time lowers fio's figure
    assert "hir" in document["steady_state"]


def test_xsr_end_to_end(volbench: Volbench, loop_device: Loop) -> None:
    device = loop_device(32)
    args = _pts(volbench, device, "xsr", "--xsr-cells", "3")
    proc = volbench(*args, "--format", "json", timeout=200)
    assert proc.returncode == 0, proc.stderr
    table = _tables(json.loads(proc.stdout))["XSR: throughput and response time vs time"]
    rows = table["rows"]
    assert [r["group"] for r in rows] == ["g1-seq1m"] * 3 + ["g2-rnd8k"] * 3 + ["g3-seq1m"] * 3
    times = [r["elapsed_s"] for r in rows]
    # fio's own runtimes: 9 cells of at least 0.5 s each (a busy machine runs them over)
    cells: dict[tuple[int, str], float] = {}
    for r in volbench.stored()["results"]:  # runtime_ms: fio's job_runtime of the cell
        if ".wipc." not in r["test"]:
            key = (r["round"], r["test"])
            cells[key] = max(cells.get(key, 0.0), r["runtime_ms"] / 1000)
    fio_s = sum(cells.values())
    assert times == sorted(times) and times[-1] == pytest.approx(fio_s, abs=1e-6)
    assert times[-1] >= 4.5 * 0.99
    assert all(r["bw_bytes_per_s"] > 0 and r["lat_mean_ns"] > 0 for r in rows)
    # recovery is measured inside group 3, on fio's own runtimes (a cell may run a few ms over)
    group3_s = times[-1] - times[5]
    assert table["recovery_s"] is None or 0 < table["recovery_s"] <= group3_s + 1e-9
    # show and export give the same PTS report as the run printed
    assert volbench.show("latest") == json.loads(proc.stdout)
    exported = volbench("export", "latest", "--format", "markdown")
    assert exported.returncode == 0, exported.stderr
    assert "XSR: throughput and response time vs time" in exported.stdout


def test_wsat_ends_at_four_times_the_range_not_a_sample_after(
    volbench: Volbench, loop_device: Loop
) -> None:
    """The last WSAT sample runs for what is left at the previous sample's rate: the
    total stops at 4 x the active range (a little past it), not up to a whole sample
    past it. QD1 4 KiB writes on a 32 MiB device: several 0.5 s samples."""
    device = loop_device(32)
    args = _pts(volbench, device, "wsat", "--threads", "1", "--iodepth", "1")
    proc = volbench(*args, "--wsat-max-rounds", "400", "--format", "json", timeout=200)
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert "preconditioning: none (wsat)" in document["header"][1]
    assert "WSAT at most 400 samples" in document["header"][2]
    assert "max rounds" not in document["header"][2] and "steady state in" not in proc.stderr
    assert "(WSAT: 400 samples)" in proc.stderr and "preconditioning" not in proc.stderr
    assert not any(t["title"].startswith("Steady state") for t in document["tables"])
    table = _tables(document)["WSAT: IOPS vs time and vs total GB written"]
    target, written = table["target_bytes"], table["written_bytes"]
    with Store.open(str(volbench.db)) as store:
        samples = [r for r in store.get_run("latest").results if r.test == "wsat.run.0-100.4k"]
    planned = [r.workload.runtime_s for r in samples]  # the cell as volbench planned it
    assert written == sum(r.io_bytes for r in samples) >= target
    before = sum(r.io_bytes for r in samples[:-1])
    assert before < target  # no sample after the target was reached
    for n in range(1, len(samples)):  # each sample planned from the rate of the one before
        left = target - sum(r.io_bytes for r in samples[:n])
        rate = samples[n - 1].io_bytes / (samples[n - 1].runtime_ms / 1000)
        needed = math.ceil(left / rate * WSAT_LAST_SAMPLE_MARGIN * 1000) / 1000
        assert planned[n] == pytest.approx(min(0.5, max(needed, 0.5 / 60)), abs=0.0011)
    assert "past 4 x active range" in " ".join(table["notes"]) or written == target


def test_destroy_data_purges_a_device_holding_a_filesystem(
    volbench: Volbench, loop_device: Loop, system_tool: Callable[[str], str]
) -> None:
    mkfs = system_tool("mkfs.ext4")

    def ext4(image: Path) -> None:
        subprocess.run([mkfs, "-q", "-F", str(image)], check=True, capture_output=True)

    device = loop_device(32, setup=ext4)
    args = _pts(volbench, device, "iops", "--block-sizes", "4k", "--mixes", "0/100")
    refused = volbench(*args, "--cell-seconds", "100ms")
    assert "ext4" in error_line(refused, 2)
    proc = volbench(
        *args, "--cell-seconds", "100ms", f"--destroy-data={device}", "--format", "json"
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["settings"]["purge_method"].startswith("discard")


def _committed(db: Path) -> int:
    """How many fio processes (cells) of the newest run are committed."""
    if not db.exists():
        return 0
    try:
        with Store.open(str(db)) as store:
            runs = store.list_runs()
            return len(store.get_run(runs[0].id).raw_outputs) if runs else 0
    except VolbenchError:  # the store is being created
        return 0


def _check_pts_complete(run: RunRecord, steady_rounds: int) -> None:
    """Every cell of every PTS round stored exactly once, as fio measured it, and the
    rounds numbered without gaps after the probe's output: WIPC, then ``steady_rounds``
    steady-state rounds."""
    assert run.status.value == "completed", run.error
    setup = run.setup(PtsSetup)
    options, active = setup.options, setup.active_bytes
    rounds = state.stored_rounds(run.results, options, active)
    assert [(r.phase, r.index) for r in rounds] == [("wipc", 0)] + [
        ("ss", n) for n in range(steady_rounds)
    ]
    stored = sorted({r.round for r in run.results})
    assert driver.stored_probe(run) is not None  # round 0: the probe's, no cell's
    assert stored == list(range(1, len(run.raw_outputs)))  # one fio output per cell, no gap
    cells = {(r.round, r.test) for r in run.results}
    assert len(cells) == len(stored)  # one cell per fio process
    assert sum(len(r.cells) for r in rounds) == len(cells)  # none twice, none left out
    for row in run.results:  # the figures are fio's own, from the cell's raw output
        jobs = [
            j for j in json.loads(run.raw_outputs[row.round])["jobs"] if j["jobname"] == row.test
        ]
        assert row.iops == pytest.approx(sum(j[row.direction]["iops"] for j in jobs), rel=1e-9)


@pytest.mark.parametrize("victim", ["volbench", "fio"])
def test_killed_mid_round_resumes_without_lost_or_repeated_cells(
    volbench: Volbench, loop_device: Loop, tmp_path: Path, victim: str
) -> None:
    """SIGKILL of volbench or of fio at a seeded random moment inside a steady-state
    round; ``resume`` goes on at the first missing cell of that very round."""
    rng = random.Random(f"20261124-pts-{victim}")
    device = loop_device(64)
    args = _pts(volbench, device, "iops", "--block-sizes", "4k,64k", "--mixes", "100/0,0/100")
    proc = volbench.start(*args)
    try:
        at = 2 + rng.randrange(1, 4)  # the probe, WIPC, then 1-3 cells of the first round
        assert wait_for(lambda: _committed(volbench.db) >= at, 120), "no cell was committed"
        time.sleep(rng.uniform(0.0, 0.4))  # inside the next cell (0.5 s)
        if victim == "volbench":
            fio = fio_processes(volbench.runs_dir)
            proc.kill()
            for pid in fio:  # fio started by this test, if it did not die with volbench
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        else:
            running = fio_processes(volbench.runs_dir)
            assert running, "no fio to kill"
            for pid in running:
                os.kill(pid, signal.SIGKILL)
        done = finish(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    if victim == "fio":
        assert done.returncode == 3, done.stderr
    with Store.open(str(volbench.db)) as store:
        killed = store.get_run("latest")
    assert killed.status.value == ("interrupted" if victim == "volbench" else "failed")
    before = len(killed.raw_outputs)
    assert before >= at
    resumed = volbench("resume", "latest", "--format", "json", timeout=200)
    assert resumed.returncode == 0, resumed.stderr
    assert "goes on after" in resumed.stderr or before % 4 == 2  # mid-round: it goes on
    with Store.open(str(volbench.db)) as store:
        run = store.get_run("latest")
    _check_pts_complete(run, 5)
    assert json.loads(resumed.stdout)["steady_state"]["iops"]["rounds"] == 5


def test_bad_input_is_one_clear_line(volbench: Volbench, loop_device: Loop) -> None:
    small = loop_device(8)
    line = error_line(volbench(*_pts(volbench, small, "iops")), 2)
    assert "too small for PTS" in line and "16 MiB" in line
    assert "unknown PTS test 'iopz'" in error_line(volbench("pts", "iopz", "--target", small), 2)
    conflict = volbench("pts", "iops", "--target", small, "--active-range", "50")
    assert "conflicts with the enterprise profile" in error_line(conflict, 2)
    empty = volbench("pts", "iops,latency", "--target", small, "--block-sizes", "64k")
    assert "--block-sizes 64k leaves the latency test no cell" in error_line(empty, 2)
    assert volbench.stored_runs() == []


@pytest.fixture
def zram_4k() -> Iterator[str]:
    """A 64 MiB zram device (4 KiB logical blocks) made for the test, removed after it."""
    if not (ZRAM_CONTROL / "hot_add").exists():
        pytest.skip("zram is not available")
    index = int((ZRAM_CONTROL / "hot_add").read_text().strip())
    sysfs = Path(f"/sys/block/zram{index}")
    try:
        (sysfs / "disksize").write_text(str(64 << 20))
        if (sysfs / "queue/logical_block_size").read_text().strip() != "4096":
            pytest.skip("this zram device does not have 4 KiB logical blocks")
        yield f"/dev/zram{index}"
    finally:
        (sysfs / "reset").write_text("1")
        (ZRAM_CONTROL / "hot_remove").write_text(str(index))


def test_4k_logical_blocks_leave_out_half_kib_cells(volbench: Volbench, zram_4k: str) -> None:
    quick = ("--cell-seconds", "200ms", "--max-rounds", "1", "--threads", "1", "--iodepth", "4")
    args = ("pts", "iops", "latency", "--target", zram_4k, *quick)
    asked = volbench(*args, "--block-sizes", "0.5k,4k", "--runs-dir", str(volbench.runs_dir))
    assert f"--block-sizes 512: {zram_4k} has 4 KiB logical blocks" in error_line(asked, 2)
    assert volbench.stored_runs() == []
    proc = volbench(
        *args,
        "--mixes",
        "100/0",
        "--format",
        "json",
        "--runs-dir",
        str(volbench.runs_dir),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    reason = f"0.5 KiB cells left out (IOPS, latency): {zram_4k} has 4 KiB logical blocks"
    assert f"non-compliant with PTS: {reason}" in proc.stderr and "error=22" not in proc.stderr
    document = json.loads(proc.stdout)
    assert reason in document["settings"]["non_compliant_reasons"]
    tables = _tables(document)
    iops = tables["IOPS (average over the window)"]["rows"]
    assert [r["block_size"] for r in iops][-1] == "4k" and all(r["iops_100"] > 0 for r in iops)
    latency = [r["cell"] for r in tables["Latency (response time)"]["rows"]]
    assert latency == ["RND 4 KiB R/W 100/0", "RND 8 KiB R/W 100/0"]  # --mixes 100/0 too


def test_resume_refuses_a_target_whose_logical_blocks_changed(
    volbench: Volbench, tmp_path: Path
) -> None:
    """A run planned for 4 KiB logical blocks (0.5 KiB cells left out) does not resume
    on a target with 512-byte blocks: its cells would no longer be the plan's."""
    from volbench.model import HostInfo, RunStatus, TargetInfo
    from volbench.plans.pts import driver
    from volbench.plans.pts.options import build, fit_block_size

    target = tmp_path / "t.img"
    with target.open("wb") as image:
        image.truncate(32 << 20)
    options = fit_block_size(build(("iops",), "enterprise"), 4096, str(target))
    info = TargetInfo(str(target), "file", 32 << 20, logical_block_bytes=512)
    settings = driver.settings_for(options, info, 32 << 20, "psync", "none")
    with Store.open(str(volbench.db)) as store:
        host = HostInfo("h", 1, "cpu", 1, "k", "fio-3.33")
        run_id = store.create_run(driver.NAME, info, host, {}, settings)
        store.finish_run(run_id, RunStatus.INTERRUPTED, "interrupted by the user")
    proc = volbench("resume", str(run_id), "--force", "--runs-dir", str(volbench.runs_dir))
    line = error_line(proc, 2)
    assert "no longer has the 4096-byte logical blocks" in line
