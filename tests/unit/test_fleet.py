"""Runs on several targets and hosts: places, job files, the aggregate of a recorded
client/server output, fio's failure lines, the probe, and the shared-limit rule."""

from __future__ import annotations

import pytest
from recorded import fixture_text, raw_document

from volbench.analysis.aggregate import place_label, place_tests
from volbench.analysis.percentiles import merge_bins, percentiles_from_bins
from volbench.analysis.shared_limit import SharedLimit, shared_limits
from volbench.errors import UsageError
from volbench.fio.client import HostAddress, failure_in, parse_host
from volbench.fio.job import JobFile, render
from volbench.fio.parser import parse
from volbench.fio.server import parse_identity, server_command
from volbench.model import RW, Place, Workload
from volbench.plans.placement.fleet_spec import Fleet, schedule
from volbench.plans.placement.named import places_from, read_hosts_file
from volbench.plans.runs import fill
from volbench.plans.runs.execution import PlanSpec

FLEET = "fleet_client_server_jsonplus.txt"


def test_local_targets_are_places_of_this_machine() -> None:
    places = places_from(["/dev/sdb", "/dev/sdc", "/dev/sdb"], [])
    assert places == (Place(None, "/dev/sdb"), Place(None, "/dev/sdc"))


def test_targets_per_host_and_for_every_host() -> None:
    places = places_from(["h1:/dev/sdb", "h2:8766:/dev/sdc", "/data/f.img"], ["h1", "h2:8766"])
    assert [p.label for p in places] == [
        "h1:/dev/sdb",
        "h1:/data/f.img",
        "h2:8766:/dev/sdc",
        "h2:8766:/data/f.img",
    ]


