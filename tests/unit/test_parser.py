"""Parser tests over recorded fio outputs (tests/fixtures/fio, see its README).

Expected numbers are read independently from the raw JSON with ``json.loads``.
"""

from __future__ import annotations

import json

import pytest
from recorded import FIO_FIXTURES, fixture_text, raw_document

from volbench.errors import FioError
from volbench.fio.latency import plat_idx_to_val as _plat_idx_to_val
from volbench.fio.parser import parse
from volbench.model import FioOutput

ALL_FIO_FIXTURES = sorted(p.name for p in FIO_FIXTURES.iterdir() if p.suffix in (".json", ".txt"))


def _parse(name: str) -> FioOutput:
    return parse(fixture_text(name))


def test_fixture_set_is_complete() -> None:
    assert len(ALL_FIO_FIXTURES) == 11


def test_a_job_error_is_read_with_the_jobs_figures() -> None:
    """fio stopped verify-read with error 84 after 701 reads: both are kept."""
    raw = {j["jobname"]: j for j in raw_document("verify_error_jsonplus.txt")["jobs"]}
    jobs = {j.name: j for j in _parse("verify_error_jsonplus.txt").jobs}
    assert (jobs["verify-read"].error, jobs["randread"].error) == (84, 0)
    read = jobs["verify-read"].directions["read"]
    assert read.total_ios == raw["verify-read"]["read"]["total_ios"] == 701
    assert read.iops == raw["verify-read"]["read"]["iops"]


def test_a_reporting_groups_runtime_is_the_groups_not_its_jobs_sum() -> None:
    """numjobs=4 with group_reporting for 1 s: fio's job_runtime is the four jobs' sum,
    the group ran as long as its read runtime (found running gcp-pd-filesystem's 16-job
    steps, whose 1 s rounds counted as 17 s)."""
    raw = raw_document("group_reporting_json.json")["jobs"][0]
    (job,) = _parse("group_reporting_json.json").jobs
    assert raw["job_runtime"] >= 4 * 1000 and 1000 <= raw["read"]["runtime"] < 1500
    assert job.runtime_ms == raw["read"]["runtime"]
    assert job.directions["read"].total_ios == raw["read"]["total_ios"]


@pytest.mark.parametrize("name", ALL_FIO_FIXTURES)
def test_every_fixture_parses_all_entries(name: str) -> None:
    raw = raw_document(name)
    entries = raw.get("jobs", []) + raw.get("client_stats", [])
    out = _parse(name)
    assert len(out.jobs) + len(out.all_clients) == len(entries)
    assert [j.name for j in out.jobs + out.all_clients] == [e["jobname"] for e in entries]
    assert out.fio_version == raw["fio version"]


def test_plain_json_single_randread() -> None:
    name = "randread_json.json"
    raw_job = raw_document(name)["jobs"][0]
    raw_read = raw_job["read"]
    out = _parse(name)
    assert out.timestamp_s == raw_document(name)["timestamp"]
    [job] = out.jobs
    assert job.name == "randread"
    assert job.groupid == 0
    assert job.error == 0
    assert job.hostname is None
    assert job.usr_cpu_pct == raw_job["usr_cpu"]
    assert job.sys_cpu_pct == raw_job["sys_cpu"]
    assert job.runtime_ms == raw_job["job_runtime"]
    assert job.options == raw_job["job options"]
    assert job.options["rw"] == "randread"
    read = job.directions["read"]
    assert read.active
    assert read.iops == raw_read["iops"]
    assert read.bw_bytes_per_s == raw_read["bw_bytes"]
    assert read.io_bytes == raw_read["io_bytes"] == raw_read["io_kbytes"] * 1024
    assert read.runtime_ms == raw_read["runtime"]
    assert read.total_ios == raw_read["total_ios"]
    lat = read.latency
    assert lat is not None
    # plain json: clat has percentiles, lat has none -> the whole record is clat
    assert lat.kind == "clat"
    assert lat.mean_ns == raw_read["clat_ns"]["mean"]
    assert lat.min_ns == raw_read["clat_ns"]["min"]
    assert lat.max_ns == raw_read["clat_ns"]["max"]
    assert lat.stddev_ns == raw_read["clat_ns"]["stddev"]
    assert lat.samples == raw_read["clat_ns"]["N"]
    assert lat.percentiles_ns == {
        float(k): float(v) for k, v in raw_read["clat_ns"]["percentile"].items()
    }
    assert lat.bins == {}
    write = job.directions["write"]
    assert not write.active
    assert write.latency is None
    assert set(job.directions) == {"read", "write", "trim"}


