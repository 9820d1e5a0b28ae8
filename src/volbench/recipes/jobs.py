"""A recipe's steps as fio job files: the page's options, the user's target in place of
the page's, optionally scaled down for a rehearsal. Pure: nothing here reads or
writes a file.

What fio gets is what the page says: each step's sections and options in the page's
order (``global`` first where the page sets defaults, as fio reads options given
before ``--name`` or before a job file), with only these changes, each written in
the job file's comments:

* the value of ``filename=``/``directory=`` is the user's target (fio's ``:``
  escaped), never the page's placeholder nor any path of the recipe's own;
* a rehearsal (``scale`` below 1) multiplies ``runtime``/``ramp_time`` and
  ``size``/``filesize``/``io_size``/``offset``/``offset_increment`` by ``scale``
  (:func:`volbench.recipes.options.scaled_size`, :func:`~volbench.recipes.options.scaled_time`),
  every other option as the page gives it;
* an option the page tells the reader to change (``Recipe.adjust``) takes the user's
  value.

The text is read back the way fio reads it (:func:`volbench.fio.job_text.read_job`)
and must hold exactly the intended sections and options, or it is refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from volbench.errors import UsageError
from volbench.fio.job_text import escape_filename, read_job, value_problem
from volbench.recipes import options as fio_options
from volbench.recipes.model import Option, Recipe, Section, Step, Target
from volbench.units import format_bytes

WRITES = frozenset({"write", "randwrite", "rw", "readwrite", "randrw"})
"""``rw`` values that write to the target."""


@dataclass(frozen=True)
class StepJob:
    """One step of a rendered recipe."""

    step: Step
    text: str | None
    """The fio job file; None when the page gives no fio command for the step."""
    fio_args: tuple[str, ...] = ()
    """The fio command-line options to run it with (``--eta-newline=1``, ``--readonly``)."""
    changes: tuple[str, ...] = ()
    """Each value that is not the page's, but the target (``runtime=180 -> 1800ms``)."""
    writes: bool = False
    """The step writes to its target: whatever it holds is lost."""

    def document(self) -> dict[str, Any]:
        """What a dry run and a run's settings both say of the step: its id, kind, the
        figure it reports and its job file (None: the page gives no fio command)."""
        step = self.step
        return {"id": step.id, "kind": step.kind, "reports": step.reports, "job_file": self.text}


@dataclass(frozen=True)
class Rendering:
    """A recipe's job files for the user's targets."""

    recipe: Recipe
    targets: Mapping[str, str]
    """Target name -> the user's path."""
    scale: Fraction
    """1: the page's recipe; below 1: a rehearsal, sizes and runtimes times this."""
    steps: tuple[StepJob, ...]
    settings: Mapping[str, str] = field(default_factory=dict)
    """Option -> the user's value, for options the page says to change."""
    left_out: tuple[str, ...] = ()
    """The steps not rendered, each with why."""

    @property
    def scaled(self) -> bool:
        return self.scale != 1

    def page_document(self) -> dict[str, str]:
        """The recipe's page: its title, address and the day its text was read."""
        page = self.recipe.page
        return {"title": page.title, "url": page.url, "read": page.read}


def bind_targets(recipe: Recipe, given: Sequence[str]) -> dict[str, str]:
    """The user's ``--target`` values as target name -> path: ``NAME=PATH``, or a bare
    ``PATH`` for a recipe with one required target. Each path is absolute and one fio
    reads as written (:func:`volbench.fio.job_text.value_problem`); every required
    target is given. One-line UsageError otherwise."""
    names = {t.name for t in recipe.targets}
    required = [t for t in recipe.targets if not t.optional]
    bound: dict[str, str] = {}
    for item in given:
        name, sep, path = item.partition("=")
        if not (sep and name in names):
            if len(required) != 1:
                raise UsageError(
                    f"{recipe.id} has the targets {_listed(recipe.targets)}: give each as"
                    f" --target NAME=PATH (got {item!r})"
                )
            name, path = required[0].name, item
        if name in bound:
            raise UsageError(f"--target {name} is given twice ({bound[name]!r} and {path!r})")
        bound[name] = _checked_path(path, name)
    missing = [t for t in required if t.name not in bound]
    if missing:
        hint = " ".join(f"--target {t.name}=PATH" for t in missing)
        if len(required) == 1:
            hint = "--target PATH"
        raise UsageError(
            f"{recipe.id} needs {_listed(missing)}: give {hint}"
            " (a recipe never uses the page's own path)"
        )
    return bound


