"""``volbench run recipe``: the clouds' own published fio benchmark recipes.

``--list`` lists them (cloud, page title, the day its text was read, steps); NAME
alone shows one: its page, targets, each step's command as the page gives it, the
figure it reports and the figures the page expects; ``--dry-run --target PATH``
prints the fio job file of each step (:mod:`volbench.recipes.jobs`), the page's
target replaced by PATH, scaled down with ``--scale`` for a rehearsal.

Without ``--dry-run``, ``--target`` runs the recipe: each step's job file is written as
``--dry-run`` prints it and all of them run through ``volbench run job``'s engine
(:func:`run_recipe`): safety checks, the store, resume, host samples, stall watch,
the report and, with ``--product``, the promise check. The run's labels name the
recipe and its scale (``recipe=NAME``, ``recipe_scale=F``), its ``recipe`` settings
its page and each step's job file and tests (:mod:`volbench.recipes.running`).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import click

from volbench.cli import console
from volbench.cli.check import promise_options
from volbench.cli.dry_run import checked_cost_options
from volbench.cli.options import (
    Converted,
    db_option,
    format_option,
    label_option,
    runs_dir_option,
    stall_options,
    strict_option,
    write_options,
)
from volbench.cli.place_options import PLACE_OPTIONS, given
from volbench.cli.plan_run import TargetChoice, run_plan
from volbench.errors import UsageError
from volbench.places.remote import remote_path
from volbench.places.table import default_targets
from volbench.plans.jobs import tests as job_tests
from volbench.plans.placement.fleet_spec import OwnFile
from volbench.recipes import jobs, loader, running
from volbench.recipes.model import Recipe, Step
from volbench.report.sheet import Column, Sheet

SCALE = Converted("fraction", jobs.parse_scale)
DRY_RUN_SCHEMA = "volbench.recipe_dry_run/1"
LIST_SCHEMA = "volbench.recipes/1"


def _host_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--hosts``, ``--hosts-file`` and ``--keep-going`` as every plan has them."""
    for option in reversed(PLACE_OPTIONS[1:]):  # not --targets: a recipe names its own
        function = option(function)
    return function


@click.command("recipe")
@click.argument("name", required=False)
@click.option(
    "--list", "list_", is_flag=True, help="List the recipes: cloud, page title, day read, steps."
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the fio job file of each step for --target; run nothing, write nothing.",
)
@click.option(
    "--target",
    "targets",
    multiple=True,
    metavar="PATH|NAME=PATH",
    help="The device, file or folder in place of the page's (NAME=PATH for a recipe with"
    " several targets, as NAME alone shows them). Never the page's own path.",
)
@click.option(
    "--scale",
    type=SCALE,
    default="1",
    metavar="FRACTION",
    help="A rehearsal: sizes and runtimes times FRACTION (0 < FRACTION <= 1, e.g. 0.01),"
    " every other option as the page gives it; each job file says it was scaled.",
)
@click.option(
    "--set",
    "settings",
    multiple=True,
    metavar="OPTION=VALUE",
    help="A value the page says to change (gcp-pd-raw: filesize=SIZE, the disk's size);"
    " any other option is refused.",
)
@click.option(
    "--step",
    "only",
    multiple=True,
    metavar="STEP",
    help="Only this step (repeat for more): its job file alone is one fio can run.",
)
@click.option(
    "--file",
    "files",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="A recipe file of your own (YAML, the schema of the built-in ones), listed and"
    " chosen like them.",
)
@format_option
@_host_options
@label_option
@write_options
@runs_dir_option
@db_option
@stall_options
@checked_cost_options
@promise_options
@strict_option
def command(
    name: str | None,
    list_: bool,
    dry_run: bool,
    targets: tuple[str, ...],
    scale: Fraction,
    settings: tuple[str, ...],
    only: tuple[str, ...],
    files: tuple[Path, ...],
    fmt: str,
    **run_options: Any,
) -> None:
    """The clouds' own fio benchmark recipes: --list, NAME, NAME --dry-run --target PATH,
    or NAME --target PATH to run it.

    Each recipe is one vendor page's procedure (AWS, Azure, Google Cloud, Alibaba Cloud,
    Tencent Cloud, OCI): its commands copied as the page gives them, with the page's
    title, address and the day it was read. --dry-run prints the fio job file of each
    step, the page's target replaced by --target and nothing else changed but what
    --scale and --set say (written in each file's comments). Without --dry-run the job
    files run as `volbench run job` runs them (safety checks, store, resume, report;
    --product checks the run against the product's promise), each step in the recipe's
    order, and the run ends with the figures the page expects beside those measured."""
    recipes = loader.load(files)
    if list_:
        if name is not None or dry_run:
            raise UsageError("--list lists every recipe: give it without NAME or --dry-run")
        console.show(list_sheet(recipes), fmt)
        return
    if name is None:
        raise UsageError("give a recipe NAME, or --list to see them (volbench run recipe --list)")
    recipe = loader.find(recipes, name)
    _, hosts = given((), (), run_options.pop("host_lists"), run_options.pop("hosts_file"))
    if not dry_run and not targets and not hosts:
        if settings or only or scale != 1:
            raise UsageError(
                f"give --target PATH to run {recipe.id}, or --dry-run --target PATH to print"
                " its job files"
            )
        show_recipe(recipe, fmt)
        return
    if hosts:
        targets = _on_hosts(recipe, targets, hosts)
    bound = jobs.bind_targets(recipe, targets)
    if not hosts:  # a path on another host is checked there, as the run goes
        check_target_kinds(recipe, bound)
    rendering = jobs.render(recipe, bound, scale, jobs.check_settings(recipe, settings), only)
    if dry_run:
        show_dry_run(rendering, fmt)
        return
    choice = choice_of(run_options, fmt)
    if hosts:
        places = tuple(bound.values()) if own_files(recipe) else targets
        choice = dataclasses.replace(choice, targets=places, hosts=tuple(hosts))
    run_recipe(rendering, choice, own=bool(hosts) and own_files(recipe))


