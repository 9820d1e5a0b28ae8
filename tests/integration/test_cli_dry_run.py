"""``--dry-run`` on every run command: it prints the fio job files, the fio processes and
tests and the estimated duration (and cost), and writes nothing: no store, no runs
folder, no scratch file, no change to the target (checked byte for byte), no cgroup.
A normal run prints the same estimate in one line before it starts.

The dry runs are invoked in this process (click's test runner: no Python start-up per
command); the real run is the real command."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_harness import Volbench
from click.testing import CliRunner

from volbench.cli.main import cli

Loop = Callable[..., str]
BLKIO = Path("/sys/fs/cgroup/blkio")


def _digest(path: Path | str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def _cgroups() -> set[str]:
    return {p.name for p in BLKIO.glob("volbench-*")} if BLKIO.exists() else set()


def test_dry_run_of_every_plan_writes_nothing(
    volbench: Volbench, tmp_path: Path, loop_device: Loop
) -> None:
    device = loop_device(32)
    existing = tmp_path / "existing.img"
    existing.write_bytes(os.urandom(4 << 20))
    missing = tmp_path / "missing.img"
    plan = tmp_path / "plan.json"
    tenants = ("--tenant", "a:8m", "--tenant", "b:16m", "--nominal-sizes")
    planned = volbench("qos", "plan", "--capability", "iops=3000", *tenants, "--format", "json")
    assert planned.returncode == 0, planned.stderr
    plan.write_text(planned.stdout)
    before = (_digest(device), _digest(existing), _cgroups())
    common = ("--runs-dir", str(volbench.runs_dir), "--dry-run")
    short = ("--runtime", "1s", "--ramp-time", "0")
    commands = {
        "quick": ("run", "quick", "--target", str(missing), "--size", "16m", *short, *common),
        "diskmark": ("run", "quick", "--profile", "diskmark", "--target", device, *short, *common),
        "sweep": ("run", "sweep", "--target", device, "--iodepth", "1,4", *short, *common),
        "find-max": (
            "run",
            "sweep",
            "--target",
            device,
            "--iodepth",
            "1-16",
            "--find-max",
            *short,
            *common,
        ),
        "iometer": ("run", "iometer", "--target", device, "--workers", "1,2", *short, *common),
        "scan": ("run", "scan", "--target", str(existing), "--zones", "4", *common),
        "filebench": ("run", "filebench", "--target", device, *short, *common),
        "firsttouch": ("run", "firsttouch", "--target", str(existing), *common),
        "pts": (
            "pts",
            "iops",
            "--target",
            device,
            "--block-sizes",
            "4k",
            "--mixes",
            "100/0",
            "--cell-seconds",
            "1",
            *common,
        ),
        "qos": (
            "qos",
            "verify",
            str(plan),
            "--device",
            device,
            "--duration",
            "1s",
            "--nominal-sizes",
            *common,
        ),
        "fill": ("run", "sweep", "--target", device, "--iodepth", "4", "--fill", *short, *common),
    }
    runner = CliRunner(env={"VOLBENCH_DB": str(volbench.db)})
    results = [runner.invoke(cli, list(args)) for args in commands.values()]
    for (name, args), proc in zip(commands.items(), results, strict=True):
        assert proc.exit_code == 0, (name, proc.output, proc.exception)
        out = proc.stdout
        assert "# fio job file 1 of" in out, (name, out[-2000:])
        assert "[global]" in out and "nothing was run or written" in out, name
        assert "estimated duration:" in out and "fio processes:" in out, name
        target = args[args.index("--target") + 1] if "--target" in args else device
        assert f"filename={target}" in out, name
    text = results[0].stdout
    assert "fio processes: 6; tests: 6" in text and f"{missing} does not exist" in text
    assert "fio processes: 8; tests: 8" in results[1].stdout  # SEQ1M Q8T1 ... RND4K Q1T1
    assert "adaptive" in results[3].stdout  # --find-max: its first point, then the bound
    assert "every tenant's fio at the same time" in results[9].stdout
    assert "fill: writes bytes 0 B to 32 MiB once before the tests" in results[10].stdout
    assert "# fio job file 1 of 2: fill" in results[10].stdout
    assert not volbench.db.exists() and not volbench.runs_dir.exists()
    assert not missing.exists()
    assert (_digest(device), _digest(existing), _cgroups()) == before


def test_dry_run_json_with_the_cost_and_the_estimate_before_a_run(
    volbench: Volbench, tmp_path: Path
) -> None:
    target = tmp_path / "scratch.img"
    base = (
        "run",
        "quick",
        "--target",
        str(target),
        "--size",
        "16m",
        "--runtime",
        "500ms",
        "--ramp-time",
        "0",
        "--runs-dir",
        str(volbench.runs_dir),
    )
    cost = ("--product", "aws-gp3", "--label", "size_gib=100", "--hourly-cost", "0.2usd")
    runner = CliRunner(env={"VOLBENCH_DB": str(volbench.db)})
    dry = runner.invoke(cli, [*base, *cost, "--dry-run", "--format", "json"])
    assert dry.exit_code == 0, (dry.output, dry.exception)
    document = json.loads(dry.stdout)
    assert document["schema"] == "volbench.dry_run/1"
    assert (document["fio_processes"], document["tests"]) == (6, 6)
    assert document["duration_s"][0] == pytest.approx(6 * 0.8)
    assert len(document["job_files"]) == 6
    (usd,) = [c for c in document["cost"] if " USD " in c]
    assert "aws-gp3 at 100 GiB" in usd and "VM 0.2/hour" in usd
    assert not target.exists() and not volbench.db.exists()
    proc = volbench(*base, *cost, "--format", "json")  # a real run: the estimate first
    assert proc.returncode == 0, proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith("estimate:")]
    assert line.startswith("estimate: 6 tests in 6 fio processes, 5s; cost ")
    assert "aws-gp3 at 100 GiB" in line