def _listed(targets: Sequence[Target]) -> str:
    return ", ".join(f"{t.name} ({t.kind})" for t in targets)


def _checked_path(path: str, name: str) -> str:
    problem = value_problem(path, path=True)
    if problem:
        raise UsageError(f"--target {name} {path!r} {problem}: give another path")
    if not path.startswith("/"):
        raise UsageError(f"--target {name} {path!r} is not an absolute path: give /...")
    return path


def parse_scale(text: str) -> Fraction:
    """``--scale``: a fraction in (0, 1] (``0.01``, ``1/100``), exact."""
    try:
        value = Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise UsageError(f"invalid scale {text!r}: give a fraction such as 0.01 or 1/100") from None
    if not 0 < value <= 1:
        raise UsageError(f"invalid scale {text!r}: it must be above 0 and at most 1")
    if value.denominator > 1_000_000:
        raise UsageError(f"invalid scale {text!r}: at most six decimals")
    return value


def check_settings(recipe: Recipe, given: Sequence[str]) -> dict[str, str]:
    """The user's ``--set OPTION=VALUE``: only options the page says to change, each
    value one of the option's kind."""
    allowed = {a.option for a in recipe.adjust}
    settings: dict[str, str] = {}
    for item in given:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in allowed:
            known = ", ".join(sorted(allowed)) or "none"
            raise UsageError(
                f"--set {item!r}: {recipe.id}'s page asks to change only: {known}"
                " (every other option is the page's)"
            )
        problem = fio_options.problem(key, value.strip(), fio_options.JOB_OPTIONS)
        if problem:
            raise UsageError(f"--set {problem}")
        settings[key] = value.strip()
    return settings


def render(
    recipe: Recipe,
    targets: Mapping[str, str],
    scale: Fraction | int = 1,
    settings: Mapping[str, str] | None = None,
    only: Sequence[str] = (),
) -> Rendering:
    """The job files of ``recipe``'s steps (those of ``only``, in the recipe's order,
    when given) for ``targets`` (:func:`bind_targets`), scaled by ``scale`` (0 < scale
    <= 1) with the user's ``settings`` (:func:`check_settings`). A step whose optional
    target is not given is left out, saying so."""
    scale = Fraction(scale)
    if not 0 < scale <= 1:
        raise UsageError(f"invalid scale {scale}: it must be above 0 and at most 1")
    settings = dict(settings or {})
    unknown = [s for s in only if s not in {step.id for step in recipe.steps}]
    if unknown:
        ids = ", ".join(step.id for step in recipe.steps)
        raise UsageError(f"{recipe.id} has no step {unknown[0]!r}: its steps are {ids}")
    jobs: list[StepJob] = []
    left_out: list[str] = []
    for step in recipe.steps:
        if only and step.id not in only:
            continue
        missing = [t for t in _targets_of(recipe, step) if t.name not in targets]
        if missing:
            target = missing[0]
            left_out.append(
                f"{step.id} left out: it needs the {target.name} target ({target.what});"
                f" give --target {target.name}=PATH"
            )
            continue
        jobs.append(render_step(recipe, step, targets, scale, settings))
    return Rendering(recipe, dict(targets), scale, tuple(jobs), settings, tuple(left_out))


def _targets_of(recipe: Recipe, step: Step) -> list[Target]:
    values = {
        o.value for s in step.sections for o in s.options if o.key in fio_options.PATH_OPTIONS
    }
    return [t for t in recipe.targets if values & set(t.page_values)]


