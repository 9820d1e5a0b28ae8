"""``volbench run recipe NAME --target DEVICE`` with the real fio on a loop device: a
rehearsal of Google Cloud's raw-disk recipe (its fill step first) stored as a ``job``
run labelled with the recipe and its scale, each step's job file the one ``--dry-run``
prints for the same target, each test holding the page's options.

The device is a loop device over an image file made by the ``loop_device`` fixture
(which detaches it, and only it).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable

import pytest
from cli_harness import Volbench

from volbench.fio.job_text import read_job

pytestmark = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")

STEPS = ("fill-disk", "write-iops", "read-iops", "read-latency")
"""Steps whose offsets fit a 64 MiB device (the bandwidth steps' offset_increment does
not: it is scaled from the page's, not from --set filesize)."""


def test_a_recipe_rehearsal_runs_its_dry_run_job_files(
    volbench: Volbench, loop_device: Callable[..., str]
) -> None:
    device = loop_device(64)
    args = [
        "run",
        "recipe",
        "gcp-pd-raw",
        "--target",
        device,
        "--scale",
        "0.01",
        "--set",
        "filesize=64M",
    ]
    for step in STEPS:
        args += ["--step", step]
    dry = volbench.document(*args, "--dry-run")
    ran = volbench(*args, "--runs-dir", str(volbench.runs_dir), timeout=90)
    assert ran.returncode == 0, ran.stderr
    assert "a rehearsal, scaled to 0.01" in ran.stdout
    assert "read-iops: the page expects 100,000 IOPS (read IOPS); measured" in ran.stdout
    run = volbench.show()
    assert run["labels"]["recipe"] == "gcp-pd-raw"
    assert run["labels"]["recipe_scale"] == "0.01"
    section = run["settings"]["recipe"]
    assert section["page"]["url"] == dry["page"]["url"] and section["rehearsal"] is True
    assert [s["id"] for s in section["steps"]] == list(STEPS)
    assert [s["job_file"] for s in section["steps"]] == [s["job_file"] for s in dry["steps"]]
    assert section["steps"][0]["kind"] == "prepare"
    planned = {t["name"]: t for t in run["settings"]["planned"]}
    for step in section["steps"]:
        (name,) = step["tests"]
        (page,) = [s for s in read_job(step["job_file"]) if s.name != "global"]
        (kept,) = [s for s in read_job(planned[name]["job_text"]) if s.name != "global"]
        given = dict(kept.options)
        for key, value in page.options:
            assert given.get(key) == value, (step["id"], key, value)
    stored = {r["test"] for r in run["results"] if r["error"] == 0}
    assert stored == set(planned) and len(planned) == len(STEPS), json.dumps(run["results"])[:500]
