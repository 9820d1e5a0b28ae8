"""The options of ``volbench pts`` that shape the PTS plan, given to the command as one
:class:`~volbench.plans.pts.options.PtsOptions` built from them and its TEST names:
the profile, queue, cells and rounds every test reads, and each test's own options,
made from what the tests declare (:mod:`volbench.plans.pts.declared`) and listed in
``volbench pts --help`` under their tests."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click

from volbench.cli.options import POSITIVE_DURATION
from volbench.plans.pts import catalog, declared
from volbench.plans.pts.declared import Declared
from volbench.plans.pts.options import (
    CELL_SECONDS,
    MAX_ROUNDS,
    PROFILES,
    build,
    own_kinds,
    parse_tests,
)

F = TypeVar("F", bound=Callable[..., Any])

_COMMON = (
    click.option("--profile", type=click.Choice(sorted(PROFILES)), default="enterprise"),
    click.option("--threads", type=click.IntRange(1, 256), default=None, help="TC (profile: 4/2)."),
    click.option(
        "--iodepth", type=click.IntRange(1, 4096), default=None, help="QD (profile: 32/16)."
    ),
    click.option("--active-range", type=click.IntRange(1, 100), default=None, help="Percent."),
    click.option(
        "--cell-seconds",
        type=POSITIVE_DURATION,
        default=f"{CELL_SECONDS:g}",
        help="Not 60: non-compliant.",
    ),
    click.option(
        "--max-rounds",
        type=click.IntRange(1, 1000),
        default=MAX_ROUNDS,
        show_default=True,
        help="Steady-state rounds per test at most.",
    ),
)
_COMMON_NAMES = ("profile", "threads", "iodepth", "active_range", "cell_seconds", "max_rounds")


class TestOption(click.Option):
    """An option a PTS test declares, shown under ``group`` (its tests) in the help."""

    def __init__(self, *args: Any, group: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.group = group


class PtsCommand(click.Command):
    """``volbench pts``: its help lists the tests' own options under each test."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        groups: dict[str, list[tuple[str, str]]] = {"": []}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx) if isinstance(param, click.Option) else None
            if record is not None:
                groups.setdefault(getattr(param, "group", ""), []).append(record)
        for group, records in groups.items():
            with formatter.section(f"{group} options" if group else "Options"):
                formatter.write_dl(records)


def _click_option(field_type: Any, option: Declared, default: Any, group: str) -> Any:
    """The command's option for one declared field: an integer in its bounds, or text
    its parser reads after click (so its UsageError is the one line it always was)."""
    text = f"{option.help} From {option.source}."
    if field_type is not int:
        shown = option.shown or str(default)
        return click.option(
            option.flag, cls=TestOption, group=group, default=None, help=f"{text} [all: {shown}]"
        )
    return click.option(
        option.flag,
        cls=TestOption,
        group=group,
        type=click.IntRange(option.low, option.high),
        default=default,
        show_default=True,
        help=text,
    )


def _declared() -> list[tuple[Declared, Any]]:
    """(declaration, option decorator) of every option the tests declare, in the
    order of their tests in the table."""
    found = []
    for kind in catalog.own_kinds():
        types = declared.field_types(kind)
        defaults = kind()
        group = kind.TITLE or kind.__name__
        for name, option in declared.declarations(kind):
            found.append(
                (option, _click_option(types[name], option, getattr(defaults, name), group))
            )
    return found


def _values(given: dict[str, Any]) -> dict[str, Any]:
    """The values given of the tests' options, by key: text parsed by its test's
    parser (in the order the records are stored, as volbench always checked them)."""
    values: dict[str, Any] = {}
    for kind in own_kinds():
        for _, option in declared.declarations(kind):
            value = given.get(option.key)
            if value is None or value == "":
                continue
            values[option.key] = option.parse(value) if option.parse else value
    return values


def pts_plan_options(function: F) -> F:
    """Add the plan's options, the tests' own as they declare them (at the time of
    the call: :data:`volbench.plans.pts.catalog.TESTS`); the command gets
    ``options`` (a PtsOptions of its ``tests``, ``--no-purge`` and ``--ioengine``
    too) instead of them."""
    made = _declared()
    keys = [option.key for option, _ in made]

    @functools.wraps(function)
    def wrapper(**kwargs: Any) -> Any:
        common = {name: kwargs.pop(name) for name in _COMMON_NAMES}
        given = {key: kwargs.pop(key) for key in keys}
        kwargs["options"] = build(
            parse_tests(kwargs.pop("tests")),
            common["profile"],
            common["threads"],
            common["iodepth"],
            common["active_range"],
            cell_seconds=common["cell_seconds"],
            max_rounds=common["max_rounds"],
            purge=not kwargs.pop("no_purge"),
            ioengine=kwargs["ioengine"],
            **_values(given),
        )
        return function(**kwargs)

    decorated: Any = wrapper
    for decorate in reversed([*_COMMON, *(option for _, option in made)]):
        decorated = decorate(decorated)
    return click.option("--no-purge", is_flag=True, help="Skip the purge (non-compliant).")(  # type: ignore[no-any-return]
        decorated
    )
