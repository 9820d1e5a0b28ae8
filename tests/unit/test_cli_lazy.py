"""The command list imports nothing until a command runs, and says what each does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest

from volbench.cli import main
from volbench.cli.lazy import LazyGroup, load

TABLES = {"volbench": main.COMMANDS, "volbench run": main.RUN_COMMANDS}


@pytest.mark.parametrize("group", sorted(TABLES))
def test_each_listed_command_loads_and_its_help_line_is_its_own(group: str) -> None:
    for name, (path, help_line) in TABLES[group].items():
        command = load(path)
        assert command.name == name, path
        assert help_line == command.get_short_help_str(limit=60), f"{group} {name}"


def test_version_and_help_import_no_command_module() -> None:
    """`volbench --version` and `--help` load neither the store, rich, plotly nor a plan."""
    code = (
        "import sys\n"
        "from volbench.cli.main import cli\n"
        "for args in (['--version'], ['--help'], ['run', '--help']):\n"
        "    try:\n"
        "        cli.main(args, standalone_mode=False)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = ('sqlalchemy', 'plotly', 'rich', 'volbench.plans', 'volbench.store')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    out = _python(code)
    assert out.strip().splitlines()[-1] == "[]", out


def test_a_command_runs_from_the_table() -> None:
    group = main.cli
    assert isinstance(group, LazyGroup)
    context = click.Context(group)
    assert group.get_command(context, "show") is load(main.COMMANDS["show"][0])
    assert group.get_command(context, "no-such") is None
    assert group.list_commands(context) == sorted(main.COMMANDS)


@pytest.mark.parametrize("command", ["pts", "run", "show"])
def test_a_command_that_writes_no_page_imports_no_plotly(command: str) -> None:
    """plotly (0.13 s to import) is loaded when a page inlines its script, not by a
    command's module: a `pts` run's start paid for it."""
    code = (
        "import sys\n"
        "from volbench.cli.main import COMMANDS\n"
        "from volbench.cli.lazy import load\n"
        f"load(COMMANDS[{command!r}][0])\n"
        "print(sorted(m for m in sys.modules if m.startswith('plotly')))\n"
    )
    out = _python(code)
    assert out.strip().splitlines()[-1] == "[]", out


def test_the_volbench_process_imports_a_command_uncollected_then_freezes_what_it_made(
    tmp_path: Path,
) -> None:
    """`volbench` itself (main): a command's module is imported with the cycle collector
    paused, what it made is then frozen, and the collector runs again for the command;
    a command loaded inside another process (a test's) leaves its collector alone."""
    (tmp_path / "probe_command.py").write_text(
        "import gc\nimport click\nCOLLECTING = gc.isenabled()\ncommand = click.Command('probe')\n"
    )
    code = (
        "import gc, sys\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "from volbench.cli import lazy, main\n"
        "lazy.load(main.COMMANDS['show'][0])\n"
        "print('GC', gc.isenabled(), gc.get_freeze_count())\n"
        "lazy.settle_imports()\n"
        "lazy.load('probe_command:command')\n"
        "import probe_command\n"
        "print('GC', probe_command.COLLECTING, gc.isenabled(), gc.get_freeze_count() > 10_000)\n"
        "gc.unfreeze()\n"
        "sys.argv = ['volbench', 'pts', '--help']\n"
        "main.main()\n"
        "print('GC', gc.isenabled(), gc.get_freeze_count() > 10_000)\n"
    )
    out = _python(code)
    lines = [line.split()[1:] for line in out.splitlines() if line.startswith("GC ")]
    assert lines == [["True", "0"], ["False", "True", "True"], ["True", "True"]], out


def _python(code: str) -> str:
    """What ``code`` prints, run by this Python in a process of its own."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
