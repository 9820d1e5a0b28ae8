"""A recipe's job files: the user's target in place of the page's, nothing else changed
but what a rehearsal's scale and the user's settings say, each written in the file."""

from __future__ import annotations

from fractions import Fraction

import pytest

from volbench.errors import UsageError
from volbench.fio.job_text import read_job
from volbench.recipes import jobs, loader
from volbench.recipes.model import Option, Section, Step

RECIPES = loader.built_in()


def test_the_target_replaces_the_pages_path_and_nothing_else_does() -> None:
    recipe = loader.find(RECIPES, "gcp-pd-raw")
    rendering = jobs.render(recipe, jobs.bind_targets(recipe, ["/dev/nvme9n1"]))
    for job in rendering.steps:
        assert job.text is not None
        assert "/dev/sdb" not in "\n".join(
            line for line in job.text.splitlines() if not line.startswith(";")
        )
        for section in read_job(job.text):
            assert section.get("filename") == "/dev/nvme9n1"


def test_a_target_path_is_checked() -> None:
    recipe = loader.find(RECIPES, "tencent-cbs")
    with pytest.raises(UsageError, match="not an absolute path"):
        jobs.bind_targets(recipe, ["vdb"])
    with pytest.raises(UsageError, match="starts a comment"):
        jobs.bind_targets(recipe, ["/dev/vdb;x"])
    with pytest.raises(UsageError, match="newline"):
        jobs.bind_targets(recipe, ["/dev/vdb\n[evil]"])
    with pytest.raises(UsageError, match="needs device"):
        jobs.bind_targets(recipe, [])
    with pytest.raises(UsageError, match="given twice"):
        jobs.bind_targets(recipe, ["/dev/vdb", "device=/dev/vdc"])
    assert jobs.bind_targets(recipe, ["device=/dev/vdc"]) == {"device": "/dev/vdc"}


def test_a_recipe_with_several_targets_needs_them_named() -> None:
    recipe = loader.find(RECIPES, "azure-benchmark-a-disk")
    with pytest.raises(UsageError, match="give each as --target NAME=PATH"):
        jobs.bind_targets(recipe, ["/mnt/x"])
    with pytest.raises(UsageError, match="needs readcache"):
        jobs.bind_targets(recipe, ["nocache=/mnt/x"])
    bound = jobs.bind_targets(recipe, ["nocache=/mnt/x", "readcache=/mnt/y"])
    (job,) = jobs.render(recipe, bound, only=["max-read-write-iops"]).steps
    assert job.text is not None
    directories = {s.name: s.get("directory") for s in read_job(job.text)}
    assert directories == {"global": None, "reader1": "/mnt/y", "writer1": "/mnt/x"}
    assert job.writes


def test_a_step_of_an_optional_target_not_given_is_left_out_saying_so() -> None:
    recipe = loader.find(RECIPES, "aws-ebs-ssd")
    rendering = jobs.render(recipe, jobs.bind_targets(recipe, ["/mnt/ebs"]))
    assert [j.step.id for j in rendering.steps] == ["random-write-16k", "random-read-16k"]
    assert "initialize left out" in rendering.left_out[0]
    assert "--target volume=PATH" in rendering.left_out[0]


def test_a_job_file_fio_would_read_otherwise_is_refused() -> None:
    """Past the loader (a value holding a line break), the read-back refuses the text."""
    recipe = loader.find(RECIPES, "tencent-cbs")
    step = recipe.steps[0]
    evil = Section("global", (Option("iodepth", "1\n[evil]\nexec_prerun=touch /tmp/x"),))
    hostile = Step(
        step.id, step.kind, step.quote, step.source, step.reports, (evil, *step.sections[1:])
    )
    with pytest.raises(UsageError, match="does not read back"):
        jobs.render_step(recipe, hostile, {"device": "/dev/vdz"}, Fraction(1), {})


# --- scaling: a rehearsal shortens runtimes and sizes, keeps everything else


def options_of(text: str) -> dict[str, dict[str, str | None]]:
    return {s.name: dict(s.options) for s in read_job(text)}


