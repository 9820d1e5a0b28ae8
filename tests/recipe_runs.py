"""A cloud recipe's run checked against its page: one check for every place a recipe
runs, this machine's parts (``tests/integration/test_recipe_every.py``) and lab guests
(``tests/integration/test_lab_recipes.py``).

:func:`check_run`: the run completed; each step that runs fio has its job file in the
run's ``recipe`` settings exactly as ``--dry-run`` prints it for the same targets, fio
reads it as the page's command (:func:`recipe_pages.differences`: every section and
option in the page's order, the sizes and times scaled by the documented rule), the job
volbench kept for its tests (what fio ran) holds each of its options, and its tests are
stored with fio's results, I/O and no fio error; a step the page gives no fio command for
is named in the run's notes; no false warning of empty per-second logs (a 16-job step of
1 s jobs spans over 2 s); the labels name the recipe and its scale, and the run says it
was a rehearsal.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import pytest
from cli_harness import Volbench

from measured import record
from recipe_pages import differences, fio_reads, ini_sections, page_job
from volbench.fio.options import fio_size
from volbench.recipes import jobs
from volbench.recipes.model import Recipe
from volbench.recipes.options import PATH_OPTIONS

SCALE = Fraction(1, 100_000)
"""Every runtime at its 1 s floor (the pages' are 30 s to 1,000 s), every size one MiB
but gcp-pd-raw's disk (2,500 GiB: 25 MiB) and its job spacing (500 GiB: 5 MiB)."""

OWN = PATH_OPTIONS | {"thread"}
"""What volbench writes its own way in what fio runs: the target (held open), and
``thread`` for every job (``volbench.fio.job.render``: each job stops when volbench dies)."""


def settings(recipe: Recipe) -> list[str]:
    """``--set`` for each option the page says to change, at the page's own value (the
    disk the page's jobs are spaced for: gcp-pd-raw's ``offset_increment`` x 15 must stay
    below its ``filesize``, or fio refuses the job's offset)."""
    found = []
    for item in recipe.adjust:
        values = [
            o.value
            for s in recipe.steps
            for sec in s.sections
            for o in sec.options
            if o.key == item.option and o.value is not None
        ]
        found.append(f"{item.option}={values[0]}")
    return found


def needed_bytes(recipe: Recipe) -> dict[str, int]:
    """The bytes each target needs at :data:`SCALE`: for a device or file, the farthest a
    job reaches (``offset`` + ``offset_increment`` x (``numjobs`` - 1) + its size); for
    a folder, every file its jobs lay out, over all steps (their files stay)."""
    paths = {t.name: f"/volbench-test/{t.name}" for t in recipe.targets}
    by_path = {path: name for name, path in paths.items()}
    rendering = jobs.render(recipe, paths, SCALE, jobs.check_settings(recipe, settings(recipe)))
    need = dict.fromkeys(paths, 0)
    for job in rendering.steps:
        if job.text is None:
            continue
        sections = fio_reads(job.text)
        defaults = {k: v for name, options in sections if name == "global" for k, v in options}
        for name, options in sections:
            if name == "global":
                continue
            merged = {**defaults, **dict(options)}
            numjobs = int(merged.get("numjobs") or 1)
            size = max(fio_size(merged.get(k) or "0") or 0 for k in ("size", "filesize"))
            if merged.get("directory"):
                need[by_path[merged["directory"]]] += numjobs * size
                continue
            reach = fio_size(merged.get("offset") or "0") or 0
            reach += (numjobs - 1) * (fio_size(merged.get("offset_increment") or "0") or 0)
            target = by_path[merged["filename"]]
            need[target] = max(need[target], reach + size)
    return need


def _jobs(text: str) -> list[tuple[str, dict[str, str | None]]]:
    """Each job of job file ``text`` with its options as fio applies them (``global``
    first, the job's own after; ``$jobnum`` in a kept ``filename_format`` as written)."""
    sections = ini_sections(text)
    defaults = [item for name, options in sections if name == "global" for item in options]
    return [(name, dict([*defaults, *options])) for name, options in sections if name != "global"]


def _kept_problems(step_id: str, job_file: str, kept_texts: list[str]) -> list[str]:
    """Each option of each job of the step's job file that the job of the same place in
    the job files volbench kept for the step's tests (what fio ran: one ``[job]`` each,
    ``thread``, the target held open, fio's logs added) does not hold, or holds with
    another value."""
    kept = [options for text in kept_texts for _, options in _jobs(text)]
    written = _jobs(job_file)
    if len(kept) != len(written):
        return [f"{step_id}: {len(written)} jobs, {len(kept)} kept for its tests"]
    found = []
    for (name, options), ran in zip(written, kept, strict=True):
        for key, value in options.items():
            if key not in OWN and ran.get(key, "(absent)") != value:
                found.append(f"{step_id}: [{name}] {key}={value} ran as {ran.get(key)}")
    return found


def _tests_stored(run: Mapping[str, Any], names: list[str]) -> list[str]:
    """The tests of ``names`` with no result of fio's, one with an fio error, or no I/O."""
    rows = [r for r in run["results"] if r["test"] in names]
    missing = [n for n in names if not any(r["test"] == n for r in rows)]
    failed = [f"{r['test']}: fio error {r['error']}" for r in rows if r["error"] != 0]
    iops = {n: sum(r["iops"] for r in rows if r["test"] == n) for n in names}
    idle = [n for n in names if n not in missing and iops[n] <= 0]
    return [*(f"{n}: no results" for n in missing), *failed, *(f"{n}: no I/O" for n in idle)]


def check_run(
    recipe: Recipe,
    made: Mapping[str, str],
    dry: Mapping[str, Any],
    ran: subprocess.CompletedProcess[str],
    run: Mapping[str, Any],
) -> list[str]:
    """What in the run of ``recipe`` at :data:`SCALE` on the targets ``made`` (name ->
    path, as the page's job files name them) differs from its page (see the module);
    ``dry``: ``--dry-run``'s document for the same targets, ``ran``: the run's process,
    ``run``: the stored run (``show --format json``). Asserts the run's own record, and
    gives the differences of its steps (empty: none)."""
    scale = f"{float(SCALE):g}"
    assert run["status"] == "completed"
    assert "per-second logs" not in ran.stderr, ran.stderr[-2000:]
    assert run["labels"]["recipe"] == recipe.id
    assert run["labels"]["recipe_scale"] == scale
    assert f"a rehearsal, scaled to {scale}" in ran.stdout
    section = run["settings"]["recipe"]
    assert section["rehearsal"] is True and section["scale"] == scale
    fio_steps = [s for s in recipe.steps if s.runs_fio]
    assert [s["id"] for s in section["steps"]] == [s.id for s in fio_steps]
    for step in recipe.steps:
        if not step.runs_fio:  # the page's words only (Azure's cache warm-up)
            assert any(f"step {step.id} not run" in n for n in section["notes"]), step.id
    by_id = {s["id"]: s for s in dry["steps"]}
    planned = {t["name"]: t for t in run["settings"]["planned"]}
    problems: list[str] = []
    for stored in section["steps"]:
        step = recipe.step(stored["id"])
        job_file = stored["job_file"]
        assert job_file == by_id[step.id]["job_file"], step.id
        assert "; rehearsal, not the page's recipe" in job_file, step.id
        page, _ = page_job(recipe, step, made)
        problems += [f"{step.id}: {p}" for p in differences(fio_reads(job_file), page, SCALE)]
        assert stored["tests"], step.id
        problems += [f"{step.id}: {p}" for p in _tests_stored(run, stored["tests"])]
        texts = [planned[name]["job_text"] for name in stored["tests"]]
        problems += _kept_problems(step.id, job_file, texts)
    return problems


def rehearse(
    tool: Volbench,
    recipe: Recipe,
    made: Mapping[str, str],
    args: Sequence[str],
    timeout: float,
    request: pytest.FixtureRequest,
    where: str,
) -> dict[str, Any]:
    """``volbench ARGS`` (``run recipe`` of ``recipe`` on the targets ``made``; ``where``:
    their place's prefix, "lab://NAME: ", or none) after its ``--dry-run``, checked
    against its page (:func:`check_run`), its fio steps and seconds recorded: the run."""
    dry = tool.document(*args, "--dry-run")
    started = time.monotonic()
    ran = tool(*args, "--runs-dir", str(tool.runs_dir), timeout=timeout)
    seconds = time.monotonic() - started
    assert ran.returncode == 0, (ran.stdout[-1500:], ran.stderr[-2000:])
    run = tool.stored()
    steps = sum(1 for step in recipe.steps if step.runs_fio)
    targets = ", ".join(f"{k}={v}" for k, v in made.items())
    record(
        request,
        f"{recipe.id}: {steps} fio steps at --scale {float(SCALE):g} on {where}{targets}"
        f" in {seconds:.1f} s",
    )
    assert check_run(recipe, made, dry, ran, run) == [], f"{recipe.id} after {seconds:.1f} s"
    return run
