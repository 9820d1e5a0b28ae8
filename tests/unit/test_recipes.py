"""The clouds' recipes as data: every cloud asked for, each from its own dated page, with
the preparations and expected figures the pages give."""

from __future__ import annotations

from pathlib import Path

import pytest

from volbench.errors import UsageError
from volbench.recipes import loader

RECIPES = loader.built_in()

CLOUDS = {"AWS", "Azure", "Google Cloud", "Alibaba Cloud", "Tencent Cloud", "OCI"}


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