def test_disk_util() -> None:
    name = "randread_json.json"
    raw = raw_document(name)["disk_util"]
    out = _parse(name)
    assert [d.name for d in out.disk_util] == [d["name"] for d in raw]
    assert out.disk_util[0].util_pct == raw[0]["util"]
    assert out.disk_util[0].read_ios == raw[0]["read_ios"]
    assert out.disk_util[0].write_ios == raw[0]["write_ios"]


def test_lat_percentiles_prefers_total_latency_with_bins() -> None:
    name = "randrw_lat_percentiles_jsonplus.json"
    raw_job = raw_document(name)["jobs"][0]
    [job] = _parse(name).jobs
    for direction in ("read", "write"):
        raw_lat = raw_job[direction]["lat_ns"]
        lat = job.directions[direction].latency
        assert lat is not None
        assert lat.kind == "lat"
        assert lat.mean_ns == raw_lat["mean"]
        assert lat.stddev_ns == raw_lat["stddev"]
        assert lat.samples == raw_lat["N"]
        assert lat.bins == {int(k): v for k, v in raw_lat["bins"].items()}
        assert sum(lat.bins.values()) == raw_lat["N"]
        assert lat.percentiles_ns[99.0] == raw_lat["percentile"]["99.000000"]
        # the clat block differs, so this really is the lat block
        assert lat.mean_ns != raw_job[direction]["clat_ns"]["mean"]
    read, write = job.directions["read"], job.directions["write"]
    assert read.total_ios == raw_job["read"]["total_ios"]
    assert write.total_ios == raw_job["write"]["total_ios"]
    assert read.total_ios > 2 * write.total_ios  # rwmixread=70


def test_jsonplus_without_lat_percentiles_uses_clat_bins() -> None:
    name = "numjobs4_jsonplus.json"
    raw_jobs = raw_document(name)["jobs"]
    out = _parse(name)
    assert len(out.jobs) == 4
    assert {j.name for j in out.jobs} == {"clones"}
    assert {j.groupid for j in out.jobs} == {0}
    for job, raw_job in zip(out.jobs, raw_jobs, strict=True):
        lat = job.directions["read"].latency
        assert lat is not None
        assert lat.kind == "clat"
        assert lat.bins == {int(k): v for k, v in raw_job["read"]["clat_ns"]["bins"].items()}
        assert job.directions["read"].iops == raw_job["read"]["iops"]


def test_stonewall_groups_and_global_options() -> None:
    name = "stonewall_jsonplus.json"
    raw = raw_document(name)
    out = _parse(name)
    assert [(j.name, j.groupid) for j in out.jobs] == [("randwrite", 0), ("randread", 1)]
    assert out.global_options == raw["global options"]
    assert out.global_options["size"] == "32M"
    first, second = out.jobs
    assert first.directions["write"].active and not first.directions["read"].active
    assert second.directions["read"].active and not second.directions["write"].active
    assert first.directions["write"].iops == raw["jobs"][0]["write"]["iops"]


def test_text_around_json_is_ignored() -> None:
    name = "text_around_json_jsonplus.txt"
    text = fixture_text(name)
    assert text.startswith("note: both iodepth >= 1 and synchronous I/O engine")
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    out = parse(text)
    [job] = out.jobs
    assert job.name == "psync-qd8"
    assert job.directions["read"].iops == raw_document(name)["jobs"][0]["read"]["iops"]
    # the same JSON with more text after it parses identically
    assert parse(text + "\nfio: some trailing message\n") == out