def own_files(recipe: Recipe) -> bool:
    """Whether on ``--hosts`` the recipe's jobs keep the files they name, on each host
    (a folder, whose jobs lay out files of their own names in it, or several targets,
    which its job files name apart), rather than one place's target taking their place."""
    return len(recipe.targets) != 1 or recipe.targets[0].kind == "directory"


def _on_hosts(recipe: Recipe, targets: tuple[str, ...], hosts: Sequence[str]) -> tuple[str, ...]:
    """The target paths a recipe run on ``hosts`` gives each of them: for a recipe of
    one device or file, its one path on every host (a lab guest's own disk, or a file in
    its filesystem, when none is given and every host is a guest); for one of folders or
    several targets (:func:`own_files`), each ``NAME=PATH`` (a bare ``PATH`` for one),
    an absolute path on every host, normalised as fio will open it there."""
    if own_files(recipe):
        if not targets:
            needed = " ".join(f"--target {t.name}=PATH" for t in recipe.targets)
            raise UsageError(
                f"{recipe.id} runs in a folder or on several targets: give {needed}, paths on"
                " every host (a lab guest's filesystem: `volbench lab up NAME --filesystem"
                " ext4`, folders under /mnt/vda)"
            )
        found = []
        for item in targets:
            name, sep, path = item.partition("=")
            if ":" in path.split("/", 1)[0] or (not sep and ":" in item.split("/", 1)[0]):
                raise UsageError(f"--target {item}: with --hosts, the path on every host")
            found.append(f"{name}={remote_path(path)}" if sep else remote_path(item))
        return tuple(found)
    if not targets and (defaults := default_targets(hosts)):
        return tuple(defaults)
    if len(targets) != 1 or ":" in targets[0].split("/", 1)[0]:
        raise UsageError("with --hosts, give --target PATH: the one path on every host")
    return targets


def choice_of(options: Mapping[str, Any], fmt: str) -> TargetChoice:
    """The run's options as every plan takes them (the recipe's job files name its
    targets, so ``target`` is never used)."""
    return TargetChoice(
        target="",
        size=None,
        ioengine=None,
        labels=tuple(options["labels"]),
        destroy_data=tuple(options["destroy_data"]),
        force=bool(options["force"]),
        runs_dir=options["runs_dir"],
        cache="direct",
        replay=None,
        db=options["db"],
        fmt=fmt,
        stall_seconds=float(options["stall_seconds"]),
        abort_on_stall=bool(options["abort_on_stall"]),
        product=options["product"],
        hourly_cost=options["hourly_cost"],
        keep_going=bool(options["keep_going"]),
        strict=bool(options["strict"]),
    )


