"""Every recipe ``volbench.recipes.loader`` lists, run for real: ``volbench run recipe
NAME --target ... --scale 0.00001`` with the real fio, every step the recipe has (its
preparation included), each target a part made here:

* a device target: a loop device over a sparse image file (``loop_device``), sized so
  every job's scaled ``offset`` + ``offset_increment`` x (``numjobs`` - 1) +
  ``size``/``filesize`` fits;
* a folder target: a folder on an ext4 file system of its own (a loop device made here,
  mounted under ``tmp_path``, unmounted before the device is detached, even when the
  test fails), large enough for every file its jobs lay out;
* a file target: a file volbench makes on such a file system.

An option the page tells the reader to change (``adjust``: gcp-pd-raw's disk size
``filesize``) is given with ``--set``, at the page's own value.

Checked for each recipe as on every place a recipe runs (``tests/recipe_runs.py``,
:func:`recipe_runs.check_run`): each step's job file as ``--dry-run`` prints it and as
the page's command says, what fio ran, its tests stored with fio's results.

About 60 s for the eight recipes of 2026-11-29 on two xdist workers of a 2-core machine
(about 90 s of runs one after another): 44 fio steps of at least 1 s each (the scaled
runtime's floor, ``recipes/options.py``), gcp's with a 1 s ramp besides.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_harness import Volbench

from recipe_runs import SCALE, needed_bytes, rehearse, settings
from volbench.recipes import loader
from volbench.recipes.model import Recipe

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="loop devices need root"),
    pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed"),
]

RECIPES = loader.load()
MiB = 1 << 20
SPARE_MIB = 32
"""Room above what the jobs need: ext4's own blocks, a rounding."""


@pytest.fixture
def file_system(
    loop_device: Callable[..., str], system_tool: Callable[[str], str], tmp_path: Path
) -> Iterator[Callable[[int], Path]]:
    """``make(size_mib)``: the folder an ext4 file system of its own is mounted on (a loop
    device over an image in ``tmp_path``), unmounted after the test, before
    ``loop_device`` detaches the device, even when the test fails."""
    mkfs, mount, umount = system_tool("mkfs.ext4"), system_tool("mount"), system_tool("umount")
    mounted: list[Path] = []

    def make(size_mib: int) -> Path:
        def ext4(image: Path) -> None:
            subprocess.run([mkfs, "-q", "-F", str(image)], check=True, capture_output=True)

        device = loop_device(size_mib, setup=ext4)
        where = tmp_path / f"mnt-{len(mounted)}"
        where.mkdir()
        subprocess.run([mount, "-t", "ext4", device, str(where)], check=True, timeout=60)
        mounted.append(where)
        return where

    try:
        yield make
    finally:
        for where in reversed(mounted):
            subprocess.run([umount, str(where)], check=False, capture_output=True, timeout=60)


def parts(
    recipe: Recipe, loop_device: Callable[..., str], file_system: Callable[[int], Path]
) -> dict[str, str]:
    """A part of this machine for every target of ``recipe`` (its optional ones too, so
    every step runs), sized by :func:`needed_bytes`."""
    need = needed_bytes(recipe)
    made: dict[str, str] = {}
    for target in recipe.targets:
        size_mib = math.ceil(need[target.name] / MiB) + SPARE_MIB
        if target.kind == "device":
            made[target.name] = loop_device(size_mib)
        elif target.kind == "directory":
            made[target.name] = str(file_system(size_mib))
        else:  # a file: volbench makes it, as large as its jobs ask
            made[target.name] = str(file_system(size_mib) / target.name)
    return made


@pytest.mark.parametrize("recipe", RECIPES, ids=[r.id for r in RECIPES])
def test_every_recipe_runs_each_step_as_its_page_says(
    recipe: Recipe,
    volbench: Volbench,
    loop_device: Callable[..., str],
    file_system: Callable[[int], Path],
    request: pytest.FixtureRequest,
) -> None:
    made = parts(recipe, loop_device, file_system)
    scale = f"{float(SCALE):g}"
    args = ["run", "recipe", recipe.id, "--scale", scale]
    args += [f"--target={name}={path}" for name, path in made.items()]
    args += [f"--set={item}" for item in settings(recipe)]
    rehearse(volbench, recipe, made, args, 120, request, "")