def render_step(
    recipe: Recipe,
    step: Step,
    targets: Mapping[str, str],
    scale: Fraction,
    settings: Mapping[str, str],
) -> StepJob:
    """One step's job file (see the module doc); its target paths must be in ``targets``."""
    if not step.runs_fio:
        return StepJob(step, None)
    by_value = {v: t for t in recipe.targets for v in t.page_values}
    unit = fio_options.size_unit(
        [
            o.value
            for s in step.sections
            for o in s.options
            if o.key in fio_options.BLOCK_SIZES and o.value is not None
        ]
    )
    changes: list[str] = []
    sections: list[Section] = []
    for section in step.sections:
        written: list[Option] = []
        for option in section.options:
            value = option.value
            if option.key in fio_options.PATH_OPTIONS:
                value = escape_filename(targets[by_value[value or ""].name])
            else:
                value = _changed(option, scale, unit, settings, changes)
            written.append(Option(option.key, value))
        sections.append(Section(section.name, tuple(written)))
    used = _targets_of(recipe, step)
    header = [
        f"; volbench recipe {recipe.id}, step {step.id} ({step.kind}): {step.reports}",
        f"; {recipe.cloud}: {recipe.page_of(step).title}, {recipe.page_of(step).url}"
        f" (read {recipe.page_of(step).read})",
        *(
            f"; target {t.name}: {targets[t.name]} (the page's {' or '.join(t.page_values)})"
            for t in used
        ),
    ]
    if scale != 1:
        header.append(f"; rehearsal, not the page's recipe: sizes and runtimes x {float(scale):g}")
    header += [f"; {change}" for change in changes]
    args = tuple(f"--{o.text}" for o in step.args)
    if args:
        header.append(f"; run it as: fio {' '.join(args)} THIS_FILE")
    body = []
    for section in sections:
        body += ["", f"[{section.name}]", *(option.text for option in section.options)]
    text = "\n".join(header + body) + "\n"
    _prove(text, sections)
    _check_offsets(step, sections)
    return StepJob(step, text, args, tuple(changes), _writes(sections))


def _changed(
    option: Option,
    scale: Fraction,
    unit: int,
    settings: Mapping[str, str],
    changes: list[str],
) -> str | None:
    """``option``'s value as written: the user's setting, then scaled."""
    value = option.value
    if value is None:
        return None
    if option.key in settings:
        value = settings[option.key]
        changes.append(f"{option.key}={value}: set by the user (the page's {option.value})")
    before = value
    if scale != 1 and option.key in fio_options.SCALED_SIZES:
        value = fio_options.scaled_size(value, scale, unit)
    elif scale != 1 and option.key in fio_options.SCALED_TIMES:
        value = fio_options.scaled_time(value, scale)
    else:
        return value
    changes.append(f"{option.key}={value}: scaled from {before}")
    return value


def _check_offsets(step: Step, sections: Sequence[Section]) -> None:
    """Refuse a job that would start past its ``filesize``: fio stops it ("you need to
    specify valid offset=", filesetup.c ``setup_files``) when ``offset`` +
    ``offset_increment`` x its clone's number is beyond ``filesize`` (a rehearsal scales
    the page's offsets, the user's ``--set filesize`` too)."""
    defaults = {o.key: o.value for s in sections if s.name == "global" for o in s.options}
    for section in sections:
        if section.name == "global":
            continue
        job = {**defaults, **{o.key: o.value for o in section.options}}
        filesize = job.get("filesize")
        if not filesize:
            continue
        clones = int(job.get("numjobs") or 1)
        step_bytes = fio_options.size_bytes(job.get("offset_increment") or "0")
        last = fio_options.size_bytes(job.get("offset") or "0") + step_bytes * (clones - 1)
        if last > fio_options.size_bytes(filesize):
            raise UsageError(
                f"step {step.id}: its last job would start {format_bytes(last)} in, past"
                f" filesize={filesize}, and fio refuses that (offset={job.get('offset') or 0},"
                f" offset_increment={job.get('offset_increment') or 0}, numjobs={clones}):"
                " give a larger --set filesize, or other steps with --step"
            )


def _writes(sections: Sequence[Section]) -> bool:
    defaults = {o.key: o.value for s in sections if s.name == "global" for o in s.options}
    for section in sections:
        if section.name == "global":
            continue
        own = {o.key: o.value for o in section.options}
        rw = own.get("rw", own.get("readwrite", defaults.get("rw", defaults.get("readwrite"))))
        if rw in WRITES:
            return True
    return False


def _prove(text: str, sections: Sequence[Section]) -> None:
    """Refuse ``text`` unless fio reads exactly ``sections`` from it."""
    read = [(s.name, list(s.options)) for s in read_job(text)]
    wanted = [(s.name, [(o.key, o.value) for o in s.options]) for s in sections]
    if read != wanted:
        raise UsageError("the job file does not read back as the recipe's options: refused")