def run_recipe(rendering: jobs.Rendering, choice: TargetChoice, own: bool = False) -> None:
    """Write each step's job file (:func:`running.write_jobs`) and run them all as one
    ``job`` plan (:func:`job_tests.plan`, :func:`run_plan`), the run labelled with the
    recipe and its scale, then print the page's expected figures beside those measured.
    ``own``: on ``choice``'s hosts, the jobs on the files they name themselves there
    (:func:`own_files`), each in one of ``choice``'s targets (the recipe's own)."""
    given = {key for key, _ in choice.labels}
    clash = given & {running.RECIPE, running.SCALE}
    if clash:
        raise UsageError(f"--label {sorted(clash)[0]}: volbench sets it to the recipe's own")
    with tempfile.TemporaryDirectory(prefix="volbench-recipe-") as folder:
        written = running.write_jobs(rendering, Path(folder))
        if not written.steps:
            raise UsageError(
                f"{rendering.recipe.id}: none of these steps has an fio command to run"
            )
        paths = tuple(path for _, path in written.steps)
        remote = bool(choice.hosts)  # each place's target replaces the page's, or holds them
        replaced = remote and not own
        made = job_tests.plan(paths, job_tests.cwd(), os.environ, replaced=replaced, remote=remote)
    if own:
        files = tuple(OwnFile(n.path, n.writes) for n in made.named)
        choice = dataclasses.replace(choice, files=files)
    section = running.settings(rendering, written, made.sources)
    spec = dataclasses.replace(made.spec, options={**made.spec.options, running.RECIPE: section})
    choice = dataclasses.replace(
        choice, ioengine=made.engines, labels=(*choice.labels, *running.labels(rendering))
    )
    for note in written.notes:
        console.stderr.print(note, markup=False, highlight=False)
    # the run's sheet names the page, a rehearsal and the figures the page expects
    # (volbench.report.run_sheets), here as in `show` and `report`
    run_plan(choice, spec, made.writes, () if own else made.named)


def list_sheet(recipes: Sequence[Recipe]) -> Sheet:
    """The ``--list`` table: one row a recipe."""
    rows = [
        {
            "recipe": r.id,
            "cloud": r.cloud,
            "title": r.page.title,
            "read": r.page.read,
            "steps": steps_text(r),
            "url": r.page.url,
            "origin": r.origin,
        }
        for r in recipes
    ]
    columns = (
        Column("recipe", "recipe"),
        Column("cloud", "cloud"),
        Column("title", "page"),
        Column("read", "read"),
        Column("steps", "steps"),
    )
    document = {"schema": LIST_SCHEMA, "recipes": [recipe_document(r) for r in recipes]}
    notes = (
        "volbench run recipe NAME: the page's address and commands;"
        " NAME --dry-run --target PATH: the job files",
    )
    return Sheet("Cloud benchmark recipes", columns, tuple(rows), document, notes)


def steps_text(recipe: Recipe) -> str:
    """``1 prepare + 9 measure``."""
    kinds = [s.kind for s in recipe.steps]
    parts = [f"{kinds.count(k)} {k}" for k in ("prepare", "measure") if k in kinds]
    return " + ".join(parts)


def recipe_document(recipe: Recipe) -> dict[str, Any]:
    """A recipe as JSON: where it comes from, its targets and steps."""
    return {
        "id": recipe.id,
        "cloud": recipe.cloud,
        "origin": recipe.origin,
        "summary": recipe.summary,
        "pages": [
            {
                "key": p.key,
                "title": p.title,
                "url": p.url,
                "read": p.read,
                "page_date": p.page_date,
                "text_from": p.text_from,
            }
            for p in (recipe.page, *recipe.sources)
        ],
        "targets": [
            {
                "name": t.name,
                "kind": t.kind,
                "page_values": list(t.page_values),
                "optional": t.optional,
                "what": t.what,
            }
            for t in recipe.targets
        ],
        "adjust": [{"option": a.option, "quote": a.quote} for a in recipe.adjust],
        "steps": [step_document(s) for s in recipe.steps],
        "omitted": [{"what": o.what, "source": o.source, "why": o.why} for o in recipe.omitted],
        "notes": list(recipe.notes),
    }


def step_document(step: Step) -> dict[str, Any]:
    return {
        "id": step.id,
        "kind": step.kind,
        "page": step.page,
        "when": step.when,
        "quote": step.quote,
        "source": [{"file": b.file, "text": b.text} for b in step.source],
        "reports": step.reports,
        "expects": [
            {
                "what": e.what,
                "value": e.value,
                "unit": e.unit,
                "at_least": e.at_least,
                "quote": e.quote,
                "condition": e.condition,
            }
            for e in step.expects
        ],
        "fio": [{"section": s.name, "options": [o.text for o in s.options]} for s in step.sections],
        "fio_args": [f"--{o.text}" for o in step.args],
    }


