"""Option types and the options every command shares (DESIGN.md conventions)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

import click

from volbench.errors import FioError, UsageError
from volbench.fio.executable import fio_engines
from volbench.fio.job import check_engine
from volbench.fio.job_text import control_problem, value_problem
from volbench.fio.stall import DEFAULT_SECONDS
from volbench.report.export import EXPORTERS
from volbench.units import parse_size

F = TypeVar("F", bound=Callable[..., Any])

FORMATS = ("table", *sorted(EXPORTERS))

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|min|h)?\s*$", re.IGNORECASE)
_DURATION_FACTOR = {"ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float:
    """fio-style duration to seconds: ``30`` and ``30s`` are seconds; ms, m, h allowed."""
    match = _DURATION.match(text)
    if not match:
        raise UsageError(f"invalid duration {text!r}: use e.g. 30, 30s, 500ms, 2m or 1h")
    return float(match.group(1)) * _DURATION_FACTOR[(match.group(2) or "s").lower()]


def parse_label(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"invalid label {text!r}: use key=value, e.g. vendor=aliyun")
    problem = control_problem(text)
    if problem:
        raise UsageError(f"invalid label {text!r}: it {problem}")
    return key.strip(), value.strip()


def parse_job_path(text: str) -> str:
    """A file or folder path that will be written into an fio job file: refused when
    fio would read it as another path (:func:`volbench.fio.job_text.value_problem`)."""
    problem = value_problem(text, path=True)
    if problem:
        raise UsageError(f"{text!r} {problem}: give another path")
    return text


def parse_engine(text: str) -> str:
    """An ioengine this machine's fio lists (``fio --enghelp``)."""
    engine = check_engine(text)
    try:
        known = fio_engines()
    except FioError:  # no fio: the run says so in one line before anything starts
        return engine
    if known and engine not in known:
        raise UsageError(
            f"fio has no ioengine {text!r}: use one of `fio --enghelp`, e.g. libaio or psync"
        )
    return engine


class Converted(click.ParamType):  # type: ignore[type-arg]
    """A click type from a parse function that raises UsageError."""

    def __init__(self, name: str, parse: Callable[[str], Any]) -> None:
        self.name = name
        self._parse = parse

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return self._parse(value)
        except UsageError as exc:
            self.fail(str(exc), param, ctx)


def parse_positive_size(text: str) -> int:
    """A size that must be at least one byte (``--size 0`` means nothing to measure)."""
    size = parse_size(text)
    if size <= 0:
        raise UsageError(f"invalid size {text!r}: it must be positive, e.g. 512m or 1g")
    return size


def parse_positive_duration(text: str) -> float:
    """A duration that must be longer than zero (a runtime, not a ramp time)."""
    seconds = parse_duration(text)
    if seconds <= 0:
        raise UsageError(f"invalid duration {text!r}: it must be positive, e.g. 30s")
    return seconds


SIZE = Converted("size", parse_size)
DURATION = Converted("duration", parse_duration)
POSITIVE_SIZE = Converted("size", parse_positive_size)
POSITIVE_DURATION = Converted("duration", parse_positive_duration)
LABEL = Converted("key=value", parse_label)
JOB_PATH = Converted("path", parse_job_path)
ENGINE = Converted("engine", parse_engine)


def runs_dir_option(function: F) -> F:
    """``--runs-dir``: where fio's logs go (the paths are written into job files)."""
    return click.option(
        "--runs-dir", type=JOB_PATH, default=None, metavar="DIR", help="Where fio logs go."
    )(function)


def ioengine_option(function: F) -> F:
    """``--ioengine``: one of ``fio --enghelp``; by default the first that works."""
    return click.option(
        "--ioengine",
        type=ENGINE,
        default=None,
        help="Default: io_uring, else libaio, else psync.",
    )(function)


def db_option(function: F) -> F:
    return click.option(
        "--db",
        envvar="VOLBENCH_DB",
        default=None,
        metavar="URL",
        help="Result store: a SQLite path or URL, or postgresql://... (env VOLBENCH_DB).",
    )(function)


def format_option(function: F) -> F:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMATS),
        default="table",
        show_default=True,
        help="Output format.",
    )(function)


def label_option(function: F) -> F:
    return click.option(
        "--label",
        "labels",
        type=LABEL,
        multiple=True,
        help="Label the run, e.g. --label vendor=aliyun --label size_gib=500.",
    )(function)


def write_options(function: F) -> F:
    """``--destroy-data DEVICE`` (repeatable) and ``--force``: the overrides of the write
    safety checks (:mod:`volbench.targets.safety`)."""
    function = click.option(
        "--force", is_flag=True, help="Overwrite a file volbench did not create."
    )(function)
    return click.option(
        "--destroy-data",
        metavar="DEVICE",
        multiple=True,
        help="Allow writing DEVICE despite its data.",
    )(function)


def stall_options(function: F) -> F:
    """``--stall-seconds N`` and ``--abort-on-stall`` (see :mod:`volbench.fio.stall`)."""
    function = click.option(
        "--abort-on-stall",
        is_flag=True,
        help="End the run at the first stall: finished tests are kept, exit code 3.",
    )(function)
    return click.option(
        "--stall-seconds",
        type=POSITIVE_DURATION,
        default=f"{DEFAULT_SECONDS:g}",
        show_default=True,
        help="Seconds of zero completions with I/O outstanding that make a stall.",
    )(function)