@pytest.mark.parametrize(
    ("targets", "hosts", "message"),
    [
        (["h3:/dev/sdb"], ["h1"], "h3 is not in --hosts"),
        (["h1:/dev/sdb"], ["h1", "h2"], "no target for host h2"),
        (["/dev/sdb"], ["h1", "h1"], "given twice"),
        (["/dev/sdb"], ["h1:99999"], "invalid port"),
        (["/dev/sdb"], ["bad host"], "invalid host"),
    ],
)
def test_bad_places_say_what_to_change(targets: list[str], hosts: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        places_from(targets, hosts)


def test_hosts_file_skips_comments_and_blank_lines() -> None:
    text = "# lab\n10.0.0.5\n\n10.0.0.6:8766  # second\n"
    assert read_hosts_file(text) == ["10.0.0.5", "10.0.0.6:8766"]


def test_host_addresses_as_fio_client_options() -> None:
    assert parse_host("10.0.0.5").client_option == "--client=10.0.0.5,8765"
    assert parse_host("h:8766").client_option == "--client=h,8766"
    assert parse_host("[::1]:8765").client_option == "--client=ip6:::1,8765"
    assert str(parse_host("h:8765")) == "h"


def test_job_file_repeats_each_test_per_target_in_one_group() -> None:
    workloads = (
        Workload("randread-4k", RW.RANDREAD, runtime_s=1),
        Workload("randwrite-4k", RW.RANDWRITE, runtime_s=1),
    )
    text = render(JobFile("", workloads, "libaio", targets=("/a", "/b:c"), log_tags=("1", "2")))
    sections = text.split("\n\n")[1:]
    assert [s.splitlines()[0] for s in sections] == ["[randread-4k]"] * 2 + ["[randwrite-4k]"] * 2
    assert ["stonewall" in s.splitlines() for s in sections] == [False, False, True, False]
    assert ["filename=/a" in s for s in sections] == [True, False, True, False]
    assert "filename=/b\\:c" in sections[1]  # fio splits names at unescaped colons
    assert "filename=" not in text.split("\n\n")[0]  # no global target
    logged = render(
        JobFile("", workloads[:1], "libaio", log_dir=None, targets=("/a", "/b"), log_tags=("1",))
    )
    assert "write_iops_log" not in logged


def test_logs_of_each_target_carry_its_place_number(tmp_path) -> None:  # type: ignore[no-untyped-def]
    workloads = (Workload("t", RW.RANDREAD, runtime_s=1),)
    text = render(
        JobFile("", workloads, "libaio", tmp_path, targets=("/a", "/b"), log_tags=("3", "4"))
    )
    assert f"write_iops_log={tmp_path}/t@3" in text
    assert f"write_iops_log={tmp_path}/t@4" in text


def test_aggregate_sums_places_and_merges_their_bins() -> None:
    """Each place's figures are fio's own entry for it; the aggregate adds IOPS and
    bandwidth and takes percentiles of the merged json+ bins (never averaged)."""
    document = raw_document(FLEET)
    entries = [e for e in document["client_stats"] if e["jobname"] != "All clients"]
    together, per_place = place_tests(parse(fixture_text(FLEET)))
    assert [t.name for t in together] == ["randread-4k", "randwrite-4k"]
    assert len(per_place) == 8
    direction = {"randread-4k": "read", "randwrite-4k": "write"}
    for test in per_place:
        host, _, path = (test.hostname or "").partition(":")
        (entry,) = [
            e
            for e in entries
            if e["hostname"] == host
            and e["jobname"] == test.name
            and e["job options"]["filename"] == path
        ]
        assert test.directions[direction[test.name]].iops == entry[direction[test.name]]["iops"]
    for test in together:
        d = direction[test.name]
        mine = [e for e in entries if e["jobname"] == test.name]
        assert test.hostname is None and test.jobs == 4
        assert test.directions[d].iops == pytest.approx(sum(e[d]["iops"] for e in mine))
        assert test.directions[d].bw_bytes_per_s == pytest.approx(
            sum(e[d]["bw_bytes"] for e in mine)
        )
        bins = merge_bins(*({int(k): v for k, v in e[d]["lat_ns"]["bins"].items()} for e in mine))
        expected = percentiles_from_bins(bins, [50.0, 99.0, 99.9])
        latency = test.directions[d].latency
        assert latency is not None
        for pct, value in expected.items():
            assert latency.percentiles_ns[pct] == value


def test_place_label_unescapes_fio_filenames() -> None:
    per_place = place_tests(parse(fixture_text(FLEET)))[1]
    labels = {t.hostname for t in per_place}
    assert "127.0.0.2:/tmp/volbench-fixtures/fleet-a.dat" in labels
    job = parse(fixture_text(FLEET)).jobs[0]
    local = type(job)(
        **{**vars(job), "hostname": None, "options": {"filename": "/dev/by-path/x\\:1"}}
    )
    assert place_label(local) == "/dev/by-path/x:1"


def test_solo_schedule_runs_each_place_alone_before_all_at_once() -> None:
    places = (Place(None, "/a"), Place(None, "/b"))
    plan = PlanSpec("quick", ((Workload("t", RW.RANDREAD),),))
    scheduled, alone = schedule(plan, Fleet(places, solo=True))
    assert [[w.name for w in r] for r in scheduled.rounds] == [["solo.t"], ["solo.t"], ["t"]]
    assert alone == {0: (places[0],), 1: (places[1],)}
    assert schedule(plan, Fleet(places)) == (plan, {})
    # --fill: the range is written once, on every place at once, before the solo rounds
    filled, alone = schedule(fill.with_fill(plan, 1 << 30, None), Fleet(places, solo=True))
    names = [[w.name for w in r] for r in filled.rounds]
    assert names == [["fill"], ["solo.t"], ["solo.t"], ["t"]]
    assert alone == {1: (places[0],), 2: (places[1],)}


def test_fio_failure_lines_name_the_host() -> None:
    hosts = [HostAddress("127.0.0.2", 8765), HostAddress("127.0.0.3", 9000)]
    lost = failure_in("client: host=127.0.0.3 disconnected\n", hosts)
    assert lost is not None and lost.host == "127.0.0.3:9000" and "disconnected" in lost.reason
    refused = failure_in("fio: failed to connect to 127.0.0.2:8765", hosts)
    assert refused is not None and refused.host == "127.0.0.2"
    assert "refused" in refused.reason
    assert failure_in("fio: connect: Connection refused", hosts) is None


def test_probe_reads_fio_client_identity_line() -> None:
    text = "hostname=vm, be=0, 64-bit, os=Linux, arch=x86-64, fio=fio-3.33, flags=1\n<vm> ..."
    probe = parse_identity("10.0.0.5", text, 0.4)
    assert probe.answers and probe.hostname == "vm" and probe.fio_version == "fio-3.33"
    assert probe.os == "Linux" and probe.arch == "x86-64"
    silent = parse_identity("10.0.0.6", "fio: failed to connect to 10.0.0.6:8765\n", 0.1)
    assert not silent.answers and silent.error == "fio: failed to connect to 10.0.0.6:8765"


def test_server_command(tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert server_command("127.0.0.2", 8766)[1:] == ["--server=ip:127.0.0.2,8766"]
    assert server_command(None, 8765)[1:] == ["--server=ip:127.0.0.1,8765"]  # loopback
    assert server_command("::1", 8765)[1] == "--server=ip6:::1,8765"
    pid = tmp_path / "fio.pid"
    assert server_command(None, 8765, pid)[-1] == f"--daemonize={pid}"
    with pytest.raises(UsageError):
        server_command(None, 0)


def test_shared_limit_found_when_the_sum_alone_is_not_reached() -> None:
    """Seed 002: disks of one storage account, each fast alone, capped together."""
    alone = {"randread": {"a": 2000.0, "b": 1990.0, "c": 2010.0}}
    shares = {"randread": {"a": 668.0, "b": 667.0, "c": 669.0}}
    (limit,) = shared_limits({"randread": 2004.0}, alone, shares)
    assert limit.found and limit.sum_alone == 6000.0
    assert limit.sentence() == (
        "shared limit: randread: the 3 targets together did 2,004 IOPS, while alone each "
        "did 1,990-2,010 (sum 6,000, together = 33% of it): they behave as if one limit "
        "of about 2,004 IOPS were shared between them"
    )


@pytest.mark.parametrize(
    ("together", "shares", "found"),
    [
        (4000.0, {"a": 2000.0, "b": 2000.0}, False),  # adds up: no shared limit
        (3200.0, {"a": 1600.0, "b": 1600.0}, True),  # exactly 80% of the sum, both short
        (3201.0, {"a": 1600.5, "b": 1600.5}, False),  # just above 80%
        (2000.0, {"a": 1950.0, "b": 50.0}, False),  # a is at its own limit: not shared
    ],
)
def test_shared_limit_boundaries(together: float, shares: dict[str, float], found: bool) -> None:
    limit = SharedLimit("t", "IOPS", together, {"a": 2000.0, "b": 2000.0}, shares)
    assert limit.found is found


def test_no_finding_without_figures_alone() -> None:
    assert shared_limits({"t": 100.0}, {}, {"t": {"a": 50.0}}) == []