def test_client_server_hosts_and_all_clients() -> None:
    name = "client_server_jsonplus.txt"
    raw = raw_document(name)["client_stats"]
    out = _parse(name)
    assert sorted((j.name, j.hostname) for j in out.jobs) == [
        ("host1-randread", "127.0.0.2"),
        ("host2-randread", "127.0.0.3"),
    ]
    [agg] = out.all_clients
    assert agg.name == "All clients"
    raw_agg = next(e for e in raw if e["jobname"] == "All clients")
    raw_hosts = [e for e in raw if e["jobname"] != "All clients"]
    assert agg.directions["read"].iops == raw_agg["read"]["iops"]
    assert agg.directions["read"].iops == pytest.approx(
        sum(e["read"]["iops"] for e in raw_hosts), rel=1e-9
    )
    assert agg.directions["read"].iops == pytest.approx(
        sum(j.directions["read"].iops for j in out.jobs), rel=1e-9
    )
    assert agg.directions["read"].total_ios == sum(j.directions["read"].total_ios for j in out.jobs)
    # fio sums its clients' job_runtime: the aggregate ran as long as its longest direction
    assert raw_agg["job_runtime"] > 1.9 * raw_agg["read"]["runtime"]  # two clients
    assert agg.runtime_ms == raw_agg["read"]["runtime"]
    # hosts carry json+ bins; fio's aggregate has none
    for job in out.jobs:
        lat = job.directions["read"].latency
        assert lat is not None and lat.bins
    agg_lat = agg.directions["read"].latency
    assert agg_lat is not None
    assert agg_lat.bins == {} and agg_lat.percentiles_ns == {}
    assert agg_lat.kind == "lat"
    assert len(out.disk_util) == 2


def test_fio2_old_names_converted_to_ns_and_bytes() -> None:
    name = "fio2_randread_4jobs.json"
    raw_jobs = raw_document(name)["jobs"]
    out = _parse(name)
    assert out.fio_version == "fio-2.1.11"
    assert out.timestamp_s == 0  # fio 2.1 printed no timestamp
    assert len(out.jobs) == 4
    for job, raw_job in zip(out.jobs, raw_jobs, strict=True):
        raw_read = raw_job["read"]
        read = job.directions["read"]
        assert read.io_bytes == raw_read["io_bytes"] * 1024  # fio 2.x io_bytes is KiB
        assert read.bw_bytes_per_s == raw_read["bw"] * 1024
        assert read.runtime_ms == raw_read["runtime"]
        assert job.runtime_ms == raw_read["runtime"]  # no job_runtime in fio 2.x
        lat = read.latency
        assert lat is not None
        assert lat.kind == "clat"
        assert lat.mean_ns == pytest.approx(raw_read["clat"]["mean"] * 1000)
        assert lat.max_ns == raw_read["clat"]["max"] * 1000
        raw_pcts = {float(k): v for k, v in raw_read["clat"]["percentile"].items()}
        assert 0.0 in raw_pcts  # fio 2.1's unused slots ...
        assert 0.0 not in lat.percentiles_ns  # ... are dropped
        assert lat.percentiles_ns == {p: v * 1000.0 for p, v in raw_pcts.items() if p > 0}
        assert lat.samples == 0  # fio 2.1 printed neither N nor total_ios
        assert job.directions["write"].latency is None
    assert out.jobs[0].directions["read"].latency is not None
    assert out.jobs[0].directions["read"].latency.percentiles_ns[99.0] == 506_000.0


def test_fio2_jsonplus_index_bins_are_converted() -> None:
    text = json.dumps(
        {
            "fio version": "fio-2.15",
            "jobs": [
                {
                    "jobname": "j",
                    "read": {
                        "io_bytes": 8,
                        "bw": 4,
                        "iops": 1.0,
                        "runtime": 2000,
                        "total_ios": 2,
                        "clat": {
                            "min": 100,
                            "max": 129,
                            "mean": 114.5,
                            "stddev": 20.5,
                            "percentile": {"50.000000": 100},
                            "bins": {
                                "FIO_IO_U_PLAT_BITS": 6,
                                "FIO_IO_U_PLAT_VAL": 64,
                                "FIO_IO_U_PLAT_NR": 1216,
                                "0": 0,
                                "100": 1,
                                "128": 1,
                            },
                        },
                    },
                }
            ],
        }
    )
    lat = parse(text).jobs[0].directions["read"].latency
    assert lat is not None
    # index 100 is exact (100 usec); index 128 is the middle of [128, 130) usec
    assert lat.bins == {100_000: 1, 129_000: 1}
    assert lat.samples == 2


