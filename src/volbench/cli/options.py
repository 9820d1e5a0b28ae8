"""Option types and the options every command shares (DESIGN.md conventions)."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import click

from volbench import output_file
from volbench.errors import FioError, UsageError
from volbench.fio.bounds import (
    MAX_BLOCK_SIZE,
    MAX_DURATION_S,
    MAX_IODEPTH,
    MAX_LIST_VALUES,
    MAX_NUMJOBS,
)
from volbench.fio.executable import fio_engines
from volbench.fio.job import check_engine
from volbench.fio.job_text import control_problem, value_problem
from volbench.fio.stall import DEFAULT_SECONDS
from volbench.report.export import EXPORTERS
from volbench.store.limits import LABEL_KEY_CHARS, LABEL_VALUE_CHARS, RUN_ID_MAX, run_number
from volbench.units import parse_size, shown

F = TypeVar("F", bound=Callable[..., Any])

FORMATS = ("table", *sorted(EXPORTERS))

_DURATION = re.compile(r"^\s*(\d{1,40}(?:\.\d{1,40})?)\s*(ms|s|m|min|h)?\s*\Z", re.IGNORECASE)
_DURATION_FACTOR = {"ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}
_COUNT = re.compile(r"^\s*(\d{1,19})\s*\Z")
_NUMBER = re.compile(r"^\s*[+]?(\d{1,40}(?:\.\d{0,40})?|\.\d{1,40})(?:[eE][+-]?\d{1,3})?\s*\Z")


def parse_duration(text: str) -> float:
    """fio-style duration to seconds: ``30`` and ``30s`` are seconds; ms, m, h allowed;
    at most :data:`~volbench.fio.bounds.MAX_DURATION_S` (366 days)."""
    match = _DURATION.match(text)
    if not match:
        raise UsageError(f"invalid duration {shown(text)}: use e.g. 30, 30s, 500ms, 2m or 1h")
    seconds = float(match.group(1)) * _DURATION_FACTOR[(match.group(2) or "s").lower()]
    if seconds > MAX_DURATION_S:
        raise UsageError(
            f"invalid duration {shown(text)}: at most 366 days ({MAX_DURATION_S:,.0f} s)"
        )
    return seconds


def parse_number(text: str, low: float = 0.0, high: float = 1e15, what: str = "number") -> float:
    """A finite decimal number in [``low``, ``high``] (``500``, ``0.25``, ``2e3``):
    ``nan``, ``inf``, ``1e400`` and values out of range are one line."""
    if not _NUMBER.match(text):
        raise UsageError(f"invalid {what} {shown(text)}: use a number, e.g. 500 or 0.25")
    value = float(text)
    if not (math.isfinite(value) and low <= value <= high):
        raise UsageError(f"invalid {what} {shown(text)}: it must be from {low:g} to {high:g}")
    return value


def parse_count_list(text: str, maximum: int) -> tuple[int, ...]:
    """Counts from ``1,2,4``, a doubling range ``1-256`` (1,2,4,...,256) or a linear
    range ``1..4`` (1,2,3,4), or a mix of them separated by commas: each from 1 to
    ``maximum``, at most :data:`~volbench.fio.bounds.MAX_LIST_VALUES` in all (a range
    is refused before it is expanded)."""
    values: list[int] = []
    for part in text.split(","):
        step: Callable[[int], int] | None = None
        low_text = high_text = part
        if ".." in part:
            low_text, _, high_text = part.partition("..")
            step = _next_linear
        elif "-" in part:
            low_text, _, high_text = part.partition("-")
            step = _next_double
        low, high = _count(low_text, text, maximum), _count(high_text, text, maximum)
        if high < low:
            raise UsageError(f"invalid range {shown(part.strip())}: it must go up, e.g. 1-64")
        value: int | None = low
        while value is not None and value <= high:
            if len(values) == MAX_LIST_VALUES:
                raise UsageError(
                    f"invalid list {shown(text)}: more than {MAX_LIST_VALUES} values"
                    " (use a doubling range like 1-4096 or fewer values)"
                )
            values.append(value)
            value = step(value) if step is not None else None
    return tuple(values)


def _next_linear(value: int) -> int:
    return value + 1


def _next_double(value: int) -> int:
    return value * 2


def _count(part: str, text: str, maximum: int) -> int:
    match = _COUNT.match(part)
    if match is None:
        raise UsageError(
            f"invalid list {shown(text)}: use numbers like 1,2,4, a doubling range like"
            " 1-256 or a linear range like 1..4"
        )
    value = int(match.group(1))
    if not 1 <= value <= maximum:
        raise UsageError(f"invalid list {shown(text)}: each value from 1 to {maximum:,}")
    return value


def parse_label(text: str) -> tuple[str, str]:
    """A label ``key=value``: a key of 1 to :data:`~volbench.store.limits.LABEL_KEY_CHARS`
    characters and a value of at most :data:`~volbench.store.limits.LABEL_VALUE_CHARS`
    (what the store keeps and a bundle carries), blanks around each taken off."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"invalid label {shown(text)}: use key=value, e.g. vendor=aliyun")
    problem = control_problem(text)
    if problem:
        raise UsageError(f"invalid label {shown(text)}: it {problem}")
    key, value = key.strip(), value.strip()
    for part, limit, what in ((key, LABEL_KEY_CHARS, "key"), (value, LABEL_VALUE_CHARS, "value")):
        if len(part) > limit:
            raise UsageError(
                f"invalid label {shown(text)}: its {what} is {len(part):,} characters long,"
                f" at most {limit:,} (what the store keeps): shorten it"
            )
    return key, value


