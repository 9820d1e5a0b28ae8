"""A run's settings, target and host as typed records (model.RunSettings,
TargetInfo, HostInfo): what the store keeps and bundles carry, read back with every
value checked; settings stored by the volbench before the typed record (the JSON
objects below, as it wrote them) read the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from test_bundle import _main

from volbench.analysis.qos import Rates, Tenant, make_plan
from volbench.analysis.qos_document import plan_document
from volbench.analysis.qos_results import VerifySetup
from volbench.model import (
    RW,
    HostProbe,
    NamedTarget,
    PlaceRecord,
    RunRecord,
    RunSettings,
    RunStatus,
    TargetInfo,
    Workload,
)
from volbench.plans import sweep
from volbench.plans.capture import CaptureSetup
from volbench.plans.placement.fleet_preparation import stored_fleet
from volbench.plans.pts.iops import Matrix
from volbench.plans.pts.options import PtsSetup, build
from volbench.records import RecordError
from volbench.store import schema
from volbench.store.repository import Store

TARGET = TargetInfo("/dev/vdb", "block", 10 << 30, logical_block_bytes=4096)


def _through_json(settings: RunSettings) -> RunSettings:
    return RunSettings.from_record(json.loads(json.dumps(settings.record())))


def _run(plan: str, record: dict[str, Any]) -> RunRecord:
    settings = RunSettings.from_record(record)
    return RunRecord(1, plan, RunStatus.COMPLETED, "", None, {}, {}, {}, settings)


def test_every_typed_field_survives_the_store_json() -> None:
    settings = RunSettings(
        ioengine="libaio",
        logs_dir="/tmp/runs/x",
        planned=(
            Workload("mix", RW.RANDRW, bssplit=((4096, 60), (65536, 40)), rwmixread_pct=70),
            Workload("seq", RW.READ, bs_bytes=1 << 20, iodepth=8, runtime_s=None),
        ),
        adaptive=True,
        non_compliant_reasons=("cells 1 s",),
        places=(PlaceRecord("a:/dev/vdb", "a", "/dev/vdb", TARGET), PlaceRecord("b:/x", "b", "/x")),
        hosts=(HostProbe("127.0.0.2:8765", True, 0.2, "h", "Linux", "x86-64", "fio-3.36"),),
        keep_going=True,
        solo=True,
        named=(NamedTarget(TARGET, writes=True),),
        options={"quick": {"runtime_s": 30.0}, "cache": "both"},
    )
    back = _through_json(settings)
    assert back == settings
    assert back.planned is not None and back.planned[0].rw is RW.RANDRW
    assert back.places[0].target == TARGET


def test_every_typed_field_is_stored_and_unknown_keys_stay_the_plans() -> None:
    assert RunSettings().record() == {
        "ioengine": None,
        "logs_dir": None,
        "planned": None,
        "adaptive": False,
        "non_compliant_reasons": [],
        "places": [],
        "hosts": [],
        "keep_going": False,
        "solo": False,
        "named": [],
    }
    record = RunSettings(ioengine="psync", options={"runtime_s": 5, "writes": True}).record()
    assert record["ioengine"] == "psync" and (record["runtime_s"], record["writes"]) == (5, True)
    assert RunSettings.from_record(record).options == {"runtime_s": 5, "writes": True}


@pytest.mark.parametrize(
    ("record", "where"),
    [
        ({"planned": [{"name": "a", "rw": "read\nfilename=/dev/sda"}]}, "$.planned[0].rw"),
        ({"planned": [{"name": "a", "rw": "read", "iodepth": "32"}]}, "$.planned[0].iodepth"),
        ({"planned": [{"name": "a", "rw": "read", "direct": 1}]}, "$.planned[0].direct"),
        ({"ioengine": 5}, "$.ioengine"),
        ({"adaptive": "no"}, "$.adaptive"),
        ({"places": [{"host": "a"}]}, "$.places[0].label"),
        ({"hosts": [{"address": "a", "answers": True}]}, "$.hosts[0].seconds"),
    ],
)
def test_a_value_that_does_not_fit_its_type_is_refused_naming_where(
    record: dict[str, Any], where: str
) -> None:
    with pytest.raises(RecordError) as caught:
        RunSettings.from_record(record, "run 3: its stored settings")
    assert str(caught.value).startswith("run 3: its stored settings: ")
    assert where in str(caught.value) and "\n" not in str(caught.value)


def test_quick_and_sweep_settings_as_the_volbench_before_wrote_them() -> None:
    planned = {
        "name": "randread-4k",
        "rw": "randread",
        "bs_bytes": 4096,
        "bssplit": [],
        "rwmixread_pct": None,
        "iodepth": 64,
        "numjobs": 1,
        "direct": True,
        "ioengine": None,
        "size_bytes": None,
        "offset_bytes": 0,
        "runtime_s": 30.0,
        "ramp_time_s": 2.0,
        "time_based": True,
        "random_distribution": None,
        "rate_iops": None,
        "rate_bytes_per_s": None,
        "refill_buffers": True,
        "cpus_allowed": None,
        "random_pct": None,
        "align_bytes": None,
        "thinktime_s": None,
        "thinktime_iotime_s": None,
        "write_bssplit": [],
        "write_random_pct": None,
        "read_iolog": None,
        "replay_speed_pct": None,
        "replay_no_stall": False,
    }
    quick = RunSettings.from_record(
        {
            "quick": {"runtime_s": 30.0, "profile": "default"},
            "ioengine": "libaio",
            "planned": [planned],
            "adaptive": False,
            "logs_dir": "/var/runs/20260101-x",
        }
    )
    assert quick.planned == (
        Workload("randread-4k", RW.RANDREAD, iodepth=64, ramp_time_s=2.0, runtime_s=30.0),
    )
    assert quick.ioengine == "libaio" and quick.logs_dir == "/var/runs/20260101-x"
    assert quick.options == {"quick": {"runtime_s": 30.0, "profile": "default"}}
    found = sweep.options_from(
        {
            "sweep": {
                "rw": "randread",
                "bs_bytes": 4096,
                "iodepths": [1, 4],
                "numjobs": [1],
                "latency_target_ns": 500000.0,
                "latency_percentile": "p99",
                "find_max": True,
            }
        }
    )
    assert found == sweep.SweepOptions(
        RW.RANDREAD,
        4096,
        (1, 4),
        (1,),
        latency_target_ns=500000.0,
        latency_percentile="p99",
        find_max=True,
    )


def test_pts_fleet_verify_and_capture_settings_as_the_volbench_before_wrote_them() -> None:
    options = build(("iops",), "enterprise", cell_seconds=2.0)
    pts_record = {
        "tests": ["iops"],
        "profile": "enterprise",
        "threads": 4,
        "iodepth": 32,
        "active_range_pct": 100,
        "cell_seconds": 2.0,
        "max_rounds": 25,
        "wsat_max_rounds": 1440,
        "block_sizes": list(options.of(Matrix).block_sizes),
        "mixes": list(options.of(Matrix).mixes),
        "toio_grid": [],
        "hir_cycles": 360,
        "xsr_cells": 60,
        "purge": True,
        "ioengine": None,
        "logical_block_bytes": 512,
    }
    pts = _run(
        "pts",
        {
            "pts": pts_record,
            "active_bytes": 1 << 30,
            "ioengine": "libaio",
            "purge_method": "blkdiscard",
            "preconditioning": "WIPC: 2 x active range",
            "data_pattern": "random (refill_buffers)",
            "write_cache": "write through",
            "non_compliant_reasons": ["cells 2 s, not 60 s"],
            "seq_write_bytes_per_s": 1.5e8,
            "places": [
                {
                    "label": "/a",
                    "host": None,
                    "path": "/a",
                    "target": {"path": "/a", "kind": "file", "capacity_bytes": 1 << 30},
                }
            ],
            "hosts": [],
            "keep_going": False,
            "solo": False,
        },
    )
    setup = pts.setup(PtsSetup)
    assert setup.options == options and setup.active_bytes == 1 << 30
    assert (setup.purge_method, setup.write_cache) == ("blkdiscard", "write through")
    assert setup.seq_write_bytes_per_s == 1.5e8
    assert pts.settings.non_compliant_reasons == ("cells 2 s, not 60 s",)
    assert stored_fleet(pts.settings).places[0].path == "/a"

    plan = make_plan(Rates(3888, 156), Rates(975, 48), [Tenant("a", 40), Tenant("b", 80)])
    verify = _run(
        "qos-verify",
        {
            "qos_plan": plan_document(plan),
            "verify": {
                "duration_s": 3.0,
                "rw": "randwrite",
                "bs_bytes": 8192,
                "iodepth": 16,
                "with_host": False,
                "tolerance_pct": 10.0,
                "ioengine": None,
                "destroy_data": None,
                "quiet": ["a"],
                "nominal_sizes": False,
            },
            "cgroup": {"version": 2, "root": "/sys/fs/cgroup"},
            "written": [{"tenant": "a", "file": "io.max", "line": "7:0 riops=1"}],
            "device": "7:0",
            "ioengine": "psync",
        },
    )
    found = VerifySetup.of(verify)
    assert found.plan == plan and found.verify.rw is RW.RANDWRITE
    assert found.verify.quiet == ("a",) and found.device == "7:0"

    capture = _run(
        "capture",
        {
            "capture": {
                "name": "db",
                "device": "/dev/vdb",
                "major": 253,
                "minor": 16,
                "method": "blktrace",
                "duration_s": 10.0,
                "interrupted": False,
            },
            "trace": {"duration_ns": 10**10, "before": 3, "lost": 0},
            "profile": {"ios": 5},
        },
    )
    taken = capture.setup(CaptureSetup)
    assert taken.capture.name == "db" and taken.trace.before == 3
    assert taken.profile == {"ios": 5}


@pytest.mark.parametrize(
    ("plan", "part", "changed", "where"),
    [
        ("quick", "settings", {"planned": [{"name": "a", "rw": 5}]}, "$.planned[0].rw"),
        ("pts", "settings", {"pts": {"tests": 5}, "active_bytes": 1 << 30}, "$.pts.tests"),
        (
            "capture",
            "settings",
            {"capture": {"name": "x"}, "trace": {}, "profile": {}},
            "$.capture.device",
        ),
        ("quick", "target", {"path": "/dev/vdb", "capacity_bytes": None}, "$.capacity_bytes"),
        ("quick", "host", {"hostname": ["a"]}, "$.hostname"),
    ],
)
def test_a_run_whose_stored_settings_were_changed_is_one_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfdbinary: pytest.CaptureFixture[bytes],
    plan: str,
    part: str,
    changed: dict[str, Any],
    where: str,
) -> None:
    db = str(tmp_path / "s.db")
    with Store.open(db) as store:
        run_id = store.create_run(plan, TARGET, {}, {}, RunSettings(ioengine="psync"))
        store.finish_run(run_id, RunStatus.COMPLETED)
    with sa.create_engine(f"sqlite:///{db}").begin() as conn:  # changed by something else
        conn.execute(sa.update(schema.runs).values({part: changed}))
    for command in (("show",), ("report", "-o", str(tmp_path / "r.html"))):
        code, out, err = _main(monkeypatch, capfdbinary, *command, str(run_id), "--db", db)
        assert (code, out) == (2, b""), err
        assert err.startswith(f"volbench: error: run {run_id}: its stored {part}: ")
        assert where in err and err.count("\n") == 1
