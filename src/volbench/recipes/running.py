"""A recipe run through ``volbench run job``'s engine: each step's job file written as
``--dry-run`` prints it (:func:`volbench.recipes.jobs.render`), what the run records of
the recipe (its labels and its ``recipe`` settings section), and the figures the page
expects beside those measured.

A step is one job file, run as its own fio process(es) in the recipe's order: the
preparation step first where the page gives an fio command for it; a step the page
gives only in words is left out, saying so. fio's command-line options a page adds
(``--eta-newline=1``, ``--readonly``) are not passed: volbench watches progress
itself, and its safety checks know which steps only read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from volbench.model import StoredResult
from volbench.recipes.jobs import Rendering, StepJob

RECIPE = "recipe"
"""The label naming the recipe, and the run's settings section about it."""
SCALE = "recipe_scale"
"""The label of the recipe's scale: 1, or below 1 for a rehearsal."""


@dataclass(frozen=True)
class Written:
    """The job files of a recipe's steps as written for a run."""

    steps: tuple[tuple[StepJob, str], ...]
    """Each step that runs fio and the path of its job file."""
    notes: tuple[str, ...]
    """The steps not run, each with why."""


def scale_text(rendering: Rendering) -> str:
    """The scale as recorded: ``1``, ``0.01``."""
    return f"{float(rendering.scale):g}"


def write_jobs(rendering: Rendering, folder: Path) -> Written:
    """Write each step's job file in ``folder`` (``NN-STEP.fio``, in the recipe's order),
    exactly the text ``--dry-run`` prints for it; a step without an fio command is a
    note instead."""
    steps: list[tuple[StepJob, str]] = []
    notes: list[str] = []
    for number, job in enumerate(rendering.steps, 1):
        if job.text is None:
            when = f" ({job.step.when})" if job.step.when else ""
            notes.append(
                f"step {job.step.id} not run: the page gives no fio command for it{when}:"
                f" {job.step.quote}"
            )
            continue
        path = folder / f"{number:02d}-{job.step.id}.fio"
        path.write_text(job.text, encoding="utf-8")
        steps.append((job, str(path)))
    notes += rendering.left_out
    if any(job.fio_args for job, _ in steps):
        notes.append(
            "fio's command-line options the page adds (--eta-newline, --readonly) are not"
            " passed: volbench shows progress itself and checks which steps write"
        )
    return Written(tuple(steps), tuple(notes))


def labels(rendering: Rendering) -> tuple[tuple[str, str], ...]:
    """The run's labels naming the recipe and its scale (``recipe=NAME``, ``recipe_scale=F``)."""
    return ((RECIPE, rendering.recipe.id), (SCALE, scale_text(rendering)))


def settings(
    rendering: Rendering, written: Written, sources: Sequence[tuple[str, int]]
) -> dict[str, Any]:
    """The run's ``recipe`` settings section: the recipe, its page (title, address, the
    day it was read), the scale and settings, and each step run with its job file and
    tests (``sources``: each test's name and the place of its job file in ``written``)."""
    recipe = rendering.recipe
    return {
        "id": recipe.id,
        "cloud": recipe.cloud,
        "page": rendering.page_document(),
        "scale": scale_text(rendering),
        "rehearsal": rendering.scaled,
        "targets": dict(rendering.targets),
        "settings": dict(rendering.settings),
        "steps": [
            {
                **job.document(),
                "tests": [name for name, place in sources if place == number],
                "expects": [
                    {"what": e.what, "value": e.value, "unit": e.unit, "at_least": e.at_least}
                    for e in job.step.expects
                ],
            }
            for number, (job, _) in enumerate(written.steps)
        ],
        "notes": list(written.notes),
    }


def directions(what: str) -> tuple[str, ...]:
    """The directions whose IOPS make up an expected figure (``read IOPS``, ``write
    IOPS``, ``read plus write IOPS``); () for a figure volbench does not measure."""
    text = what.lower()
    if "read plus write" in text or "read and write" in text:
        return ("read", "write")
    if text.startswith("read"):
        return ("read",)
    if text.startswith("write"):
        return ("write",)
    return ()


@dataclass(frozen=True)
class Comparison:
    """A figure the page expects beside the one measured."""

    step: str
    what: str
    expected: float
    at_least: bool
    unit: str
    measured: float | None

    @property
    def ratio(self) -> float | None:
        if self.measured is None or self.expected <= 0:
            return None
        return self.measured / self.expected


def compare(section: Mapping[str, Any], results: Sequence[StoredResult]) -> list[Comparison]:
    """Each figure the recipe's steps expect (``section``: :func:`settings` as stored)
    beside the IOPS measured in its step's tests (summed over the step's tests and the
    figure's directions, each test's aggregate over its places, never a place's share
    besides; None when nothing of them was stored, or the unit is not IOPS)."""
    found: list[Comparison] = []
    for step in section.get("steps", []):
        tests = set(step.get("tests", []))
        for expected in step.get("expects", []):
            wanted = directions(str(expected["what"])) if expected["unit"] == "IOPS" else ()
            rows = [
                r for r in results if r.place is None and r.test in tests and r.direction in wanted
            ]
            measured = sum(r.iops for r in rows) if rows else None
            found.append(
                Comparison(
                    step["id"],
                    str(expected["what"]),
                    float(expected["value"]),
                    bool(expected["at_least"]),
                    str(expected["unit"]),
                    measured,
                )
            )
    return found


def comparison_lines(section: Mapping[str, Any], results: Sequence[StoredResult]) -> list[str]:
    """The lines under a recipe's run: its page, each step's tests, what the page
    expects, what was measured and their ratio, and, for a rehearsal, that its figures
    are not comparable."""
    found = compare(section, results)
    lines: list[str] = []
    page = section.get("page", {})
    lines.append(
        f"recipe {section.get('id')}: {page.get('title')}, {page.get('url')}"
        f" (read {page.get('read')})"
    )
    steps = [
        f"{step['id']} ({', '.join(step.get('tests', [])) or 'no test'})"
        for step in section.get("steps", [])
    ]
    if steps:  # a test is named after its first job, which the page names
        lines.append(f"the page's steps (their tests): {', '.join(steps)}")
    if section.get("rehearsal"):
        lines.append(
            f"a rehearsal, scaled to {section.get('scale')}: sizes and runtimes are not the"
            " page's, so its figures are not comparable with the page's"
        )
    for item in found:
        floor = "at least " if item.at_least else ""
        measured = "not measured" if item.measured is None else f"{item.measured:,.0f}"
        ratio = "" if item.ratio is None else f" ({item.ratio:.2f} x)"
        lines.append(
            f"{item.step}: the page expects {floor}{item.expected:,.0f} {item.unit}"
            f" ({item.what}); measured {measured}{ratio}"
        )
    lines += [str(note) for note in section.get("notes", [])]
    return lines
