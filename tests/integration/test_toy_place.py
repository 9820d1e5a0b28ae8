"""A kind of place added in a test (CONTRIBUTING.md, "Adding a place kind"): the toy
kind of ``tests/toy_place.py`` (``--hosts loopback://N``: a folder of this machine
through a fio server the kind starts on 127.0.0.N), put in the table here, runs
``run quick`` and ``pts`` through real fio servers, then the same commands again
through the replay runner from the first runs' own outputs; its writes are checked
as a local target's and its target's identity before every round."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_harness import Volbench, error_line

from volbench.errors import TargetError
from volbench.model import RunRecord, RunStatus
from volbench.plans.pts.options import PtsSetup
from volbench.store.repository import Store
from volbench.targets.safety import check_round
from volbench.targets.scratch import prepare_file

MiB = 1 << 20
HOST = "loopback://7"
WITH_THE_TOY = (
    "import sys, toy_place; from volbench.places import table; "
    "table.KINDS = (toy_place.LOOPBACK, *table.KINDS); "  # its entry in the table
    "from volbench.cli.main import main; sys.argv[0] = 'volbench'; main()"
)
TESTS = Path(__file__).resolve().parents[1]


def toy_volbench(volbench: Volbench, *args: str) -> subprocess.CompletedProcess[str]:
    """``volbench ARGS`` with the toy kind in the table of place kinds."""
    env = {**volbench.env, "PYTHONPATH": os.pathsep.join([str(TESTS), *sys.path])}
    return subprocess.run(
        [sys.executable, "-c", WITH_THE_TOY, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def stored(volbench: Volbench, ref: str = "latest") -> RunRecord:
    with Store.open(str(volbench.db)) as store:
        return store.get_run(ref)


def replay_folder(run: RunRecord, folder: Path) -> Path:
    """``run``'s fio outputs, one file each, for ``--replay``."""
    folder.mkdir()
    for n, raw in enumerate(run.raw_outputs):
        (folder / f"{n:03d}.json").write_text(raw)
    return folder


def test_a_toy_place_runs_quick_and_pts_through_fio_and_the_replay_runner(
    volbench: Volbench, tmp_path: Path
) -> None:
    target = tmp_path / "folder" / "t.dat"
    target.parent.mkdir()
    prepare_file(target, 16 * MiB)  # volbench's own: written without --force
    place = f"{HOST}:{target}"
    runs = ("--runs-dir", str(volbench.runs_dir))
    quick = ("run", "quick", "--hosts", HOST, "--target", place, "--runtime", "1s", *runs)
    proc = toy_volbench(volbench, *quick, "--ramp-time", "0")
    assert proc.returncode == 0, proc.stderr
    run = stored(volbench)
    assert run.status is RunStatus.COMPLETED and run.raw_outputs
    (recorded,) = run.settings.places
    assert (recorded.kind, recorded.host, recorded.path) == ("loopback", HOST, str(target))
    assert recorded.target is not None and recorded.target.identity is not None
    assert recorded.target.identity.inode == target.stat().st_ino  # checked every round
    shares = [r for r in run.results if r.hostname == place]
    assert shares and all(r.iops > 0 for r in shares)
    fio = json.loads(run.raw_outputs[0][run.raw_outputs[0].index("{") :])
    assert {e["hostname"] for e in fio["client_stats"]} <= {"127.0.0.7", "All clients"}
    note = f"{HOST} is a toy place: volbench has no channel to sample it"
    assert recorded.unsampled == note

    again = toy_volbench(
        volbench, *quick, "--ramp-time", "0", "--replay", str(replay_folder(run, tmp_path / "q"))
    )
    assert again.returncode == 0, again.stderr
    replayed = stored(volbench)
    assert replayed.id != run.id
    assert sorted(r.iops for r in replayed.results) == sorted(r.iops for r in run.results)

    pts = ("pts", "wsat", "--hosts", HOST, "--target", place, "--cell-seconds", "1")
    proc = toy_volbench(volbench, *pts, "--wsat-max-rounds", "2", *runs)
    assert proc.returncode == 0, proc.stderr
    run = stored(volbench)
    assert run.status is RunStatus.COMPLETED and 1 <= len(run.raw_outputs) <= 2
    assert run.setup(PtsSetup).purge_method == "file emptied and refilled"  # by the kind
    assert run.settings.places[0].kind == "loopback"
    again = toy_volbench(
        volbench,
        *pts,
        "--wsat-max-rounds",
        "2",
        "--replay",
        str(replay_folder(run, tmp_path / "p")),
    )
    assert again.returncode == 0, again.stderr
    assert sorted(r.iops for r in stored(volbench).results) == sorted(r.iops for r in run.results)


def test_a_toy_place_writes_only_what_the_safety_checks_allow(
    volbench: Volbench, tmp_path: Path
) -> None:
    """The toy's targets are this machine's: a file volbench did not make is not
    overwritten without --force, and a target replaced after the run started is
    refused by the identity check made before every round."""
    theirs = tmp_path / "theirs.dat"
    theirs.write_bytes(b"\x5a" * MiB)
    write = ("run", "sweep", "--rw", "randwrite", "--bs", "4k", "--runtime", "1s", "--hosts", HOST)
    refused = toy_volbench(volbench, *write, "--target", f"{HOST}:{theirs}")
    assert "refusing to overwrite" in error_line(refused, 2)
    assert theirs.read_bytes() == b"\x5a" * MiB
    ours = tmp_path / "ours.dat"
    prepare_file(ours, MiB)
    proc = toy_volbench(volbench, *write, "--ramp-time", "0", "--target", f"{HOST}:{ours}")
    assert proc.returncode == 0, proc.stderr
    (recorded,) = stored(volbench).settings.places
    assert recorded.target is not None
    check_round(recorded.target, writes=True)  # still the same file
    other = tmp_path / "other.dat"
    prepare_file(other, MiB)
    other.replace(ours)  # another file (inode) under the same name
    with pytest.raises(TargetError, match="no longer what the run started on"):
        check_round(recorded.target, writes=True)
