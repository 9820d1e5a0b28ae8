"""The ``volbench`` command: thin commands that call one service and render.

Exit codes (DESIGN.md): 0 success, 1 the measured thing failed its check,
2 bad usage or input, 3 the run itself failed. Errors are one line, never a
traceback.
"""

from __future__ import annotations

import signal
import sys
import unicodedata
from pathlib import Path

import click

from volbench import __version__
from volbench.cli import console, hdtune, iometer, sweep
from volbench.cli.options import (
    DURATION,
    LABEL,
    POSITIVE_DURATION,
    db_option,
    format_option,
    label_option,
)
from volbench.cli.plan_run import TargetChoice, run_plan, target_options
from volbench.errors import UsageError, VolbenchError
from volbench.model import RunStatus
from volbench.plans import quick
from volbench.plans.importing import import_path
from volbench.plans.registry import report_for, summary_for
from volbench.report.run_sheets import runs_sheet
from volbench.store import bundle
from volbench.store.repository import Store

DEFAULT_TARGET = "volbench-work/scratch.img"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="volbench")
def cli() -> None:
    """Block-storage benchmarking with fio: run test plans, store and compare results."""


@cli.group()
def run() -> None:
    """Run a test plan against a target (a file or a block device)."""


@run.command("quick")
@click.option(
    "--runtime", type=POSITIVE_DURATION, default="30s", show_default=True, help="Per test."
)
@click.option("--ramp-time", type=DURATION, default="2s", show_default=True, help="Per test.")
@click.option(
    "--iodepth", type=click.IntRange(1, 65536), default=None, help="Deep tests.  [default: 64]"
)
@click.option(
    "--numjobs", type=click.IntRange(1, 4096), default=None, help="Deep tests.  [default: 1]"
)
@click.option(
    "--profile",
    type=click.Choice(quick.PROFILES),
    default="default",
    show_default=True,
    help="default: the UCloud RSSD post's six tests; diskmark: CrystalDiskMark's layout"
    " (SEQ 1 MiB Q8T1 and Q1T1, RND 4 KiB Q32T1 and Q1T1, read and write).",
)
@target_options
def run_quick(
    runtime: float,
    ramp_time: float,
    iodepth: int | None,
    numjobs: int | None,
    profile: str,
    choice: TargetChoice,
) -> None:
    """The quick profile (UCloud RSSD post): 4k random IOPS, 16k throughput, 4k QD1
    latency; or --profile diskmark."""
    if profile == "diskmark" and (iodepth is not None or numjobs is not None):
        raise UsageError("--profile diskmark sets its own queue depths and threads")
    options = quick.QuickOptions(
        runtime_s=runtime,
        ramp_time_s=ramp_time,
        size_bytes=choice.size,
        iodepth=iodepth or 64,
        numjobs=numjobs or 1,
        ioengine=choice.ioengine,
        profile=profile,
    )
    run_plan(choice, quick.plan(options))


@cli.command("runs")
@click.option("--label", "labels", type=LABEL, multiple=True, help="Only runs with this key=value.")
@click.option("--plan", default=None, help="Only runs of this plan.")
@click.option("--status", type=click.Choice([s.value for s in RunStatus]), default=None)
@click.option("--limit", type=click.IntRange(1), default=None)
@db_option
@format_option
def runs(
    labels: tuple[tuple[str, str], ...],
    plan: str | None,
    status: str | None,
    limit: int | None,
    db: str | None,
    fmt: str,
) -> None:
    """List stored runs, newest first."""
    with Store.open(db, create=False) as store:
        found = store.list_runs(
            labels=dict(labels),
            plan=plan,
            status=RunStatus(status) if status else None,
            limit=limit,
        )
        briefs = {r.id: summary_for(store.get_run(r.id, raw=False), check=False).brief()
                  for r in found}  # fmt: skip
    console.show(runs_sheet(found, briefs), fmt)


@cli.command("show")
@click.argument("run_ref", metavar="RUN")
@db_option
@format_option
def show(run_ref: str, db: str | None, fmt: str) -> None:
    """Show one run's results (RUN is an id or `latest`)."""
    with Store.open(db, create=False) as store:
        sheets, document = report_for(store.get_run(run_ref))
    console.show_report(sheets, document, fmt)


