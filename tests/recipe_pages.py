"""A recipe step's page text read the way fio reads it, and a job file compared with it
option by option: one comparison for the unit test of the job files volbench renders
(``tests/unit/test_recipes.py``) and the integration test of the job files a run
writes (``tests/integration/test_recipe_every.py``).

The page's ``source`` (its command lines and job files, as copied from the page) is
read here independently of the recipe's own ``fio:`` structure (:func:`page_job`:
options before ``--name`` are every job's defaults, ``--name`` starts a job, an option
given before a job file is a default of its jobs, ``--eta-newline`` and ``--readonly``
are command-line only). A rehearsal's values are checked against the rule the recipe
documentation states (``src/volbench/recipes/RECIPES.md``, ``recipes/jobs.py``): sizes
times the scale rounded down to whole blocks and MiB, at least one such granule and
never above the page's; times times the scale, at least 1 s or the page's when shorter.
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Mapping
from fractions import Fraction

from volbench.fio.job_text import read_job
from volbench.fio.options import fio_size
from volbench.recipes.model import Recipe, Step

Sections = list[tuple[str, list[tuple[str, str | None]]]]
"""A job file as fio reads it: each section's name and its options in order."""

FLAGS = frozenset({"time_based", "group_reporting", "norandommap", "thread", "refill_buffers"})
"""fio options that take no value on the command line (``--time_based``)."""

CLI_ONLY = frozenset({"eta-newline", "readonly"})
"""fio command-line options that are no job options."""

SIZES = frozenset({"size", "filesize", "io_size", "offset", "offset_increment"})
"""The sizes a rehearsal scales (RECIPES.md)."""

TIMES = frozenset({"runtime", "ramp_time"})
"""The times a rehearsal scales."""

MiB = 1 << 20
FLOOR_MS = 1000
"""A scaled time is at least 1 s, or the page's when that is shorter."""

_TIME = re.compile(r"(\d+)(us|ms|s|m|h|d)?", re.IGNORECASE)
_MS = {
    "us": Fraction(1, 1000),
    "ms": Fraction(1),
    "s": Fraction(1000),
    "m": Fraction(60_000),
    "h": Fraction(3_600_000),
    "d": Fraction(86_400_000),
}


def substituted(recipe: Recipe, text: str, paths: Mapping[str, str]) -> str:
    """``text`` with each target's page values replaced by its path (longest first)."""
    values = sorted(
        ((v, paths[t.name]) for t in recipe.targets for v in t.page_values if t.name in paths),
        key=lambda pair: -len(pair[0]),
    )
    for value, path in values:
        text = text.replace(value, path)
    return text


def ini_sections(text: str) -> Sections:
    """A job file's sections as fio reads them (no includes in the pages)."""
    sections: Sections = []
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


def page_job(recipe: Recipe, step: Step, paths: Mapping[str, str]) -> tuple[Sections, list[str]]:
    """The sections and command-line-only options fio would run for the page's text of
    ``step``, each target's page value replaced by its path in ``paths``."""
    files = {b.file: b.text for b in step.source if b.file}
    defaults: list[tuple[str, str | None]] = []
    jobs: Sections = []
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
                        jobs.append((name, options))
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
                jobs.append((option_value, []))
                current = jobs[-1][1]
            else:
                current.append((key, option_value))
    sections = ([("global", defaults)] if defaults else []) + jobs
    return sections, args


def _ms(text: str) -> Fraction | None:
    match = _TIME.fullmatch(text)
    if match is None:
        return None
    return int(match.group(1)) * _MS[(match.group(2) or "s").lower()]


def _granule(page: Sections) -> int:
    """The bytes a scaled size is a whole number of: 1 MiB and every block size of the
    step (a misaligned offset fails with direct I/O)."""
    unit = MiB
    for _, options in page:
        for key, value in options:
            if key in ("bs", "blocksize") and value is not None:
                unit = math.lcm(unit, fio_size(value) or 1)
    return unit


def _scaled_problem(key: str, page: str, written: str, scale: Fraction, granule: int) -> str:
    """Why ``written`` is not the page's ``page`` value of ``key`` at ``scale`` ('' if it is)."""
    if key in SIZES:
        was, now = fio_size(page), fio_size(written)
        if was is None or now is None:
            return f"{key}: {written!r} or the page's {page!r} is no size"
        wanted = was * scale
        fits = now == was or (now % granule == 0 and now <= wanted < now + granule)
        if not (fits or (now == granule and wanted < granule <= was)):
            return f"{key}={written}: not the page's {page} x {scale} in whole {granule} B"
        return ""
    was_ms, now_ms = _ms(page), _ms(written)
    if was_ms is None or now_ms is None:
        return f"{key}: {written!r} or the page's {page!r} is no time"
    wanted_ms = max(was_ms * scale, min(was_ms, Fraction(FLOOR_MS)))
    if not wanted_ms <= now_ms < wanted_ms + 1:
        return f"{key}={written}: not the page's {page} x {scale} (at least 1 s)"
    return ""


def differences(written: Sections, page: Sections, scale: Fraction = Fraction(1)) -> list[str]:
    """How the job file fio reads (``written``) differs from the page's (``page``), one
    line each: its sections and options in the page's order, each value the page's, or
    for a rehearsal (``scale`` below 1) a size or time scaled by the documented rule.
    [] when fio runs what the page says."""
    found: list[str] = []
    if [name for name, _ in written] != [name for name, _ in page]:
        return [f"sections {[n for n, _ in written]} where the page has {[n for n, _ in page]}"]
    granule = _granule(page)
    for (name, options), (_, page_options) in zip(written, page, strict=True):
        if [k for k, _ in options] != [k for k, _ in page_options]:
            found.append(f"[{name}] options {options} where the page has {page_options}")
            continue
        for (key, value), (_, page_value) in zip(options, page_options, strict=True):
            if value == page_value:
                continue
            scaled = key in SIZES | TIMES and scale != 1
            if scaled and value is not None and page_value is not None:
                problem = _scaled_problem(key, page_value, value, scale, granule)
                if problem:
                    found.append(f"[{name}] {problem}")
            else:
                found.append(f"[{name}] {key}={value} where the page has {key}={page_value}")
    return found


def fio_reads(text: str) -> Sections:
    """The sections of job file ``text`` as fio reads them
    (:func:`volbench.fio.job_text.read_job`), as plain lists."""
    return [(section.name, list(section.options)) for section in read_job(text)]
