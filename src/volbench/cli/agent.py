"""``volbench agent``: fio's server on a host, and the check of which hosts answer."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import click

from volbench.cli import console
from volbench.cli.options import format_option
from volbench.errors import FioError, UsageError
from volbench.fio.client import DEFAULT_PORT
from volbench.fio.server import LOOPBACK, HostProbe, exposure_warning, probe_all, server_command
from volbench.places.table import connected
from volbench.report.sheet import Column, Sheet

PROBE_COLUMNS = (
    Column("address", "Host"),
    Column("answers", "Answers", lambda v: "yes" if v else "NO"),
    Column("hostname", "Hostname"),
    Column("os", "OS"),
    Column("arch", "Arch"),
    Column("fio_version", "fio"),
    Column("seconds", "Seconds", lambda v: f"{float(v):.2f}", numeric=True),
    Column("error", "Error"),
)


def probe_sheet(probes: list[HostProbe]) -> Sheet:
    rows = tuple(vars(p) for p in probes)
    answering = sum(1 for p in probes if p.answers)
    return Sheet(
        title="volbench agents",
        columns=PROBE_COLUMNS,
        rows=rows,
        document={"schema": "volbench.agents/1", "hosts": list(rows)},
        notes=(f"{answering} of {len(probes)} hosts answer",),
        flagged_rows=frozenset(i for i, p in enumerate(probes) if not p.answers),
    )


@click.command("agent")
@click.argument("hosts", nargs=-1, metavar="[HOST[:PORT]|ssh://[USER@]HOST[:PORT]...]")
@click.option("--check", is_flag=True, help="Tell which HOSTs answer (exit 1 if one does not).")
@click.option(
    "--bind",
    default=None,
    metavar="ADDR",
    help=f"Listen on this address (default: {LOOPBACK}). fio's server has no "
    "authentication: anyone who reaches it runs commands as root.",
)
@click.option("--port", type=click.IntRange(1, 65535), default=DEFAULT_PORT, show_default=True)
@click.option(
    "--daemon",
    "pidfile",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="PIDFILE",
    help="Run in the background and write fio's process id to PIDFILE.",
)
@click.option("--timeout", type=click.FloatRange(0.1, 3600), default=10.0, show_default=True)
@format_option
def command(
    hosts: tuple[str, ...],
    check: bool,
    bind: str | None,
    port: int,
    pidfile: str | None,
    timeout: float,
    fmt: str,
) -> None:
    """Serve fio to a volbench controller (`fio --server`), or --check HOSTs.

    In the foreground (a systemd service of Type=simple) volbench becomes fio's
    server process; with --daemon fio detaches and writes its process id. It
    listens on loopback unless --bind names another address; for runs from
    another machine, prefer `--hosts ssh://HOST`, which needs no agent.
    """
    if check:
        if not hosts:
            raise UsageError("agent --check needs one or more HOST[:PORT] or ssh://HOST")
        with connected(hosts) as addresses:
            probes = probe_all(addresses, timeout)
        console.show(probe_sheet(probes), fmt)
        if not all(p.answers for p in probes):
            sys.exit(1)
        return
    if hosts:
        raise UsageError("HOST arguments go with --check; to serve, use --bind ADDR --port P")
    warning = exposure_warning(bind, port)
    if warning is not None:
        console.stderr.print(f"volbench agent: {warning}")
    if pidfile is None:
        argv = server_command(bind, port)
        console.stderr.print(f"volbench agent: {' '.join(argv[1:])} (Ctrl-C stops it)")
        sys.stderr.flush()
        os.execv(argv[0], argv)
    path = Path(pidfile).absolute()
    done = subprocess.run(server_command(bind, port, path), capture_output=True, text=True)
    if done.returncode != 0:
        last = (done.stderr or done.stdout).strip().splitlines()
        raise FioError(f"fio --server did not start: {last[-1] if last else done.returncode}")
    for _ in range(50):  # fio writes the pid file right after it forks
        if path.is_file() and path.read_text().strip():
            break
        time.sleep(0.1)
    pid = path.read_text().strip() if path.is_file() else "?"
    console.stderr.print(f"volbench agent: fio --server on {bind or LOOPBACK}:{port}, pid {pid}")
