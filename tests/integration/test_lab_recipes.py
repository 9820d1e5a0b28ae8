"""Every cloud recipe rehearsed on lab guests, ``volbench run recipe NAME --hosts
lab://GUEST --scale 0.00001``, every step (its preparation included), each checked
against its page as on this machine's parts (:func:`recipe_runs.check_run`, the check of
``test_recipe_every.py``), on the layout the page measures:

* a recipe of one raw device: a guest of a raw disk, its disk ``/dev/vda`` (the
  default target of a guest);
* a recipe of folders or files: a guest whose disk has an ext4 filesystem volbench
  made (``lab up --filesystem ext4``), each target a folder or file of its own under
  ``/mnt/vda``; aws-ebs-ssd's volume to initialize (read only) is that guest's
  ``/dev/vda``, under its filesystem.

Two TCG guests (one a layout) for the module, 2 GiB each: gcp-pd-filesystem's 16 jobs
of 64 x 1 MiB and gcp-pd-raw's need 1 GiB of fio buffers. 44 fio steps of 1 s (the
scaled runtime's floor): 229 s alone on a 2-core machine, 33 s of it the two boots.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_harness import Volbench
from lab_guest import lab  # noqa: F401 (the lab modules' fixture)

from recipe_runs import SCALE, rehearse, settings
from volbench.cli.recipe import own_files
from volbench.lab import guest as guests
from volbench.lab.init_script import GUEST_ADDRESS
from volbench.lab.shell import run_in_guest
from volbench.recipes import loader
from volbench.recipes.model import Recipe

RECIPES = loader.load()
RAW = "rcp-raw"
FS = "rcp-fs"
MEMORY = "2g"


def _up(tool: Volbench, name: str, *options: str) -> guests.Guest:
    up = tool("lab", "up", name, "--size", "256m", "--memory", MEMORY, "--accel", "tcg", *options)
    assert up.returncode == 0, up.stderr
    return guests.load(name)


@pytest.fixture(scope="module")
def raw_guest(lab: tuple[Volbench, Path]) -> guests.Guest:  # noqa: F811
    tool, _ = lab
    guest = _up(tool, RAW)
    assert guest.filesystem is None and guest.memory_mib == 2048
    return guest


@pytest.fixture(scope="module")
def fs_guest(lab: tuple[Volbench, Path]) -> guests.Guest:  # noqa: F811
    """The guest of the folder and file recipes: ``lab up`` says what is on its disk,
    ``lab list`` shows it, and its disk is mounted in it."""
    tool, _ = lab
    up = tool(
        "lab", "up", FS, "--size", "256m", "--memory", MEMORY, "--accel", "tcg",
        "--filesystem", "ext4",
    )  # fmt: skip
    assert up.returncode == 0, up.stderr
    assert "ext4 on /mnt/vda" in up.stdout and "2,048 MiB memory" in up.stdout, up.stdout
    listed = tool.document("lab", "list")
    (row,) = [g for g in listed["guests"] if g["name"] == FS]
    assert row["filesystem"] == "ext4 on /mnt/vda"
    guest = guests.load(FS)
    assert (guest.filesystem, guest.mount) == ("ext4", "/mnt/vda")
    return guest


def placed(recipe: Recipe) -> tuple[str, dict[str, str]]:
    """The guest a recipe runs on and its targets there (name -> path): a raw device
    recipe on the raw guest's disk; the others in the filesystem guest, a folder or file
    of their own each (a device to read: that guest's disk)."""
    if not own_files(recipe) and recipe.targets[0].kind == "device":
        return RAW, {recipe.targets[0].name: "/dev/vda"}
    made = {}
    for target in recipe.targets:
        path = f"/mnt/vda/{recipe.id}/{target.name}"
        made[target.name] = "/dev/vda" if target.kind == "device" else path
    return FS, made


@pytest.mark.parametrize("recipe", RECIPES, ids=[r.id for r in RECIPES])
def test_every_recipe_runs_on_a_lab_guest_as_its_page_says(
    recipe: Recipe,
    lab: tuple[Volbench, Path],  # noqa: F811
    raw_guest: guests.Guest,
    fs_guest: guests.Guest,
    request: pytest.FixtureRequest,
) -> None:
    tool, _ = lab
    name, made = placed(recipe)
    scale = f"{float(SCALE):g}"
    args = ["run", "recipe", recipe.id, "--hosts", f"lab://{name}", "--scale", scale]
    if name == FS:  # a raw guest's recipe runs on its disk, the default target
        given = [f"{k}={v}" for k, v in made.items()] if own_files(recipe) else [*made.values()]
        args += [f"--target={item}" for item in given]
    args += [f"--set={item}" for item in settings(recipe)]
    run = rehearse(tool, recipe, made, args, 300, request, f"lab://{name}: ")
    assert {p["host"] for p in run["settings"]["places"]} == {f"lab://{name}"}
    for target in recipe.targets:  # the files fio made are the ones volbench checked:
        if target.kind == "directory":  # fio's server prefixes none with our address
            listed = run_in_guest(FS, f"ls {made[target.name]}").split()
            assert listed and not [n for n in listed if n.startswith(GUEST_ADDRESS)], listed
