"""The commands over stored runs: runs, show, export, import, label, delete."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from volbench.cli import console
from volbench.cli.options import (
    LABEL,
    OUTPUT_FILE,
    RUN,
    db_option,
    format_option,
    label_option,
)
from volbench.cli.spec import catalogue_option
from volbench.errors import UsageError
from volbench.model import RunStatus
from volbench.plans.imported.importing import import_path
from volbench.plans.kinds import check_setup
from volbench.report.run_list import runs_sheet
from volbench.report.validity_sheets import Verdicts
from volbench.specs import catalogue
from volbench.store import bundle
from volbench.store.repository import Store
from volbench.views import report_for, summary_for
from volbench.volume_limits import caps_of
from volbench.volume_writes import with_history


@click.command("runs")
@click.option("--label", "labels", type=LABEL, multiple=True, help="Only runs with this key=value.")
@click.option("--plan", default=None, help="Only runs of this plan.")
@click.option("--status", type=click.Choice([s.value for s in RunStatus]), default=None)
@click.option("--limit", type=click.IntRange(1, 1_000_000), default=None)
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
    """List stored runs, the one added last (`latest`) first."""
    with Store.open(db, create=False) as store:
        found = store.list_runs(
            labels=dict(labels),
            plan=plan,
            status=RunStatus(status) if status else None,
            limit=limit,
        )
        briefs = {
            r.id: summary_for(store.get_run(r.id, raw=False), check=False).brief() for r in found
        }
    console.show(runs_sheet(found, briefs), fmt)


@click.command("show")
@click.argument("run_ref", metavar="RUN", type=RUN)
@catalogue_option
@db_option
@format_option
def show(run_ref: str, catalogue_files: tuple[str, ...], db: str | None, fmt: str) -> None:
    """Show one run's results (RUN is an id or `latest`).

    Checked against the promise of the product its labels name (a user's product:
    --catalogue FILE)."""
    with Store.open(db, create=False) as store:
        verdicts = Verdicts()
        run = with_history(store, store.get_run(run_ref), verdicts)
        caps = caps_of(store, run)
    with catalogue.using(catalogue_files):
        sheets, document = report_for(run, caps, verdicts)
    console.show_report(sheets, document, fmt)


@click.command("export")
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True, type=RUN)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["bundle", "json", "csv", "markdown"]),
    default=None,
    help="bundle: whole runs, for `volbench import` into another store (the default"
    " with -o FILE, whatever its name); json (the default on stdout, fio's raw output"
    " included), csv or markdown: one run's results, to read.",
)
@click.option(
    "-o", "--output", type=OUTPUT_FILE, default=None, help="File to write (default: stdout)."
)
@db_option
def export_run(
    run_refs: tuple[str, ...], fmt: str | None, output: str | None, db: str | None
) -> None:
    """Export runs as one bundle (FILE.vbundle: everything stored of them, for `volbench
    import` into another store), or one run's results as JSON, CSV or Markdown."""
    if fmt is None:  # a file, whatever its name, is what import takes back
        fmt = "json" if output in (None, "-") else "bundle"
    if fmt != "bundle" and len(run_refs) > 1:
        raise UsageError(
            f"--format {fmt} shows one run: export several runs as one bundle"
            f" (-o FILE{bundle.SUFFIX})"
        )
    if fmt == "bundle" and output in (None, "-") and sys.stdout.isatty():
        raise UsageError(f"a bundle is binary: write it to a file with -o FILE{bundle.SUFFIX}")
    with Store.open(db, create=False) as store:
        if fmt != "bundle":
            verdicts = Verdicts()
            run = with_history(store, store.get_run(run_refs[0]), verdicts)
            sheets, document = report_for(run, caps_of(store, run), verdicts)
            console.show_report(sheets, document, fmt, output)
            return
        ids = list(dict.fromkeys(store.resolve(ref) for ref in run_refs))
        runs = [store.get_run(run_id) for run_id in ids]
    console.write_output(bundle.dump(runs), output)  # a folder missing: one line, first
    for run in runs:
        console.stderr.print(
            f"exported run {run.id}: {run.plan}, {run.status.value}, started {run.started_at}"
            f" (uuid {run.uuid})"
        )


@click.command("import")
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
            for received in import_path(store, path, dict(labels), check_setup):
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


@click.command("label")
@click.argument("run_ref", metavar="RUN", type=RUN)
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


@click.command("delete")
@click.argument("run_ref", metavar="RUN", type=RUN)
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
