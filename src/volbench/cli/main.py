"""The ``volbench`` command: the explicit list of commands, and the entry point.

Exit codes (DESIGN.md): 0 success, 1 the measured thing failed its check,
2 bad usage or input, 3 the run itself failed, :data:`INTERNAL_ERROR` (70) a bug in
volbench. Errors are one line, never a traceback; only a bug prints one, for its
report. Every command lives in a module of its own and is imported only when it
runs (:mod:`volbench.cli.lazy`): ``volbench --version`` and ``--help`` import none.
"""

from __future__ import annotations

import signal
import sys
import traceback
from typing import TYPE_CHECKING

import click

from volbench import __version__
from volbench.cli.lazy import LazyGroup, settle_imports
from volbench.errors import VolbenchError
from volbench.visible_text import visible

if TYPE_CHECKING:
    from rich.console import Console

INTERNAL_ERROR = 70
"""The exit code of an unexpected error, a bug in volbench: ``EX_SOFTWARE`` of BSD's
sysexits.h ("an internal software error"), never 1 (a check failed), 2 or 3."""

RUN_COMMANDS = {
    "quick": (
        "volbench.cli.quick:run_quick",
        "The quick profile (UCloud RSSD post): 4k random IOPS, 16k...",
    ),
    "sweep": (
        "volbench.cli.sweep:command",
        "Sweep queue depth x jobs: IOPS, latency, the saturation...",
    ),
    "iometer": (
        "volbench.cli.iometer:command",
        "Run access specs with 1..N workers: IOPS, MB/s, average...",
    ),
    "scan": (
        "volbench.cli.hdtune:scan",
        "Transfer rate across the whole target, access time and...",
    ),
    "filebench": (
        "volbench.cli.hdtune:filebench",
        "The EC2/Azure article's file benchmark: sequential KB/s,...",
    ),
    "firsttouch": (
        "volbench.cli.hdtune:firsttouch",
        "Read a never-read region twice: the initialization...",
    ),
    "limits": (
        "volbench.cli.limits:command",
        "What limits this volume: IOPS and MB/s caps per direction...",
    ),
    "replay": (
        "volbench.cli.workload:replay_command",
        "Replay a captured workload on a target: the exact trace...",
    ),
    "job": (
        "volbench.cli.job:command",
        "Run your own fio job files as fio would: each group of...",
    ),
    "recipe": (
        "volbench.cli.recipe:command",
        "The clouds' own fio benchmark recipes: --list, NAME, NAME...",
    ),
}
"""``volbench run PLAN``: plan -> (its command, its help line)."""

COMMANDS = {
    "run": (
        "volbench.cli.main:run",
        "Run a test plan against a target (a file or a block device).",
    ),
    "runs": ("volbench.cli.runs:runs", "List stored runs, the one added last (`latest`) first."),
    "show": ("volbench.cli.runs:show", "Show one run's results (RUN is an id or `latest`)."),
    "export": (
        "volbench.cli.runs:export_run",
        "Export runs as one bundle (FILE.vbundle: everything...",
    ),
    "import": (
        "volbench.cli.runs:import_",
        "Import fio JSON output files (any fio, client/server too)...",
    ),
    "label": (
        "volbench.cli.runs:label",
        "Add, change or remove a stored run's labels (for compare...",
    ),
    "delete": ("volbench.cli.runs:delete", "Delete one stored run and its results."),
    "resume": (
        "volbench.cli.resume:command",
        "Continue an interrupted or killed run from its last...",
    ),
    "explain": (
        "volbench.cli.explain:command",
        "What limited each test of RUN: host CPU, queue, rate...",
    ),
    "report": (
        "volbench.cli.report:report",
        "Write a report of one or more runs: charts and tables, as...",
    ),
    "compare": (
        "volbench.cli.report:compare",
        "Compare runs: each metric's values and % difference...",
    ),
    "publish": (
        "volbench.cli.publish:command",
        "Write runs as a static site in DIR: an index to filter...",
    ),
    "check": (
        "volbench.cli.check:command",
        "Measured vs promised for each test of RUN (exit 1 if any...",
    ),
    "fingerprint": (
        "volbench.cli.fingerprint:command",
        "Detect a rate limiter from runs of one workload at...",
    ),
    "spec": (
        "volbench.cli.spec:command",
        "The vendor catalogue: promised IOPS, throughput, latency...",
    ),
    "cost": (
        "volbench.cli.spec:cost_command",
        "Cost of PRODUCT at --size over a period, per currency and...",
    ),
    "pts": (
        "volbench.cli.pts:pts",
        "SNIA PTS, the Performance Test Specification: TEST is...",
    ),
    "pts-report": (
        "volbench.cli.pts:pts_report",
        "The PTS report of a run: result tables per test and the...",
    ),
    "qos": (
        "volbench.cli.qos:qos",
        "Per-tenant I/O QoS: C' = (C - C0) x (1 - alpha) x V'/Va...",
    ),
    "capture": (
        "volbench.cli.workload:capture_command",
        "Trace the block I/O the running applications issue on...",
    ),
    "workload": (
        "volbench.cli.workload:workload_command",
        "Characterise a captured workload (NAME, a run id or...",
    ),
    "lab": ("volbench.cli.lab:lab", "QEMU guests with cloud-like disk limits, reached as..."),
    "agent": (
        "volbench.cli.agent:command",
        "Serve fio to a volbench controller (`fio --server`), or...",
    ),
}
"""``volbench COMMAND``: command -> (its command, its help line)."""


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="volbench")
def cli() -> None:
    """Block-storage benchmarking with fio: run test plans, store and compare results."""