def test_plat_idx_to_val_reproduces_recorded_bin_keys() -> None:
    values = {_plat_idx_to_val(i, 6) for i in range(29 * 64)}  # FIO_IO_U_PLAT_NR, fio 3.x
    keys: set[int] = set()
    for name in ALL_FIO_FIXTURES:
        for entry in raw_document(name).get("jobs", []) + raw_document(name).get(
            "client_stats", []
        ):
            for direction in ("read", "write"):
                for kind in ("clat_ns", "lat_ns"):
                    bins = entry.get(direction, {}).get(kind, {}).get("bins", {})
                    keys.update(int(k) for k in bins)
    assert len(keys) > 100
    assert keys <= values


def test_missing_fields_read_as_zero() -> None:
    write = '{"iops": 5, "runtime": 1000, "total_ios": 5}'
    text = f'{{"jobs": [{{"jobname": "x", "read": {{}}, "write": {write}}}]}}'
    out = parse(text)
    [job] = out.jobs
    assert job.groupid == 0 and job.runtime_ms == 1000.0 and job.usr_cpu_pct == 0.0
    read = job.directions["read"]
    assert (read.iops, read.io_bytes, read.bw_bytes_per_s, read.total_ios) == (0.0, 0, 0.0, 0)
    assert read.latency is None
    assert job.directions["write"].iops == 5.0
    assert out.fio_version == "" and out.disk_util == () and out.global_options == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "holds no JSON object"),
        ("fio: failed to open file /dev/nope\n", "holds no JSON object"),
        ("} {", "the JSON ends early (after 3 bytes)"),
        ('note: x\n{ "jobs" : [ {\n', "the JSON ends early (after 23 bytes)"),
        ('{"jobs": [1, 2,]}', "not valid JSON"),
        ('{"fio version": "fio-3.33"}', "neither 'jobs' nor 'client_stats'"),
    ],
)
def test_garbage_raises_one_line_fio_error(text: str, message: str) -> None:
    with pytest.raises(FioError) as info:
        parse(text)
    assert message in str(info.value)
    assert "\n" not in str(info.value)
    assert info.value.exit_code == 3


def test_fios_own_iops_samples_are_kept_per_direction() -> None:
    raw = raw_document("randrw_lat_percentiles_jsonplus.json")["jobs"][0]
    output = parse(fixture_text("randrw_lat_percentiles_jsonplus.json"))
    for name in ("read", "write"):
        stats = output.jobs[0].directions[name].iops_samples
        assert stats is not None
        assert (stats.min, stats.max, stats.mean, stats.stddev, stats.samples) == (
            raw[name]["iops_min"],
            raw[name]["iops_max"],
            raw[name]["iops_mean"],
            raw[name]["iops_stddev"],
            raw[name]["iops_samples"],
        )
    fio2 = parse(fixture_text("fio2_randread_4jobs.json"))
    assert all(d.iops_samples is None for j in fio2.jobs for d in j.directions.values())


def test_json_plus_bins_are_checked_at_once_not_bin_by_bin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """fio 3's json+ bins (hundreds a job, every cell of a PTS round) are checked in one
    pass; only percentiles are checked entry by entry. Checked bin by bin they were a
    third of the parsing of each committed cell."""
    from volbench.fio import latency

    checked: list[str] = []
    within = latency._within

    def counted(stats: object, key: str, value: float, low: float, high: float, what: str) -> None:
        checked.append(what)
        within(stats, key, value, low, high, what)  # type: ignore[arg-type]

    monkeypatch.setattr(latency, "_within", counted)
    output = parse(fixture_text("numjobs4_jsonplus.json"))
    bins = [d.latency.bins for j in output.jobs for d in j.directions.values() if d.latency]
    assert bins and all(bins)
    assert "percentile" in checked and "bin" not in checked
