"""A dry run is a request to the one start service (:func:`volbench.plans.starting.started`):
it comes out as what the run would do and its cost, its places looked at read-only,
nothing opened or written; ``run`` plans and ``pts`` look at several places alike."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from volbench.cli.main import cli
from volbench.errors import UsageError
from volbench.model import Place
from volbench.plans import quick
from volbench.plans.dry_run import plan_dry_run
from volbench.plans.placement.fleet_spec import Fleet
from volbench.plans.placement.placed import Placement
from volbench.plans.placement.preview import PlacePreview, previewed_place
from volbench.plans.runs.execution import Outcome, Session
from volbench.plans.runs.preview import DryRun
from volbench.plans.runs.reporter import NullReporter
from volbench.plans.starting import Costing, Previewed, RunRequest, Where, started
from volbench.specs.run_cost import HourlyCost


def test_a_dry_run_request_is_answered_with_what_the_run_would_do(tmp_path: Path) -> None:
    target = tmp_path / "scratch.img"
    db = tmp_path / "store.db"
    runs = tmp_path / "runs"
    request = RunRequest(
        Where(str(target), size_bytes=16 << 20),
        True,
        db=str(db),
        runs_dir=str(runs),
        dry_run=True,
        costing=Costing(None, HourlyCost(3.6, "USD")),
    )
    looked: list[tuple[PlacePreview | None, Path]] = []

    def begin(session: Session, place: Placement | None, labels: dict[str, str]) -> Outcome:
        raise AssertionError("a dry run starts nothing")

    def preview(place: PlacePreview | None, folder: Path) -> DryRun:
        looked.append((place, folder))
        assert place is not None
        return plan_dry_run(
            quick.plan(quick.QuickOptions(runtime_s=1, ramp_time_s=0)), place, "psync", folder
        )

    with started(request, NullReporter(), begin, preview) as ran:
        assert isinstance(ran, Previewed)
    ((place, folder),) = looked
    assert place is not None and place.target.path == str(target)
    assert place.target.capacity_bytes == 16 << 20 and "a run would create it" in place.notes[0]
    assert folder == runs
    assert ran.dry.processes == 6 and ran.dry.engine == "psync"
    assert f"filename={target}" in ran.dry.job_files[0].text
    # six 1 s tests and 0.3 s a process: 7.8 s at USD 3.6 an hour
    assert ran.costs == ("0.0078 USD (VM 3.6/hour)",)
    assert not target.exists() and not db.exists() and not runs.exists()


def test_a_plan_without_a_dry_run_refuses_a_dry_run_request(tmp_path: Path) -> None:
    request = RunRequest(None, True, db=str(tmp_path / "store.db"), dry_run=True)
    begin = started(request, NullReporter(), lambda *_: Outcome(1))
    with pytest.raises(UsageError, match="no --dry-run"), begin:
        pass
    assert not (tmp_path / "store.db").exists()


def test_a_place_on_another_host_is_shown_at_its_size_or_refused_as_its_run() -> None:
    fleet = Fleet((Place("127.0.0.1:8765", "/dev/vdb"),))
    shown = previewed_place(fleet, "127.0.0.1:8765:/dev/vdb", True, 1 << 30)
    assert (shown.target.path, shown.target.kind, shown.target.capacity_bytes) == (
        "/dev/vdb",
        "block",
        1 << 30,
    )
    refused = (
        "a real run would be refused: refusing to write 127.0.0.1:8765:/dev/vdb: volbench"
        " cannot check a device on another host for data"
        " (use --destroy-data=127.0.0.1:8765:/dev/vdb to overwrite it)"
    )
    first = "job files of 127.0.0.1:8765:/dev/vdb"
    assert shown.refused and shown.said == (first, refused)  # its kind's check, as its run's
    assert shown.engine(None) == ("libaio", [])  # as its run: the local probe says nothing
    host = Fleet((Place("127.0.0.1", "/dev/vdb"),))  # as volbench names it
    named = previewed_place(host, "", True, 1 << 30, ("127.0.0.1:8765:/dev/vdb",))
    assert not named.refused and named.notes == ()
    with pytest.raises(UsageError, match="need --size"):
        previewed_place(fleet, "127.0.0.1:8765:/dev/vdb", True)


def test_a_place_on_another_host_is_never_probed_on_this_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A guest's ``/dev/vda`` may be this machine's own disk: the dry run's engine is the
    one a run on another host uses, not a read probe of the path here."""
    here = tmp_path / "vda"
    here.write_bytes(b"\0" * 65536)  # a path on this machine with the guest's disk's name
    probed: list[Path] = []
    monkeypatch.setattr(
        "volbench.plans.placement.preview.best_engine", lambda path: probed.append(path) or "x"
    )
    alone = Fleet((Place("127.0.0.1:8765", str(here)),))
    assert previewed_place(alone, "", True, 1 << 30).engine(None) == ("libaio", [])
    assert previewed_place(None, str(here), True).engine(None) == ("x", [])  # local: probed
    assert probed == [here]
    assert previewed_place(alone, "", True, 1 << 30).engine("psync") == ("psync", [])


def test_pts_and_run_plans_show_several_places_alike(tmp_path: Path) -> None:
    first, second = tmp_path / "a.img", tmp_path / "b.img"
    for path in (first, second):
        path.write_bytes(b"\0" * (8 << 20))
    common = ["--target", str(first), "--target", str(second), "--dry-run"]
    common += ["--runs-dir", str(tmp_path / "runs"), "--ioengine", "psync"]
    runner = CliRunner(env={"VOLBENCH_DB": str(tmp_path / "store.db")})
    pts = runner.invoke(cli, ["pts", "iops", "--cell-seconds", "1", *common])
    quick_run = runner.invoke(cli, ["run", "quick", "--runtime", "1s", *common])
    note = f"2 places at once; job files of the first, {first}"
    for result in (pts, quick_run):
        assert result.exit_code == 0, result.output
        assert note in result.stdout.splitlines()
    remote = ["--hosts", "127.0.0.1:8765", "--target", "127.0.0.1:/dev/vdb", "--dry-run"]
    remote += ["--size", "64m", "--no-purge", "--runs-dir", str(tmp_path / "runs")]
    on_host = runner.invoke(cli, ["pts", "iops", "--cell-seconds", "1", *remote])
    assert on_host.exit_code == 0, on_host.output
    assert "dry run of pts on /dev/vdb (block" in on_host.stdout
    assert "filename=/dev/vdb" in on_host.stdout
    assert not (tmp_path / "store.db").exists() and not (tmp_path / "runs").exists()
