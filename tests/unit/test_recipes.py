"""The clouds' recipes: what each page says is what fio gets.

For every step of every built-in recipe, the command lines and job files copied from
the page (``source``) are read here the way fio reads them, independently of the
recipe's own ``fio:`` structure (:func:`page_job`: options before ``--name`` are every
job's defaults, ``--name`` starts a job, an option given before a job file is a
default of its jobs, ``--eta-newline`` and ``--readonly`` are command-line only), and
compared option by option, in order, with the job file volbench writes, read back
with :func:`volbench.fio.job_text.read_job`.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

from volbench.errors import UsageError
from volbench.fio.job_text import read_job
from volbench.recipes import jobs, loader
from volbench.recipes.model import Recipe, Step

RECIPES = loader.built_in()

FLAGS = frozenset({"time_based", "group_reporting", "norandommap", "thread", "refill_buffers"})
"""fio options that take no value on the command line (``--time_based``)."""

CLI_ONLY = frozenset({"eta-newline", "readonly"})
"""fio command-line options that are no job options."""

CLOUDS = {"AWS", "Azure", "Google Cloud", "Alibaba Cloud", "Tencent Cloud", "OCI"}


def target_paths(recipe: Recipe) -> dict[str, str]:
    """A test path for each target, none of them the page's."""
    return {t.name: f"/srv/volbench-test/{t.name}" for t in recipe.targets}


def substituted(recipe: Recipe, text: str, paths: dict[str, str]) -> str:
    """``text`` with each target's page values replaced by the test path (longest first)."""
    values = sorted(
        ((v, paths[t.name]) for t in recipe.targets for v in t.page_values),
        key=lambda pair: -len(pair[0]),
    )
    for value, path in values:
        text = text.replace(value, path)
    return text


def ini_sections(text: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """A job file's sections as fio reads them (no comments, no includes in the pages)."""
    sections: list[tuple[str, list[tuple[str, str | None]]]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("["):
            sections.append((line.strip("[]").strip(), []))
            continue
        key, sep, value = line.partition("=")
        sections[-1][1].append((key.strip(), value.strip() if sep else None))
    return sections


def page_job(
    recipe: Recipe, step: Step, paths: dict[str, str]
) -> tuple[list[tuple[str, list[tuple[str, str | None]]]], list[str]]:
    """The sections and command-line-only options fio would run for the page's text."""
    files = {b.file: b.text for b in step.source if b.file}
    defaults: list[tuple[str, str | None]] = []
    jobs_: list[tuple[str, list[tuple[str, str | None]]]] = []
    args: list[str] = []
    for block in step.source:
        if block.file:
            continue
        text = substituted(recipe, block.text, paths).replace("\\\n", " ")
        tokens = shlex.split(text, comments=True)
        assert tokens[0] in ("sudo", "fio"), block.text
        tokens = tokens[tokens.index("fio") + 1 :]
        current = defaults
        index = 0
        while index < len(tokens):
            token = tokens[index]
            index += 1
            if not token.startswith("-"):  # a job file
                for name, options in ini_sections(substituted(recipe, files[token], paths)):
                    if name == "global":
                        current.extend(options)
                    else:
                        jobs_.append((name, options))
                continue
            key, sep, value = token.lstrip("-").partition("=")
            option_value: str | None = value
            if not sep:
                if key in FLAGS or key in CLI_ONLY:
                    option_value = None
                else:
                    option_value = tokens[index]
                    index += 1
            if key in CLI_ONLY:
                args.append(f"--{key}" if option_value is None else f"--{key}={option_value}")
            elif key == "name":
                assert option_value is not None
                jobs_.append((option_value, []))
                current = jobs_[-1][1]
            else:
                current.append((key, option_value))
    sections = ([("global", defaults)] if defaults else []) + jobs_
    return sections, args


STEPS = [(r, s) for r in RECIPES for s in r.steps if s.runs_fio]


@pytest.mark.parametrize(("recipe", "step"), STEPS, ids=[f"{r.id}:{s.id}" for r, s in STEPS])
def test_the_job_file_is_the_pages_command_option_by_option(recipe: Recipe, step: Step) -> None:
    paths = target_paths(recipe)
    rendering = jobs.render(recipe, paths, only=[step.id])
    (job,) = rendering.steps
    assert job.text is not None
    written = [(s.name, list(s.options)) for s in read_job(job.text)]
    page_sections, page_args = page_job(recipe, step, paths)
    assert written == page_sections
    assert list(job.fio_args) == page_args
    assert job.changes == ()


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
