"""Command groups whose subcommands are imported only when they run.

``volbench --version`` and ``volbench --help`` import no command module (the
store, plotly and fio code take a second or two to import); ``volbench show 3``
imports the module of ``show`` alone. A group lists its commands explicitly:
name -> (``module:attribute``, the one-line help shown in ``--help``). The help
line is written in the table so that listing commands imports nothing;
``tests/unit/test_cli_lazy.py`` checks it equals each command's own short help.
Pattern: click's documentation, "Lazily Loading Subcommands".
"""

from __future__ import annotations

import gc
import importlib
from collections.abc import Mapping

import click


class LazyGroup(click.Group):
    """A click group over a table of lazily imported commands."""

    def __init__(self, *args: object, lazy: Mapping[str, tuple[str, str]], **kwargs: object):
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy = dict(lazy)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy:
            return load(self.lazy[cmd_name][0])
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands and their help lines, from the table (nothing is imported)."""
        rows = []
        for name in self.list_commands(ctx):
            if name in self.lazy:
                rows.append((name, self.lazy[name][1]))
                continue
            command = super().get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(formatter.width)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def load(path: str) -> click.Command:
    """The command at ``module:attribute`` (imported as :func:`settle_imports` says)."""
    module, _, attribute = path.partition(":")
    paused = _SETTLING[0] and gc.isenabled()
    if paused:
        gc.disable()
    try:
        command = getattr(importlib.import_module(module), attribute)
    finally:
        if paused:
            gc.freeze()
            gc.enable()
    if not isinstance(command, click.Command):
        raise TypeError(f"{path} is not a click command")
    return command


_SETTLING = [False]
"""Whether :func:`settle_imports` was called: this process is ``volbench`` itself."""


def settle_imports() -> None:
    """From now on (the ``volbench`` process: :func:`volbench.cli.main.main`, not a test
    that runs commands in its own), a command's modules are imported with the cycle
    collector paused, and what they made is then frozen (Python's ``gc.freeze``: "move
    them to a permanent generation and ignore them in all the future collections").
    They make some 10^5 objects that live as long as the process: each collection
    while they are imported walks them in vain, and each full one during a run would
    walk them again (`volbench pts --help`: 0.71 -> 0.55 s of CPU, bench/startup.py in
    BENCHMARKS.md)."""
    _SETTLING[0] = True
