"""``qos verify --hosts ... --dry-run``: the tenants on their places shown as every dry
run is (the job files, one fio client, the duration, the places written and what a real
run would refuse), through the start service's one dry run; nothing is written, no
cgroup made, no fio server started. The places are the toy kind's
(``tests/toy_place.py``: files of this machine), put in the table for the test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import toy_place
from volbench.cli.main import cli
from volbench.errors import UsageError
from volbench.places import table
from volbench.targets import cgroup
from volbench.targets.scratch import prepare_file

MiB = 1 << 20


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a dry run starts and sets nothing")


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The toy kind in the table; anything that would start a fio server, limit a
    place or make a cgroup fails the test."""
    monkeypatch.setattr(table, "KINDS", (toy_place.LOOPBACK, *table.KINDS))
    monkeypatch.setattr(toy_place.LoopbackKind, "reach", _refuse)
    monkeypatch.setattr(toy_place.LoopbackKind, "limit", _refuse)
    monkeypatch.setattr(cgroup, "apply", _refuse)
    monkeypatch.setattr(cgroup, "join", _refuse)


def _plan(runner: CliRunner, folder: Path) -> Path:
    tenants = ("--tenant", "a:1", "--tenant", "b:2")
    made = runner.invoke(
        cli, ["qos", "plan", "--capability", "iops=300", *tenants, "--format", "json"]
    )
    assert made.exit_code == 0, made.output
    plan = folder / "plan.json"
    plan.write_text(made.stdout)
    return plan


def _dry(runner: CliRunner, plan: Path, runs: Path, *args: str) -> Result:
    hosts = ("--hosts", "loopback://7,loopback://8")
    common = ("--duration", "5s", "--runs-dir", str(runs), "--dry-run")
    return runner.invoke(cli, ["qos", "verify", str(plan), *hosts, *args, *common])


def test_a_dry_run_on_places_shows_each_tenant_and_writes_nothing(
    toy: None, tmp_path: Path
) -> None:
    db, runs = tmp_path / "store.db", tmp_path / "runs"
    runner = CliRunner(env={"VOLBENCH_DB": str(db)})
    plan = _plan(runner, tmp_path)
    ours, theirs = tmp_path / "ours.dat", tmp_path / "theirs.dat"
    prepare_file(ours, 4 * MiB)  # volbench's own: written without --force
    theirs.write_bytes(b"\x5a" * MiB)
    targets = ("--target", f"loopback://7:{ours}", "--target", f"loopback://8:{theirs}")
    before = ours.read_bytes()

    shown = _dry(runner, plan, runs, *targets, "--rw", "randwrite", "--size", "2m")
    assert shown.exit_code == 0, (shown.output, shown.exception)
    out = shown.stdout.splitlines()
    assert f"# fio job file 1 of 2: tenant a on loopback://7:{ours}" in out
    assert f"# fio job file 2 of 2: tenant b on loopback://8:{theirs}" in out
    assert f"filename={ours}" in out and f"filename={theirs}" in out
    assert out.count("size=2097152") == 2 and out.count("rw=randwrite") == 2
    assert out.count("runtime=5s") == 2 and "ioengine=libaio" in out  # as a run on hosts
    assert "fio processes: 1; tests: 2" in out
    assert "estimated duration: 5s" in out  # 5 s and 0.3 s for the fio client
    refused = [line for line in out if line.startswith("a real run would be refused: ")]
    assert len(refused) == 1 and f"refusing to overwrite {theirs}" in refused[0], out
    assert any(line.startswith("tenant b: read 200 IOPS") and str(theirs) in line for line in out)
    line = f"tenant a: read 100 IOPS / 0 B/s, write 100 IOPS / 0 B/s; writes loopback://7:{ours}"
    assert f"{line} (a loopback place)" in out
    assert "passes its kind's safety checks" not in shown.stdout

    also = tmp_path / "also.dat"
    prepare_file(also, 4 * MiB)
    both = ("--target", f"loopback://7:{ours}", "--target", f"loopback://8:{also}")
    allowed = _dry(runner, plan, runs, *both, "--rw", "randwrite")
    assert allowed.exit_code == 0, allowed.output
    assert "every place written passes its kind's safety checks" in allowed.stdout
    assert "a real run would be refused" not in allowed.stdout

    read = _dry(runner, plan, runs, *targets, "--format", "json")  # sized by the files
    assert read.exit_code == 0, read.output
    document = json.loads(read.stdout)
    assert document["schema"] == "volbench.dry_run/1" and document["plan"] == "qos-verify"
    assert document["target_kind"] == "fleet" and document["capacity_bytes"] == MiB
    assert document["duration_s"] == [5.3, 5.3] and document["tests"] == 2
    assert [j["label"] for j in document["job_files"]] == [
        f"tenant a on loopback://7:{ours}",
        f"tenant b on loopback://8:{theirs}",
    ]
    assert not any("refused" in n or "passes" in n for n in document["notes"])  # reads only

    assert not db.exists() and not runs.exists()
    assert ours.read_bytes() == before and theirs.read_bytes() == b"\x5a" * MiB


def test_a_dry_run_says_what_its_run_would_refuse(toy: None, tmp_path: Path) -> None:
    """A place whose kind cannot hold it to limits (a fio server's host), and places
    that cannot be the plan's tenants: refused in one line, as the run refuses them."""
    runner = CliRunner(env={"VOLBENCH_DB": str(tmp_path / "store.db")})
    plan = _plan(runner, tmp_path)
    runs = tmp_path / "runs"
    hosts = ["--hosts", "127.0.0.2,127.0.0.3", "--size", "1g", "--rw", "randwrite"]
    places = ["--target", "127.0.0.2:/dev/vdb", "--target", "127.0.0.3:/data/b"]
    hosts += ["--destroy-data", "127.0.0.2:/dev/vdb", "--dry-run", "--runs-dir", str(runs)]
    server = runner.invoke(cli, ["qos", "verify", str(plan), *hosts, *places])
    assert server.exit_code == 0, server.output
    refused = [n for n in server.stdout.splitlines() if n.startswith("a real run would be refused")]
    assert refused == [
        "a real run would be refused: refusing to write 127.0.0.3:/data/b: volbench cannot"
        " check a file on another host (use --force to let fio create or overwrite it)",
        *(
            f"a real run would be refused: volbench cannot hold {host} to a QoS plan's limits:"
            " verify a plan on a device of this machine (--device) or on lab guests (--guests)"
            for host in ("127.0.0.2", "127.0.0.3")
        ),
    ]
    forced = runner.invoke(cli, ["qos", "verify", str(plan), *hosts, *places, "--force"])
    assert forced.exit_code == 0, forced.output
    assert "file on another host" not in forced.stdout  # --force lets fio write it
    assert "cannot hold 127.0.0.3 to a QoS plan's limits" in forced.stdout
    local = runner.invoke(cli, ["qos", "verify", str(plan), "--device", "/dev/x", "--force"])
    assert isinstance(local.exception, UsageError)
    assert "--force lets fio write a place's file: give it with --hosts" in str(local.exception)
    alone = ["--hosts", "loopback://7", "--target", f"loopback://7:{tmp_path / 'x'}"]
    one = runner.invoke(cli, ["qos", "verify", str(plan), *alone, "--size", "1m", "--dry-run"])
    assert isinstance(one.exception, UsageError)
    assert "the plan has 2 tenants (a, b)" in str(one.exception)
    assert not runs.exists() and not (tmp_path / "store.db").exists()
