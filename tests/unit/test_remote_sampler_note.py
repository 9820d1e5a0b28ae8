"""What the limit sheets say of a run's samples on other hosts (sampled, a plain fio
server, a failed ssh session, sampling off), the ssh command of the sampler's session,
and a round's remote series as stored (named after the host)."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path
from typing import IO

import pytest
from recorded import FIO_FIXTURES

from volbench.fio.tunnel import SshHost
from volbench.model import HostSample, LogSeries, Place, PlaceRecord, RunRecord, TargetInfo
from volbench.plans.imported.importing import import_file
from volbench.plans.placement.fleet_preparation import fleet_settings
from volbench.plans.placement.fleet_spec import Fleet
from volbench.plans.runs.remote_watch import RemoteWatch, not_sampled, watch_of
from volbench.report.limit_sheets import explain_sheet, limits_sheet
from volbench.store.repository import Store
from volbench.targets.remote_channel import ssh_sampler_command
from volbench.targets.remote_sampler import RemoteSampler
from volbench.targets.remote_stream import sampler_script

SSH = "ssh://root@10.0.0.5"
AGENT = "10.0.0.6:9000"


def remote_run(tmp_path: Path, *hosts: str, error: str | None = None) -> RunRecord:
    """A stored run (an imported output) as if it had run on ``hosts``."""
    with Store.open(str(tmp_path / "s.db")) as store:
        run = store.get_run(import_file(store, FIO_FIXTURES / "text_around_json_jsonplus.txt", {}))
    places = tuple(PlaceRecord(f"{h}:/dev/vdb", h, "/dev/vdb", None) for h in hosts)
    settings = dataclasses.replace(run.settings, places=places)
    return dataclasses.replace(run, plan="sweep", settings=settings, error=error)


def host_series(host: str) -> LogSeries:
    return LogSeries(0, "t", "dev_iops", 0, host, "host", ((1000, 500.0),))


def test_a_plain_fio_server_has_no_channel(tmp_path: Path) -> None:
    note = explain_sheet(remote_run(tmp_path, AGENT)).notes[0]
    assert note == (
        "no host or device samples: 10.0.0.6:9000 runs only fio's server; volbench has no "
        "channel to sample it: use ssh://10.0.0.6; the verdicts rest on fio's figures alone"
    )


def test_a_failed_ssh_session_is_said_with_its_reason(tmp_path: Path) -> None:
    warning = not_sampled(SSH, "its sampling session ended (ssh: Connection refused)")
    run = remote_run(tmp_path, SSH, error=f"something else; {warning}; and more")
    note = explain_sheet(run).notes[0]
    assert note == (
        f"no host or device samples: {SSH} is not sampled: its sampling session ended (ssh: "
        "Connection refused); the verdicts rest on fio's figures alone"
    )
    for host in (SSH, "lab://g1"):
        off = explain_sheet(remote_run(tmp_path, host)).notes[0]
        assert f"{host} was not sampled: sampling was off, or the run was stored by a" in off


def test_sampled_hosts_are_named_and_the_others_say_why(tmp_path: Path) -> None:
    run = remote_run(tmp_path, SSH, AGENT)
    run = dataclasses.replace(run, series=(host_series(SSH),))
    note = (limits_sheet(run) or pytest.fail("no sheet")).notes[0]
    assert note.startswith("samples: each CPU's busy share")
    assert note.endswith(
        f"once a second while each test ran, on {SSH}; 10.0.0.6:9000 runs only fio's server; "
        "volbench has no channel to sample it: use ssh://10.0.0.6"
    )


def test_sampler_session_is_the_tunnels_ssh_without_its_forward() -> None:
    script = sampler_script("/dev/vdb")
    command = ssh_sampler_command(SshHost("10.0.0.5", "root", 2222), script, Path("/cfg"))
    assert "-L" not in command and command[:4] == ["ssh", "-T", "-F", "/cfg"]
    assert "BatchMode=yes" in command and "ForwardAgent=no" in command
    assert command[-3:] == ["--", "root@10.0.0.5", f"sh -c '{script}'"]
    assert command[command.index("-p") + 1] == "2222"
    with pytest.raises(ValueError, match="single quotes"):
        ssh_sampler_command(SshHost("h"), "echo 'x'")


class Ended:
    """A channel whose stream is empty: the sampler fails at once."""

    def open(self) -> IO[bytes]:
        return io.BytesIO(b"")

    def poke(self) -> None:
        pass

    def reason(self) -> str:
        return "gone"

    def close(self) -> None:
        pass


def test_round_series_are_named_after_their_host() -> None:
    sample = HostSample(time_s=100.0, cpu_busy_pct=(10.0, 20.0), iops=500.0)
    working = RemoteSampler(SSH, Ended())
    working.parser.hw_queues = 4
    watch = RemoteWatch((working,), {SSH: (sample,)})
    series = watch.take(3, "randread")
    assert {s.host for s in series} == {SSH} and {s.round for s in series} == {3}
    assert {s.kind for s in series} == {"cpu", "dev_iops", "dev_hwq"}
    assert [s.points for s in series if s.kind == "dev_iops"] == [((100000, 500.0),)]
    failed = RemoteSampler("ssh://other", Ended())
    failed.open(ready_s=2)
    assert failed.failure == "its sampling session ended (gone)"
    samplers = {SSH: working, "ssh://other": failed, AGENT: "no channel"}
    found = watch_of(samplers, [Place(SSH, "/dev/vdb"), Place("ssh://other", "/p")])
    assert found is not None and found.samplers == (working,)
    assert watch_of(samplers, []) is None


def test_a_run_records_why_each_host_was_not_sampled(tmp_path: Path) -> None:
    """A run records each place's kind and why its host gave no samples from the start
    (``PlaceRecord.kind``, ``unsampled``); the limit sheets read those facts, not the
    run's warnings (its error text here says nothing of the hosts)."""
    failed = RemoteSampler(SSH, Ended())
    failed.open(ready_s=2)
    places = (Place(SSH, "/dev/vdb"), Place(AGENT, "/dev/vdb"), Place("lab://g1", "/dev/vda"))
    fleet = Fleet(places, samplers={SSH: failed, AGENT: "no channel"})
    infos = [TargetInfo(p.label, "remote", 1 << 20) for p in places]
    recorded = fleet_settings(fleet, infos, []).places
    assert [p.kind for p in recorded] == ["ssh", "server", "lab"]
    assert recorded[0].unsampled == (f"{SSH} is not sampled: its sampling session ended (gone)")
    assert recorded[1].unsampled == (
        "10.0.0.6:9000 runs only fio's server; volbench has no channel to sample it: "
        "use ssh://10.0.0.6"
    )
    assert recorded[2].unsampled is None  # sampling was off for it (not in the samplers)
    run = remote_run(tmp_path, error="a warning of something else")
    run = dataclasses.replace(run, settings=dataclasses.replace(run.settings, places=recorded))
    note = explain_sheet(run).notes[0]
    assert note == (
        "no host or device samples: 10.0.0.6:9000 runs only fio's server; volbench has no "
        "channel to sample it: use ssh://10.0.0.6; lab://g1 was not sampled: sampling was "
        f"off, or the run was stored by a volbench older than it; {SSH} is not sampled: its "
        "sampling session ended (gone); the verdicts rest on fio's figures alone"
    )