@cli.command("export")
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["bundle", "json", "csv", "markdown"]),
    default=None,
    help="bundle: whole runs, for `volbench import` into another store (the default"
    f" when -o ends in {bundle.SUFFIX}); json (the default otherwise, fio's raw output"
    " included), csv or markdown: one run's results, to read.",
)
@click.option("-o", "--output", default=None, help="File to write (default: stdout).")
@db_option
def export_run(
    run_refs: tuple[str, ...], fmt: str | None, output: str | None, db: str | None
) -> None:
    """Export runs as one bundle (FILE.vbundle: everything stored of them, for `volbench
    import` into another store), or one run's results as JSON, CSV or Markdown."""
    if fmt is None:
        fmt = "bundle" if (output or "").lower().endswith(bundle.SUFFIX) else "json"
    if fmt != "bundle" and len(run_refs) > 1:
        raise UsageError(
            f"--format {fmt} shows one run: export several runs as one bundle"
            f" (-o FILE{bundle.SUFFIX})"
        )
    if fmt == "bundle" and output in (None, "-") and sys.stdout.isatty():
        raise UsageError(f"a bundle is binary: write it to a file with -o FILE{bundle.SUFFIX}")
    with Store.open(db, create=False) as store:
        if fmt != "bundle":
            sheets, document = report_for(store.get_run(run_refs[0]))
            console.show_report(sheets, document, fmt, output)
            return
        ids = list(dict.fromkeys(store.resolve(ref) for ref in run_refs))
        runs = [store.get_run(run_id) for run_id in ids]
    data = bundle.dump(runs)
    for run in runs:
        console.stderr.print(
            f"exported run {run.id}: {run.plan}, {run.status.value}, started {run.started_at}"
            f" (uuid {run.uuid})"
        )
    console.write_output(data, output)


@cli.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@label_option
@db_option
@format_option
def import_(
    files: tuple[str, ...], labels: tuple[tuple[str, str], ...], db: str | None, fmt: str
) -> None:
    """Import fio JSON output files (any fio, client/server too) as runs, bundles that
    `volbench export` wrote (each run once: a run is known by its UUID), and blkparse
    output of blktrace captures as captured workloads (named after the file)."""
    with Store.open(db) as store:
        ids = []
        for name in files:
            path = Path(name)
            if not path.is_file():
                raise UsageError(f"cannot import {name}: no such file")
            for received in import_path(store, path, dict(labels)):
                console.stderr.print(_received(name, received))
                ids.append(received.run_id)
                if received.bundled is None:  # a fio output: what its import noted
                    _print_notes(name, store.get_run(str(received.run_id), raw=False).error)
        found = [store.get_run(str(i), raw=False) for i in dict.fromkeys(ids)]
        console.show(runs_sheet(found), fmt)


def _print_notes(name: str, notes: str | None) -> None:
    """The notes stored with a fio output's run (the file yields no result, ...)."""
    if notes:
        style = "bold yellow" if "warning" in notes else None
        console.stderr.print(f"{name}: {notes}", style=style)


def _received(name: str, received: bundle.Received) -> str:
    """One line on one imported run: added, or already in the store."""
    run = received.bundled
    if run is None:
        return f"imported {name} as run {received.run_id}"
    what = f"{run.plan}, {run.status.value}, started {run.started_at}"
    if received.added:
        return f"added run {received.run_id}: {what} (exported as run {run.id}; uuid {run.uuid})"
    line = f"already had run {received.run_id}: {what} (uuid {run.uuid}), not added again"
    if received.had is not None and received.had != (run.status, len(run.rounds)):
        status, count = received.had
        line += (
            f"; here it is {status.value} with {count} rounds, in {name} {run.status.value}"
            f" with {len(run.rounds)}: `volbench delete {received.run_id}` first to import"
            " the bundle's"
        )
    return line


@cli.command("label")
@click.argument("run_ref", metavar="RUN")
@click.argument("labels", metavar="KEY=VALUE...", type=LABEL, nargs=-1)
@click.option("--remove", multiple=True, metavar="KEY", help="Remove this label (repeatable).")
@db_option
def label(
    run_ref: str, labels: tuple[tuple[str, str], ...], remove: tuple[str, ...], db: str | None
) -> None:
    """Add, change or remove a stored run's labels (for compare --by, check, runs)."""
    if not labels and not remove:
        raise UsageError("give KEY=VALUE labels to set or --remove KEY")
    with Store.open(db, create=False) as store:
        run_id = store.set_labels(run_ref, dict(labels), remove)
        now = store.get_run(run_id).labels
    shown = " ".join(f"{k}={v}" for k, v in sorted(now.items())) or "none"
    console.stderr.print(f"run {run_id} labels: {shown}")