def test_scaling_shortens_runtimes_and_sizes_only_and_says_so() -> None:
    recipe = loader.find(RECIPES, "gcp-pd-raw")
    paths = {"device": "/dev/vdz"}
    (page,) = jobs.render(recipe, paths, only=["write-bandwidth"]).steps
    rendering = jobs.render(recipe, paths, Fraction(1, 100), only=["write-bandwidth"])
    (scaled,) = rendering.steps
    assert rendering.scaled and page.text and scaled.text
    before = options_of(page.text)["write_bandwidth_test"]
    after = options_of(scaled.text)["write_bandwidth_test"]
    assert after["filesize"] == "25600m"  # 2500G / 100
    assert after["offset_increment"] == "1024m"  # 100G / 100
    assert after["runtime"] == "1000ms"  # 1m / 100 = 600 ms, at least 1 s
    assert after["ramp_time"] == "1000ms"
    changed = {"filesize", "offset_increment", "runtime", "ramp_time"}
    assert {k: v for k, v in after.items() if k not in changed} == {
        k: v for k, v in before.items() if k not in changed
    }
    assert list(after) == list(before)
    assert "rehearsal, not the page's recipe: sizes and runtimes x 0.01" in scaled.text
    assert "; filesize=25600m: scaled from 2500G" in scaled.text


def test_scaled_sizes_stay_whole_blocks_and_scaled_times_whole_milliseconds() -> None:
    recipe = loader.find(RECIPES, "azure-benchmark-a-disk")
    paths = {"nocache": "/mnt/x", "readcache": "/mnt/y"}
    (job,) = jobs.render(recipe, paths, Fraction(1, 7), only=["max-write-iops"]).steps
    assert job.text is not None
    global_options = options_of(job.text)["global"]
    assert global_options["size"] == "4388m"  # 30 GiB / 7 = 4388.57 MiB, down to whole MiB
    assert global_options["runtime"] == "4285ms"  # 30 s / 7
    recipe = loader.find(RECIPES, "aws-ebs-hdd")
    (mix,) = jobs.render(
        recipe, {"device": "/dev/x"}, Fraction(1, 1000), only=["sequential-mix"]
    ).steps
    assert mix.text is not None
    assert options_of(mix.text)["sequential-read"]["offset"] == "102m"  # 100g / 1000


def test_a_page_value_is_never_scaled_up_nor_below_its_floor() -> None:
    from volbench.recipes.options import scaled_size, scaled_time

    assert scaled_size("4k", Fraction(1, 100), 1 << 20) == "4096"
    assert scaled_time("500ms", Fraction(1, 100)) == "500ms"
    assert scaled_time("1m", Fraction(1)) == "60000ms"


def test_the_scale_is_a_fraction_in_range() -> None:
    assert jobs.parse_scale("0.01") == Fraction(1, 100)
    assert jobs.parse_scale("1/8") == Fraction(1, 8)
    for bad in ("0", "1.5", "-1", "x", "nan", "1e-9"):
        with pytest.raises(UsageError):
            jobs.parse_scale(bad)


def test_only_an_option_the_page_says_to_change_can_be_set() -> None:
    recipe = loader.find(RECIPES, "gcp-pd-raw")
    settings = jobs.check_settings(recipe, ["filesize=500G"])
    (job,) = jobs.render(recipe, {"device": "/dev/vdz"}, 1, settings, ["read-iops"]).steps
    assert job.text is not None
    assert options_of(job.text)["read_iops_test"]["filesize"] == "500G"
    assert "filesize=500G: set by the user (the page's 2500G)" in job.text
    with pytest.raises(UsageError, match="asks to change only: filesize"):
        jobs.check_settings(recipe, ["iodepth=1"])
    with pytest.raises(UsageError, match="must be a size"):
        jobs.check_settings(recipe, ["filesize=all"])
    with pytest.raises(UsageError, match="asks to change only: none"):
        jobs.check_settings(loader.find(RECIPES, "tencent-cbs"), ["size=1G"])


def test_a_job_that_would_start_past_its_filesize_is_refused_before_fio() -> None:
    """gcp-pd-raw on a 128 MiB disk rehearsed at 2e-05: ``filesize`` 1 MiB, but the
    16 bandwidth jobs' page offsets (100G apart) scaled to 2 MiB apart put the last at
    30 MiB, where fio stops the run ("you need to specify valid offset=", checked by
    hand with fio 3.33). The page's own values and the same steps at the page's disk
    size pass."""
    recipe = loader.find(RECIPES, "gcp-pd-raw")
    targets = jobs.bind_targets(recipe, ["/dev/loop9"])
    small = jobs.check_settings(recipe, ["filesize=128M"])
    with pytest.raises(UsageError) as refused:
        jobs.render(recipe, targets, Fraction(1, 50_000), small)
    assert str(refused.value) == (
        "step write-bandwidth: its last job would start 30 MiB in, past filesize=1m, and fio"
        " refuses that (offset=0, offset_increment=2m, numjobs=16): give a larger --set"
        " filesize, or other steps with --step"
    )
    assert jobs.render(recipe, targets, Fraction(1, 50_000), {}).steps
    assert jobs.render(recipe, targets, 1, small, only=["write-iops"]).steps