def show_recipe(recipe: Recipe, fmt: str) -> None:
    """NAME alone: the recipe as a reader checks it against its page."""
    if fmt == "json":
        sys.stdout.write(json.dumps(recipe_document(recipe), indent=2, ensure_ascii=False) + "\n")
        return
    if fmt != "table":
        raise UsageError("a recipe is shown as a table or as json (--format json)")
    lines = [f"{recipe.id}: {recipe.cloud}, {recipe.summary}", ""]
    for page in (recipe.page, *recipe.sources):
        lines += [
            f'"{page.title}" {page.url}',
            f"  read {page.read}; page date: {page.page_date}",
            f"  text from: {page.text_from}",
        ]
    lines += ["", "targets (--target NAME=PATH, or --target PATH for one):"]
    for target in recipe.targets:
        optional = ", optional" if target.optional else ""
        shown_values = " or ".join(target.page_values)
        lines.append(f"  {target.name} ({target.kind}{optional}; the page's {shown_values}):")
        lines.append(f"    {target.what}")
    for item in recipe.adjust:
        lines.append(f"--set {item.option}=VALUE, as the page says: {item.quote}")
    for number, step in enumerate(recipe.steps, 1):
        page = recipe.page_of(step)
        when = f"; {step.when}" if step.when else ""
        lines += ["", f"{number}. {step.id} ({step.kind}{when})"]
        if page is not recipe.page:
            lines.append(f'   from "{page.title}"')
        lines.append(f'   the page: "{step.quote}"')
        for block in step.source:
            label = f"   {block.file}:" if block.file else "   $"
            text_lines = block.text.splitlines()
            if block.file:
                lines.append(label)
                lines += [f"     {line}" for line in text_lines]
            else:
                lines += [f"{label} {text_lines[0]}", *(f"     {line}" for line in text_lines[1:])]
        if not step.source:
            lines.append("   (the page gives no fio command for it)")
        lines.append(f"   reports: {step.reports}")
        for expected in step.expects:
            floor = "at least " if expected.at_least else ""
            lines.append(
                f"   the page expects {floor}{expected.value:,.0f} {expected.unit}"
                f' ({expected.what}, {expected.condition}): "{expected.quote}"'
            )
    if recipe.omitted:
        lines += ["", "not in the recipe:"]
        lines += [f"  {o.what}: {o.why}" for o in recipe.omitted]
    if recipe.notes:
        lines += ["", "notes:"]
        lines += [f"  {note}" for note in recipe.notes]
    lines += ["", f"its job files: volbench run recipe {recipe.id} --dry-run --target PATH"]
    for line in lines:
        console.stdout.print(line)


def check_target_kinds(recipe: Recipe, bound: Mapping[str, str]) -> None:
    """A target that exists must be of its kind: a folder for a folder target, a file or
    block device for the others (a file may stand in for a device in a rehearsal)."""
    for target in recipe.targets:
        path = bound.get(target.name)
        if path is None or not Path(path).exists():
            continue
        is_dir = Path(path).is_dir()
        if target.kind == "directory" and not is_dir:
            raise UsageError(f"--target {target.name} {path!r} is not a folder: give a folder")
        if target.kind != "directory" and is_dir:
            raise UsageError(
                f"--target {target.name} {path!r} is a folder: give a {target.kind}"
                " (a file may stand in for a device)"
            )


def dry_run_document(rendering: jobs.Rendering) -> dict[str, Any]:
    """The JSON form of a dry run (schema ``volbench.recipe_dry_run/1``)."""
    recipe = rendering.recipe
    return {
        "schema": DRY_RUN_SCHEMA,
        "recipe": recipe.id,
        "cloud": recipe.cloud,
        "page": rendering.page_document(),
        "targets": dict(rendering.targets),
        "scale": float(rendering.scale),
        "scaled": rendering.scaled,
        "settings": dict(rendering.settings),
        "steps": [
            {
                **job.document(),
                "fio_args": list(job.fio_args),
                "changes": list(job.changes),
                "writes": job.writes,
                "instructions": None if job.text is not None else job.step.quote,
            }
            for job in rendering.steps
        ],
        "left_out": list(rendering.left_out),
    }


def show_dry_run(rendering: jobs.Rendering, fmt: str) -> None:
    """Print the job files (every line that is not fio's a ``;`` comment), or their JSON."""
    if fmt == "json":
        document = dry_run_document(rendering)
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        return
    if fmt != "table":
        raise UsageError("a dry run is printed as job files or as json (--format json)")
    out = console.stdout
    count = len(rendering.steps)
    for number, job in enumerate(rendering.steps, 1):
        out.print(f"; ===== step {number} of {count}: {job.step.id} ({job.step.kind}) =====")
        if job.text is None:
            when = f" ({job.step.when})" if job.step.when else ""
            out.print(f"; no fio command on the page{when}: {job.step.quote}")
            out.print(f"; {job.step.reports}")
        else:
            out.print(job.text.rstrip("\n"))
        out.print("")
    recipe = rendering.recipe
    summary = [f"dry run of recipe {recipe.id} ({recipe.cloud}): nothing was run or written"]
    if rendering.scaled:
        summary.append(
            f"a rehearsal: sizes and runtimes x {float(rendering.scale):g}, not the page's figures"
        )
    writing = [job.step.id for job in rendering.steps if job.writes]
    if writing:
        summary.append(
            "these steps write (a device or file given as their target loses what it holds):"
            f" {', '.join(writing)}"
        )
    summary += list(rendering.left_out)
    summary.append("run each step's job file with fio (--step STEP prints one alone)")
    for line in summary:
        out.print(f"; {line}")
