"""What a recipe's run writes and records (:mod:`volbench.recipes.running`)."""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from recorded import FIO_FIXTURES

from volbench.cli.main import cli
from volbench.plans.imported.importing import import_file
from volbench.recipes import jobs, loader, running
from volbench.report.run_sheets import run_sheet
from volbench.store.repository import Store


def _rendering(name: str, targets: dict[str, str], scale: Fraction) -> jobs.Rendering:
    recipe = loader.find(loader.load(()), name)
    settings = {"filesize": "2000G"} if name == "gcp-pd-raw" else {}
    return jobs.render(recipe, targets, scale, settings)


def test_the_job_files_written_are_the_dry_runs_text_in_the_recipes_order(tmp_path: Path) -> None:
    rendering = _rendering("gcp-pd-raw", {"device": "/dev/shm/t.img"}, Fraction(1, 100))
    written = running.write_jobs(rendering, tmp_path)
    assert written.steps[0][0].step.id == "fill-disk"
    for number, (job, path) in enumerate(written.steps, 1):
        assert Path(path).name == f"{number:02d}-{job.step.id}.fio"
        assert Path(path).read_text() == job.text
    assert running.labels(rendering) == (("recipe", "gcp-pd-raw"), ("recipe_scale", "0.01"))


def test_a_step_the_page_gives_only_in_words_is_a_note_not_a_file(tmp_path: Path) -> None:
    targets = {"nocache": "/mnt/a", "readcache": "/mnt/b"}
    rendering = _rendering("azure-benchmark-a-disk", targets, Fraction(1))
    written = running.write_jobs(rendering, tmp_path)
    assert "warm" not in " ".join(job.step.id for job, _ in written.steps)
    assert any(n.startswith("step ") and "no fio command" in n for n in written.notes)
    assert len(list(tmp_path.iterdir())) == len(written.steps)
    assert running.labels(rendering)[1] == ("recipe_scale", "1")


def test_the_settings_name_the_page_and_each_steps_tests_and_compare_them(tmp_path: Path) -> None:
    rendering = _rendering("gcp-pd-raw", {"device": "/dev/shm/t.img"}, Fraction(1, 100))
    written = running.write_jobs(rendering, tmp_path)
    ids = [job.step.id for job, _ in written.steps]
    sources = [(f"test-{i}", i) for i in range(len(ids))]
    section: dict[str, Any] = running.settings(rendering, written, sources)
    assert section["page"]["url"].startswith("https://cloud.google.com/")
    assert section["scale"] == "0.01" and section["rehearsal"] is True
    read_iops = ids.index("read-iops")
    assert section["steps"][read_iops]["tests"] == [f"test-{read_iops}"]

    class Row:
        def __init__(
            self, test: str, direction: str, iops: float, place: str | None = None
        ) -> None:
            self.test, self.direction, self.iops, self.place = test, direction, iops, place

    rows: Any = [
        Row(f"test-{read_iops}", "read", 50_000.0),
        Row(f"test-{read_iops}", "write", 7.0),
        Row(f"test-{read_iops}", "read", 50_000.0, "lab://g:/dev/vda"),  # a place's share
    ]
    (found,) = running.compare(section, rows)
    assert (found.step, found.expected, found.measured, found.ratio) == (
        "read-iops",
        100_000.0,
        50_000.0,
        0.5,
    )
    lines = running.comparison_lines(section, rows)
    assert lines[1] == "the page's steps (their tests): " + ", ".join(
        f"{step} (test-{number})" for number, step in enumerate(ids)
    )
    assert any("not comparable" in line for line in lines)
    assert any(line.endswith("measured 50,000 (0.50 x)") for line in lines)
    assert running.compare(section, [])[0].measured is None


def test_the_directions_of_an_expected_figure() -> None:
    assert running.directions("read plus write IOPS") == ("read", "write")
    assert running.directions("write IOPS") == ("write",)
    assert running.directions("latency") == ()


def test_options_without_a_target_still_ask_for_one() -> None:
    result = CliRunner().invoke(cli, ["run", "recipe", "gcp-pd-raw", "--scale", "0.5"])
    assert "give --target PATH to run gcp-pd-raw" in str(result.exception)


def test_show_and_report_say_the_page_a_rehearsal_and_what_the_page_expects(
    tmp_path: Path,
) -> None:
    """A recipe's run shown later (``show``, ``report``: its sheet) says as the run did
    which page it followed, that it was a rehearsal and the page's figure beside the
    one measured, from the run's stored settings; a run of no recipe says none of it."""
    with Store.open(str(tmp_path / "store.db")) as store:
        run = store.get_run(import_file(store, FIO_FIXTURES / "randread_json.json", {}))
    (test,) = {r.test for r in run.results}
    rendering = _rendering("gcp-pd-raw", {"device": "/dev/shm/t.img"}, Fraction(1, 100))
    written = running.write_jobs(rendering, tmp_path)
    ids = [job.step.id for job, _ in written.steps]
    section = running.settings(rendering, written, [(test, ids.index("read-iops"))])
    recipe_run = dataclasses.replace(
        run, settings=dataclasses.replace(run.settings, options={running.RECIPE: section})
    )
    notes = run_sheet(recipe_run).notes
    measured = sum(r.iops for r in run.results if r.place is None and r.direction == "read")
    for line in running.comparison_lines(section, run.results):
        assert line in notes
    assert any(n.startswith("a rehearsal, scaled to 0.01: ") for n in notes)
    expects = f"read-iops: the page expects 100,000 IOPS (read IOPS); measured {measured:,.0f} ("
    assert any(n.startswith(expects) for n in notes)
    assert not any(n.startswith("recipe ") for n in run_sheet(run).notes)