@cli.command("delete")
@click.argument("run_ref", metavar="RUN")
@click.option("--yes", is_flag=True, help="Do not ask.")
@db_option
def delete(run_ref: str, yes: bool, db: str | None) -> None:
    """Delete one stored run and its results."""
    with Store.open(db, create=False) as store:
        run_id = store.resolve(run_ref)
        if not yes and sys.stdin.isatty():
            click.confirm(f"delete run {run_id}?", abort=True)
        store.delete_run(str(run_id))
    console.stderr.print(f"deleted run {run_id}")


# Commands defined in their own modules register here, one line each.
from volbench.cli import agent as agent_command  # noqa: E402
from volbench.cli import check as check_command  # noqa: E402
from volbench.cli import fingerprint as fingerprint_command  # noqa: E402
from volbench.cli import spec as spec_commands  # noqa: E402

cli.add_command(agent_command.command)
cli.add_command(spec_commands.command)
cli.add_command(spec_commands.cost_command)
cli.add_command(check_command.command)
from volbench.cli import explain as explain_command  # noqa: E402

cli.add_command(explain_command.command)
cli.add_command(fingerprint_command.command)
from volbench.cli import resume as resume_command  # noqa: E402
from volbench.cli.pts import pts, pts_report  # noqa: E402

cli.add_command(pts)
cli.add_command(resume_command.command)
cli.add_command(pts_report)
from volbench.cli.qos import qos  # noqa: E402

cli.add_command(qos)
from volbench.cli.report import compare, report  # noqa: E402

cli.add_command(report)
cli.add_command(compare)
from volbench.cli import publish as publish_command  # noqa: E402

cli.add_command(publish_command.command)
run.add_command(sweep.command)
run.add_command(iometer.command)
run.add_command(hdtune.scan)
run.add_command(hdtune.filebench)
run.add_command(hdtune.firsttouch)
from volbench.cli import workload as workload_commands  # noqa: E402

cli.add_command(workload_commands.capture_command)
cli.add_command(workload_commands.workload_command)
run.add_command(workload_commands.replay_command)


def one_line(message: str) -> str:
    """``message`` with every line break and control character shown as its escape
    (``\\n``, ``\\x00``): an error is one line, whatever text the user gave."""
    return "".join(
        char.encode("unicode_escape").decode("ascii")
        if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp")
        else char
        for char in message
    )


def main() -> None:
    """Entry point: run the CLI, turning volbench errors into one line and an exit code.

    SIGTERM and SIGHUP are handled like Ctrl-C: the first one raises KeyboardInterrupt
    in the command, so its cleanup runs (fio stopped, the run stored as interrupted,
    cgroups removed), then volbench exits with 128 + the signal's number (143 for
    SIGTERM). Further ones are ignored while that cleanup runs."""
    received: list[int] = []

    def terminate(signum: int, _frame: object) -> None:
        if not received:
            received.append(signum)
            raise KeyboardInterrupt

    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, terminate)
    try:
        cli.main(standalone_mode=False)
    except VolbenchError as exc:
        console.stderr.print(
            f"volbench: error: {one_line(str(exc))}", markup=False, highlight=False
        )
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:  # click's form of KeyboardInterrupt
        if received:
            console.stderr.print(f"terminated by {signal.Signals(received[0]).name}")
            sys.exit(128 + received[0])
        console.stderr.print("aborted")
        sys.exit(130)
    except click.exceptions.NoArgsIsHelpError as exc:  # `volbench` alone: the help text
        exc.show()
        sys.exit(exc.exit_code)
    except click.UsageError as exc:  # one line, like every other error
        hint = f" (see {exc.ctx.command_path} --help)" if exc.ctx is not None else ""
        console.stderr.print(
            f"volbench: error: {one_line(exc.format_message())}{hint}",
            markup=False,
            highlight=False,
        )
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        if received:
            console.stderr.print(f"terminated by {signal.Signals(received[0]).name}")
            sys.exit(128 + received[0])
        console.stderr.print("interrupted")
        sys.exit(130)
    except OSError as exc:
        console.stderr.print(
            "volbench: error: " + one_line(f"{exc.strerror or exc}: {exc.filename or ''}"),
            markup=False,
            highlight=False,
        )
        sys.exit(2)
