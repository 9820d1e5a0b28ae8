"""A PTS run's options are stored as they always were: one flat ``pts`` object, the
tests' own options next to the common ones, in the same key order. Each test reads
its values back as its own record; a stored value of the wrong type is one line
naming its key."""

from __future__ import annotations

import json

import pytest

from volbench.plans.pts.demand import Grid
from volbench.plans.pts.hir import HirOptions
from volbench.plans.pts.iops import Matrix
from volbench.plans.pts.options import PtsOptions, PtsSetup, build
from volbench.plans.pts.wsat import WsatOptions
from volbench.plans.pts.xsr import XsrOptions
from volbench.records import RecordError, json_object, structure

STORED = """{"pts": {"tests": ["iops", "throughput-1024k", "throughput-128k", "latency", "wsat",
"hir", "xsr", "ecw", "dirth"], "profile": "enterprise", "threads": 1, "iodepth": 4,
"active_range_pct": 100, "cell_seconds": 1.0, "max_rounds": 5, "wsat_max_rounds": 3,
"block_sizes": [65536, 4096], "mixes": [100, 0], "toio_grid": [2, 1], "hir_cycles": 2,
"xsr_cells": 3, "purge": true, "ioengine": null, "logical_block_bytes": 512},
"active_bytes": 67108864, "purge_method": "none (replayed fio outputs)",
"preconditioning": "WIPC: 2 x active range, 128 KiB sequential writes (iops,
throughput-1024k, throughput-128k, latency, hir, ecw, dirth); none (wsat, xsr)",
"data_pattern": "random (refill_buffers)", "write_cache": "unknown",
"seq_write_bytes_per_s": 3035617039.0}""".replace("\n", " ")
"""The ``settings.options`` of the recorded PTS run (tests/fixtures/fio/README.md
"pts/") as volbench stored it before the tests declared their own options."""


def test_a_setup_stored_before_reads_as_each_tests_record_and_is_written_alike() -> None:
    stored = json.loads(STORED)
    setup = structure(stored, PtsSetup, "settings.pts")
    options = setup.options
    assert options.of(Matrix) == Matrix((65536, 4096), (100, 0))
    assert options.of(WsatOptions) == WsatOptions(3)
    assert options.of(HirOptions) == HirOptions(2)
    assert options.of(XsrOptions) == XsrOptions(3)
    assert options.of(Grid) == Grid((2, 1))
    assert (options.threads, options.iodepth, options.cell_seconds) == (1, 4, 1.0)
    assert options == build(
        tuple(stored["pts"]["tests"]),
        "enterprise",
        1,
        4,
        cell_seconds=1.0,
        max_rounds=5,
        wsat_max_rounds=3,
        block_sizes=(65536, 4096),
        mixes=(100, 0),
        toio_grid=(2, 1),
        hir_cycles=2,
        xsr_cells=3,
    )
    written = json_object(setup)
    assert json.dumps(written) == json.dumps(stored)  # same keys, same order, same values


def test_an_older_run_without_a_tests_option_reads_its_default() -> None:
    stored = json.loads(STORED)
    del stored["pts"]["xsr_cells"], stored["pts"]["toio_grid"]
    options = structure(stored, PtsSetup, "settings.pts").options
    assert options.of(XsrOptions) == XsrOptions() and options.of(Grid) == Grid()
    assert options.own == (HirOptions(2), Matrix((65536, 4096), (100, 0)), WsatOptions(3))


def test_equal_options_are_one_value_whatever_defaults_were_given() -> None:
    plain = PtsOptions(tests=("hir",))
    assert plain == PtsOptions(tests=("hir",), own=(HirOptions(), Grid()))
    assert hash(plain) == hash(build(("hir",), "enterprise", hir_cycles=360))
    assert plain.of(HirOptions).cycles == 360


@pytest.mark.parametrize(
    ("key", "value", "where"),
    [
        ("hir_cycles", "2", "$.pts.hir_cycles"),
        ("block_sizes", [4096, "8k"], "$.pts.block_sizes[1]"),
        ("threads", True, "$.pts.threads"),
    ],
)
def test_a_stored_value_of_a_wrong_type_names_its_key(key: str, value: object, where: str) -> None:
    stored = json.loads(STORED)
    stored["pts"][key] = value
    with pytest.raises(RecordError) as error:
        structure(stored, PtsSetup, "settings.options")
    assert str(error.value).startswith("settings.options: ") and str(error.value).endswith(where)
