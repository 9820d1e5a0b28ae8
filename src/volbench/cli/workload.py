"""``volbench capture``, ``volbench workload`` and ``volbench run replay``: the user's own
workload traced, characterised and replayed on candidate volumes."""

from __future__ import annotations

import dataclasses
import time
import uuid
from pathlib import Path

import click

from volbench.analysis.workload_fit import fit
from volbench.analysis.workload_profile import characterise
from volbench.cli import console
from volbench.cli.options import (
    POSITIVE_DURATION,
    db_option,
    format_option,
    label_option,
    runs_dir_option,
)
from volbench.cli.plan_run import TargetChoice, run_plan, target_options
from volbench.errors import UsageError
from volbench.fio.iolog import MAPPINGS
from volbench.model import RunStatus
from volbench.plans import capture as captures
from volbench.plans import replay as replays
from volbench.store.repository import Store, default_data_dir
from volbench.units import format_bytes
from volbench.views import report_for


def _scratch(runs_dir: str | None, kind: str) -> Path:
    """A folder of its own under the runs folder (scratch space)."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    return Path(runs_dir or default_data_dir() / "runs") / f"{kind}-{stamp}-{uuid.uuid4().hex[:12]}"


@click.command("capture")
@click.option("--device", required=True, help="The block device to trace (/dev/NAME).")
@click.option("--duration", type=POSITIVE_DURATION, required=True, help="How long: 30s, 10m, 1h.")
@click.option(
    "-o", "--name", "name", default=None, help="Name of the workload (default: DEVICE-TIME)."
)
@label_option
@runs_dir_option
@db_option
@format_option
def capture_command(
    device: str,
    duration: float,
    name: str | None,
    labels: tuple[tuple[str, str], ...],
    runs_dir: str | None,
    db: str | None,
    fmt: str,
) -> None:
    """Trace the block I/O the running applications issue on DEVICE (never writes it)."""
    name = captures.check_name(name or captures.default_name(device))
    with Store.open(db) as store:
        console.stderr.print(
            f"capturing {device} for {duration:g} s as workload {name}"
            " (Ctrl-C ends it early and keeps what was traced)",
            markup=False,
            highlight=False,
        )
        with console.stderr.status(f"tracing {device}") as status:

            def tick(seconds: float, text_bytes: int) -> None:
                status.update(
                    f"tracing {device}: {seconds:,.0f} of {duration:g} s,"
                    f" ~{text_bytes // 105:,} events"  # a tracepoint line is ~105 bytes
                )

            stored = captures.capture_device(
                store, device, duration, name, dict(labels), _scratch(runs_dir, "capture"), tick
            )
        console.stderr.print(
            f"stored workload {name} as run {stored.run_id}: {stored.ios:,} requests"
            f" (`volbench workload {name}` characterises it)",
            markup=False,
            highlight=False,
        )
        console.show_report(*report_for(store.get_run(stored.run_id, raw=False)), fmt)
    if stored.status is RunStatus.INTERRUPTED:
        raise KeyboardInterrupt  # main exits 130 (143 after SIGTERM): what was traced is kept


@click.command("workload")
@click.argument("name", metavar="NAME")
@db_option
@format_option
def workload_command(name: str, db: str | None, fmt: str) -> None:
    """Characterise a captured workload (NAME, a run id or `latest`), the SNIA RWSW way."""
    with Store.open(db, create=False) as store:
        run = captures.find_capture(store, name)
    console.show_report(*report_for(run), fmt)


@click.command("replay")
@click.option("--workload", "workload", required=True, help="The captured workload (NAME).")
@click.option("--synthetic", is_flag=True, help="Run the fitted synthetic fio job instead.")
@click.option("--speed", default=None, help="The trace's pace times this: 2x, 0.5x, 150%.")
@click.option(
    "--as-fast-as-possible", "fast", is_flag=True, help="No waits: the trace's order only."
)
@click.option(
    "--map",
    "mapping",
    type=click.Choice(MAPPINGS),
    default="scale",
    show_default=True,
    help="How offsets beyond the target's size are mapped onto it.",
)
@click.option(
    "--duration",
    type=POSITIVE_DURATION,
    default=None,
    help="Synthetic: its runtime (default: the capture's).",
)
@target_options
def replay_command(
    workload: str,
    synthetic: bool,
    speed: str | None,
    fast: bool,
    mapping: str,
    duration: float | None,
    choice: TargetChoice,
) -> None:
    """Replay a captured workload on a target: the exact trace (fio iolog) or its fit."""
    if synthetic and (speed or fast):
        raise UsageError(
            "--speed and --as-fast-as-possible are for the exact replay, not --synthetic"
        )
    if speed and fast:
        raise UsageError("give --speed or --as-fast-as-possible, not both")
    if not synthetic and choice.fleet() is not None:
        raise UsageError("the exact replay runs on one target (--synthetic runs on several)")
    speed_pct = replays.parse_speed(speed) if speed else None
    with Store.open(choice.db, create=False) as store:
        run = captures.find_capture(store, workload)
        trace = captures.load_trace(store, run)
    profile = characterise(trace)
    found = fit(profile)
    name = captures.workload_name(run)
    if not any(key == captures.LABEL for key, _ in choice.labels):  # runs --label workload=
        choice = dataclasses.replace(choice, labels=(*choice.labels, (captures.LABEL, name)))
    options = replays.ReplayOptions(
        workload=name,
        capture_run=run.id,
        synthetic=synthetic,
        speed_pct=speed_pct,
        as_fast_as_possible=fast,
        mapping=mapping,
        duration_s=duration or max(1.0, round(profile.duration_s, 3)),
        size_bytes=choice.size,
        ioengine=choice.ioengine,
    )
    if synthetic:
        console.stderr.print(
            f"synthetic job of {name}: matches {found.match_pct:.1f}% of its mix,"
            f" over {format_bytes(found.span_bytes)}",
            markup=False,
            highlight=False,
        )
        run_plan(
            choice,
            lambda info: replays.synthetic_plan(found, options, info),
            writes=replays.writes(profile, True, found),
        )
        return
    if not fast:  # the trace's own pauses are no stalls of the target
        idle = profile.longest_idle_s * 100 / (speed_pct or 100)
        if idle + 1 >= choice.stall_seconds:
            choice = dataclasses.replace(choice, stall_seconds=idle + choice.stall_seconds)
            console.stderr.print(
                f"the trace pauses for up to {idle:.1f} s: a stall is counted after"
                f" {choice.stall_seconds:.1f} s without I/O",
                markup=False,
                highlight=False,
            )
    folder = _scratch(choice.runs_dir, "replay")
    run_plan(
        choice,
        lambda info: replays.exact_plan(trace, profile, options, info, folder),
        writes=replays.writes(profile, False, found),
    )
