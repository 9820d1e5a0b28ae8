"""``volbench publish``: stored runs as a static site (:mod:`volbench.report.publish`)."""

from __future__ import annotations

from pathlib import Path

import click

from volbench import output_file
from volbench.cli import console
from volbench.cli.options import LABEL, OUTPUT_FOLDER, RUN, db_option
from volbench.cli.spec import catalogue_option
from volbench.errors import UsageError
from volbench.model import RunRecord, RunStatus
from volbench.report.publish import Bundles, site_files
from volbench.report.publish_index import GENERATOR
from volbench.report.validity_sheets import Verdicts
from volbench.specs import catalogue
from volbench.store.repository import Store
from volbench.views import view
from volbench.volume_limits import volume_caps
from volbench.volume_writes import with_history


def _chosen(store: Store, refs: tuple[str, ...], labels: dict[str, str]) -> list[RunRecord]:
    """The runs named (in that order), else every run with the labels (the one added last first);
    both: the named runs that have the labels."""
    if refs:
        ids = list(dict.fromkeys(store.resolve(ref) for ref in refs))
    else:
        ids = [run.id for run in store.list_runs(labels=labels)]
    runs = [store.get_run(run_id) for run_id in ids]
    return [r for r in runs if all(r.labels.get(k) == v for k, v in labels.items())]


def _check_folder(folder: Path) -> None:
    """Refuse a folder whose index.html another program wrote (publish replaces its own)."""
    index = folder / "index.html"
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"cannot publish to {folder}: it is a file, not a folder")
    if index.exists() and GENERATOR not in index.read_text(errors="replace")[:2000]:
        raise UsageError(
            f"{index} was not written by volbench publish: choose an empty folder or one"
            " volbench published to before"
        )


def _bundles() -> Bundles:
    """How each run is offered to download: as a bundle of ``volbench export``, which
    ``volbench import`` reads back into any store."""
    from volbench.store import bundle

    return Bundles(bundle.dump, bundle.SUFFIX)


@click.command("publish")
@click.argument("run_refs", metavar="[RUN...]", nargs=-1, type=RUN)
@click.option(
    "--label",
    "labels",
    type=LABEL,
    multiple=True,
    help="The runs with this KEY=VALUE (repeatable: every one must match).",
)
@click.option(
    "-o", "--output", type=OUTPUT_FOLDER, required=True, metavar="DIR", help="The folder to write."
)
@click.option(
    "--by",
    "groupings",
    multiple=True,
    metavar="LABEL[,LABEL]",
    help="A comparison page of the runs grouped by these labels' values, per plan"
    " (repeatable), e.g. --by vendor --by vendor,size_gib.",
)
@catalogue_option
@db_option
def command(
    run_refs: tuple[str, ...],
    labels: tuple[tuple[str, str], ...],
    output: str,
    groupings: tuple[str, ...],
    catalogue_files: tuple[str, ...],
    db: str | None,
) -> None:
    """Write runs as a static site in DIR: an index to filter and sort by label, each
    run's report and bundle to download, comparisons (--by). Open DIR/index.html, or
    serve DIR with any static web server: it loads nothing from anywhere else."""
    if not run_refs and not labels:
        raise UsageError("choose the runs to publish: RUN... or --label KEY=VALUE")
    by = [tuple(k.strip() for k in g.split(",") if k.strip()) for g in groupings]
    if any(not keys for keys in by):
        raise UsageError("--by needs label keys, e.g. --by vendor or --by vendor,size_gib")
    folder = Path(output)
    _check_folder(folder)
    with Store.open(db, create=False) as store:
        verdicts = Verdicts()
        chosen = [with_history(store, r, verdicts) for r in _chosen(store, run_refs, dict(labels))]
        caps = volume_caps(store, chosen)
    running = [r.id for r in chosen if r.status is RunStatus.RUNNING]
    runs = [r for r in chosen if r.status is not RunStatus.RUNNING]
    if not runs:
        raise UsageError(
            "no finished run to publish"
            + (f" (run {', '.join(map(str, running))} still running)" if running else "")
            + (f" with {' '.join(f'{k}={v}' for k, v in labels)}" if labels else "")
        )
    with catalogue.using(catalogue_files):
        files = site_files(runs, view, by, _bundles(), caps, verdicts)
    for name, data in files.items():
        path = folder / name
        output_file.check_folder(path.parent, "the site's folder")
        path.parent.mkdir(parents=True, exist_ok=True)
        output_file.write_bytes(path, data, "a page of the site")
    if running:
        console.stderr.print(f"left out run {', '.join(map(str, running))}: still running")
    pages = sum(1 for name in files if name.startswith("compare/"))
    console.stderr.print(
        f"published {len(runs)} run(s) and {pages} comparison page(s) to {folder}/: open"
        f" {folder / 'index.html'} in a browser, or serve {folder} with any static web server"
    )