def parse_run_ref(text: str) -> str:
    """A RUN: ``latest`` or a run id from 1 to :data:`~volbench.store.limits.RUN_ID_MAX`
    (2^63 - 1, the store's 64-bit ids), checked before any store is opened."""
    if text.strip().lower() == "latest":
        return "latest"
    number = run_number(text)
    if number is None:
        raise UsageError(
            f"invalid run {shown(text)}: give a run id (a whole number from 1 to"
            f" {RUN_ID_MAX:,}) or latest; see volbench runs"
        )
    return str(number)


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
            f"fio has no ioengine {shown(text)}: use one of `fio --enghelp`, e.g. libaio or psync"
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
        raise UsageError(f"invalid size {shown(text)}: it must be positive, e.g. 512m or 1g")
    return size


def parse_block_size(text: str) -> int:
    """A block size: 1 byte to 2 GiB - 4 KiB (the most one Linux read or write moves,
    :data:`~volbench.fio.bounds.MAX_BLOCK_SIZE`)."""
    size = parse_positive_size(text)
    if size > MAX_BLOCK_SIZE:
        raise UsageError(
            f"invalid block size {shown(text)}: at most {MAX_BLOCK_SIZE:,} bytes"
            " (2 GiB - 4 KiB, the most one read or write moves), e.g. 4k or 1m"
        )
    return size


def parse_positive_duration(text: str) -> float:
    """A duration that must be longer than zero (a runtime, not a ramp time)."""
    seconds = parse_duration(text)
    if seconds <= 0:
        raise UsageError(f"invalid duration {shown(text)}: it must be positive, e.g. 30s")
    return seconds


def parse_output_file(text: str) -> str:
    """A file to write (``-``: standard output): never a device, a link or in /dev."""
    return text if text == "-" else str(output_file.check_file(text, "the output file"))


def parse_output_folder(text: str) -> str:
    """A folder to write (made if new): never on the filesystem of devices."""
    return str(output_file.check_folder(text, "the output folder"))


OUTPUT_FILE = Converted("file", parse_output_file)
OUTPUT_FOLDER = Converted("folder", parse_output_folder)
SIZE = Converted("size", parse_size)
DURATION = Converted("duration", parse_duration)
POSITIVE_SIZE = Converted("size", parse_positive_size)
POSITIVE_DURATION = Converted("duration", parse_positive_duration)
BLOCK_SIZE = Converted("size", parse_block_size)
IODEPTHS = Converted("list", partial(parse_count_list, maximum=MAX_IODEPTH))
"""Queue depths: each 1..32,768 (io_uring's most, :mod:`volbench.fio.bounds`)."""
JOB_COUNTS = Converted("list", partial(parse_count_list, maximum=MAX_NUMJOBS))
"""Job (worker) counts: each 1..4,096, fio's most jobs."""
LABEL = Converted("key=value", parse_label)
RUN = Converted("RUN", parse_run_ref)
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


def strict_option(function: F) -> F:
    """``--strict``: exit 1 when a test of the run is marked, its figure not the volume's
    (:mod:`volbench.report.validity_sheets`), for CI."""
    return click.option(
        "--strict",
        is_flag=True,
        help="Exit 1 when a test's figure is not the volume's (a cache answered, another"
        " process used the device, a mixed average, fio short of CPU): for CI.",
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


def grouped(
    name: str, build: Callable[..., Any], params: tuple[str, ...], shared: tuple[str, ...] = ()
) -> Callable[[F], F]:
    """The command's options ``params`` reach it as one argument ``name``: what
    ``build`` makes of them (and of ``shared``, which the command still gets too).
    Put it below every option it groups."""

    def decorate(function: F) -> F:
        @functools.wraps(function)
        def wrapper(**kwargs: Any) -> Any:
            values = {param: kwargs.pop(param) for param in params}
            values.update({param: kwargs[param] for param in shared})
            kwargs[name] = build(**values)
            return function(**kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
