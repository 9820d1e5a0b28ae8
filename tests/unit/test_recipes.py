"""The clouds' recipes: what each page says is what fio gets.

For every step of every built-in recipe, the command lines and job files copied from
the page (``source``) are read the way fio reads them, independently of the recipe's
own ``fio:`` structure (:func:`recipe_pages.page_job`), and compared option by option,
in order, with the job file volbench writes, read back with
:func:`volbench.fio.job_text.read_job` (:func:`recipe_pages.differences`, the same
comparison the integration test makes of the job files a run writes).
"""

from __future__ import annotations

import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

from recipe_pages import differences, fio_reads, page_job
from volbench.errors import UsageError
from volbench.recipes import jobs, loader
from volbench.recipes.model import Recipe, Step

RECIPES = loader.built_in()

CLOUDS = {"AWS", "Azure", "Google Cloud", "Alibaba Cloud", "Tencent Cloud", "OCI"}


def target_paths(recipe: Recipe) -> dict[str, str]:
    """A test path for each target, none of them the page's."""
    return {t.name: f"/srv/volbench-test/{t.name}" for t in recipe.targets}


STEPS = [(r, s) for r in RECIPES for s in r.steps if s.runs_fio]


@pytest.mark.parametrize(("recipe", "step"), STEPS, ids=[f"{r.id}:{s.id}" for r, s in STEPS])
def test_the_job_file_is_the_pages_command_option_by_option(recipe: Recipe, step: Step) -> None:
    paths = target_paths(recipe)
    rendering = jobs.render(recipe, paths, only=[step.id])
    (job,) = rendering.steps
    assert job.text is not None
    page_sections, page_args = page_job(recipe, step, paths)
    assert differences(fio_reads(job.text), page_sections) == []
    assert list(job.fio_args) == page_args
    assert job.changes == ()


@pytest.mark.parametrize("scale", [Fraction(1, 100), Fraction(1, 100_000)])
def test_a_rehearsals_job_files_are_the_pages_scaled_by_the_stated_rule(scale: Fraction) -> None:
    for recipe, step in STEPS:
        paths = target_paths(recipe)
        (job,) = jobs.render(recipe, paths, scale, only=[step.id]).steps
        assert job.text is not None
        page_sections, _ = page_job(recipe, step, paths)
        assert differences(fio_reads(job.text), page_sections, scale) == [], (recipe.id, step.id)


def test_the_comparison_names_each_value_that_is_not_the_pages() -> None:
    page = [("global", [("bs", "4k"), ("runtime", "60"), ("size", "10G")]), ("a", [])]
    scale = Fraction(1, 100)
    right = [("global", [("bs", "4k"), ("runtime", "1000ms"), ("size", "102m")]), ("a", [])]
    assert differences(right, page, scale) == []
    assert (
        differences(
            [("global", [("bs", "4k"), ("runtime", "60"), ("size", "10G")]), ("a", [])], page
        )
        == []
    )
    wrong = [
        ("global", [("bs", "8k"), ("runtime", "600ms"), ("size", "1g")]),
        ("a", []),
    ]
    assert differences(wrong, page, scale) == [
        "[global] bs=8k where the page has bs=4k",
        "[global] runtime=600ms: not the page's 60 x 1/100 (at least 1 s)",
        "[global] size=1g: not the page's 10G x 1/100 in whole 1048576 B",
    ]
    assert differences([("b", [])], [("a", [])]) == ["sections ['b'] where the page has ['a']"]


def test_every_cloud_asked_for_has_a_recipe_from_its_own_page() -> None:
    assert {r.cloud for r in RECIPES} >= CLOUDS
    for recipe in RECIPES:
        for page in (recipe.page, *recipe.sources):
            assert page.url.startswith("https://")
            assert page.read == "2026-11-29"
            assert page.title and page.text_from and page.page_date
        assert all(s.source for s in recipe.steps if s.runs_fio)


def test_the_preparations_the_pages_ask_for_are_steps() -> None:
    """GCP fills the disk, AWS initializes a restored volume, Azure warms its cache."""
    prepare = {r.id: [s.id for s in r.steps if s.kind == "prepare"] for r in RECIPES}
    assert prepare["gcp-pd-raw"] == ["fill-disk"]
    assert prepare["aws-ebs-ssd"] == prepare["aws-ebs-hdd"] == ["initialize"]
    assert prepare["azure-benchmark-a-disk"] == ["warm-up-cache"]
    warm = loader.find(RECIPES, "azure-benchmark-a-disk").step("warm-up-cache")
    assert not warm.runs_fio and "warm up the cache" in warm.quote


def test_the_figures_the_pages_expect_are_kept() -> None:
    azure = loader.find(RECIPES, "azure-benchmark-a-disk")
    assert [e.value for e in azure.step("max-write-iops").expects] == [12800]
    assert azure.step("max-read-iops").expects[0].at_least
    gcp = loader.find(RECIPES, "gcp-pd-raw")
    assert gcp.step("read-iops").expects[0].value == 100000


def test_a_users_recipe_joins_the_built_in_ones_under_an_id_of_its_own(tmp_path: Path) -> None:
    mine = tmp_path / "mine.yaml"
    text = (Path(loader.__file__).parent / "data" / "tencent-cbs.yaml").read_text()
    mine.write_text(text.replace("id: tencent-cbs", "id: my-copy"), encoding="utf-8")
    listed = loader.load([mine])
    assert [r.id for r in listed] == [*(r.id for r in RECIPES), "my-copy"]
    assert listed[-1].origin == str(mine)


def test_a_users_recipe_cannot_take_a_built_in_id(tmp_path: Path) -> None:
    path = tmp_path / "recipe.yaml"
    built_in = (Path(loader.__file__).parent / "data" / "gcp-pd-raw.yaml").read_text()
    path.write_text(built_in, encoding="utf-8")
    with pytest.raises(UsageError, match="'gcp-pd-raw' is taken"):
        loader.load([path])


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_fio_parses_every_job_file_of_a_rehearsal(tmp_path: Path) -> None:
    for recipe in RECIPES:
        paths = {t.name: str(tmp_path / t.name) for t in recipe.targets}
        for job in jobs.render(recipe, paths, Fraction(1, 1000)).steps:
            if job.text is None:
                continue
            job_file = tmp_path / "job.fio"
            job_file.write_text(job.text)
            done = subprocess.run(
                ["fio", "--parse-only", *job.fio_args, str(job_file)],
                capture_output=True,
                text=True,
                check=False,
            )
            assert done.returncode == 0 and not done.stderr.strip(), (recipe.id, done.stderr)