@click.group(cls=LazyGroup, lazy=RUN_COMMANDS)
def run() -> None:
    """Run a test plan against a target (a file or a block device)."""


def _stderr() -> Console:
    """The error stream (rich is imported only when there is something to print)."""
    from volbench.cli import console

    return console.stderr


def main() -> None:
    """Entry point: run the CLI, turning volbench errors into one line and an exit code.

    SIGTERM and SIGHUP are handled like Ctrl-C: the first one raises KeyboardInterrupt
    in the command, so its cleanup runs (fio stopped, the run stored as interrupted,
    cgroups removed), then volbench exits with 128 + the signal's number (143 for
    SIGTERM). Further ones are ignored while that cleanup runs. Any other exception is
    a bug: its traceback, then one line saying so, exit :data:`INTERNAL_ERROR`."""
    received: list[int] = []

    def terminate(signum: int, _frame: object) -> None:
        if not received:
            received.append(signum)
            raise KeyboardInterrupt

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, terminate)
    settle_imports()
    try:
        cli.main(standalone_mode=False)
    except VolbenchError as exc:
        _stderr().print(f"volbench: error: {visible(str(exc))}", markup=False, highlight=False)
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:  # click's form of KeyboardInterrupt
        if received:
            _stderr().print(f"terminated by {signal.Signals(received[0]).name}")
            sys.exit(128 + received[0])
        _stderr().print("aborted")
        sys.exit(130)
    except click.exceptions.NoArgsIsHelpError as exc:  # `volbench` alone: the help text
        exc.show()
        sys.exit(exc.exit_code)
    except click.UsageError as exc:  # one line, like every other error
        hint = f" (see {exc.ctx.command_path} --help)" if exc.ctx is not None else ""
        _stderr().print(
            f"volbench: error: {visible(exc.format_message())}{hint}",
            markup=False,
            highlight=False,
        )
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        if received:
            _stderr().print(f"terminated by {signal.Signals(received[0]).name}")
            sys.exit(128 + received[0])
        _stderr().print("interrupted")
        sys.exit(130)
    except OSError as exc:
        _stderr().print(
            "volbench: error: " + visible(f"{exc.strerror or exc}: {exc.filename or ''}"),
            markup=False,
            highlight=False,
        )
        sys.exit(2)
    except Exception as exc:  # a bug: its traceback is what a report needs
        traceback.print_exc()
        what = visible(f"{type(exc).__name__}: {exc}")
        _stderr().print(
            f"volbench: internal error (a bug in volbench, exit {INTERNAL_ERROR}):"
            f" {what[:300]}; please report it with the traceback above",
            markup=False,
            highlight=False,
        )
        sys.exit(INTERNAL_ERROR)
