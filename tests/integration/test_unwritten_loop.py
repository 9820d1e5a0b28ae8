"""Blocks never written, on loop devices over sparse image files (the ``loop_device``
fixture makes and detaches them): a read test over a fresh sparse device is marked;
the same after ``--fill`` is not (the control), and the fill wrote every block of the
image; a write in one run clears the reads of a later run on the same volume, not on
another volume."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_harness import Volbench, fio_documents

from volbench.analysis.validity import Mark, MarkKind
from volbench.analysis.validity_unwritten import run_marks
from volbench.model import RunRecord
from volbench.store.repository import Store
from volbench.volume_writes import volume_history

MiB = 1 << 20
DEVICE_MIB = 32

Loop = Callable[..., str]

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="loop devices need root"),
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed"),
]

SHORT = ("--runtime", "500ms", "--ramp-time", "0", "--iodepth", "4")


def _sweep(volbench: Volbench, device: str, *args: str) -> dict[str, object]:
    """``run sweep`` (4 KiB random reads at queue depth 4 by default) on ``device``;
    its JSON document."""
    proc = volbench(
        "run",
        "sweep",
        "--target",
        device,
        *SHORT,
        "--runs-dir",
        str(volbench.runs_dir),
        *args,
        "--format",
        "json",
    )
    assert proc.returncode == 0, proc.stderr
    document: dict[str, object] = json.loads(proc.stdout)
    return document


def _marks(volbench: Volbench, run_id: object) -> dict[str, Mark | None]:
    """Each test of run ``run_id`` with its "blocks never written" mark."""
    with Store.open(str(volbench.db)) as store:
        run = store.get_run(str(run_id), raw=False)
        marks = run_marks(run, volume_history(store, run))
        return {test: marks.get((round_no, test)) for round_no, test in _tests(run)}


def _tests(run: RunRecord) -> list[tuple[int, str]]:
    return sorted({(r.round, r.test) for r in run.aggregate})


def _image(device: str) -> Path:
    backing = Path("/sys/class/block") / os.path.basename(device) / "loop" / "backing_file"
    return Path(backing.read_text().strip())


def _allocated(device: str) -> int:
    """Bytes of the device's image file the filesystem holds (a sparse file's holes none)."""
    return os.stat(_image(device)).st_blocks * 512


def test_a_fresh_sparse_device_s_reads_are_marked_and_fill_clears_them(
    volbench: Volbench, loop_device: Loop
) -> None:
    fresh, filled = loop_device(DEVICE_MIB), loop_device(DEVICE_MIB)
    assert _allocated(fresh) == _allocated(filled) == 0

    marked = _marks(volbench, _sweep(volbench, fresh)["id"])
    mark = marked["qd4-jobs1"]
    assert mark is not None and mark.kind is MarkKind.UNWRITTEN
    assert mark.figures["unwritten_share"] == 1.0
    assert mark.figures["read_end_bytes"] == DEVICE_MIB * MiB
    assert "no stored run wrote this volume before it" in mark.evidence[1]
    assert _allocated(fresh) == 0  # reads wrote nothing

    document = _sweep(volbench, filled, "--fill")
    assert _marks(volbench, document["id"]) == {"fill": None, "qd4-jobs1": None}
    # the fill is the run's first test, as fio ran it: every byte once, in order
    fill = fio_documents(document)[0]["jobs"][0]
    assert fill["jobname"] == "fill"
    assert fill["job options"]["rw"] == "write" and fill["job options"]["bs"] == "131072"
    assert fill["write"]["io_bytes"] == DEVICE_MIB * MiB
    assert _allocated(filled) == DEVICE_MIB * MiB  # every block of the image written
    # the sweep's own sheet has its points only; a note says what the fill wrote
    points = document["points"]
    assert isinstance(points, list) and [p["point"] for p in points] == ["QD4x1"]
    assert f"the fill (--fill) wrote {DEVICE_MIB} MiB at" in " ".join(document["notes"])  # type: ignore[arg-type]


def test_a_write_in_an_earlier_run_counts_on_its_volume_only(
    volbench: Volbench, loop_device: Loop
) -> None:
    written, other = loop_device(DEVICE_MIB), loop_device(DEVICE_MIB)
    writes = _sweep(volbench, written, "--rw", "write", "--bs", "1m", "--runtime", "1s")
    assert _allocated(written) == DEVICE_MIB * MiB
    reads = _sweep(volbench, written)
    elsewhere = _sweep(volbench, other)

    assert _marks(volbench, reads["id"]) == {"qd4-jobs1": None}
    mark = _marks(volbench, elsewhere["id"])["qd4-jobs1"]
    assert mark is not None and mark.figures["unwritten_share"] == 1.0
    assert mark.evidence[1].startswith("no stored run wrote this volume before it")
    assert f"by run {writes['id']}" not in " ".join(mark.evidence)


def test_the_fill_writes_every_place_of_a_run_on_several(
    volbench: Volbench, loop_device: Loop
) -> None:
    first, second = loop_device(DEVICE_MIB), loop_device(DEVICE_MIB)
    document = _sweep(volbench, first, "--target", second, "--fill")
    assert _allocated(first) == _allocated(second) == DEVICE_MIB * MiB
    fill = [j for j in fio_documents(document)[0]["jobs"] if j["jobname"] == "fill"]
    assert sorted(j["write"]["io_bytes"] for j in fill) == [DEVICE_MIB * MiB] * 2
    # several volumes at once: what each had written before is not known, none is judged
    assert _marks(volbench, document["id"]) == {"fill": None, "qd4-jobs1": None}
