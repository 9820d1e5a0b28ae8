"""Options that put a run on several targets or hosts at once (``run ...``, ``pts``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from volbench.fio.job_text import check_value
from volbench.plans.placement.named import read_hosts_file
from volbench.text_file import read_text
from volbench.units import MiB

F = TypeVar("F", bound=Callable[..., Any])
HOSTS_FILE_LIMIT = MiB
"""A hosts file is a list of host names: 1 MiB holds tens of thousands."""

PLACE_OPTIONS = (
    click.option(
        "--targets",
        "target_lists",
        multiple=True,
        metavar="T1,T2,...",
        help="Several targets measured at the same time (with --target: all of them).",
    ),
    click.option(
        "--hosts",
        "host_lists",
        multiple=True,
        metavar="H1,H2,...",
        help="Run on these hosts: ssh://[USER@]HOST[:PORT] (fio --server started "
        "through ssh, recommended) or HOST[:PORT] (a `volbench agent` on a trusted network).",
    ),
    click.option(
        "--hosts-file",
        type=click.Path(exists=True, dir_okay=False),
        help="Hosts as for --hosts, one per line (# comments).",
    ),
    click.option(
        "--keep-going", is_flag=True, help="Go on without a host that fails or disappears."
    ),
)


def place_options(function: F) -> F:
    """Add :data:`PLACE_OPTIONS` (``target_lists``, ``host_lists``, ``hosts_file``,
    ``keep_going``); turn them into targets and hosts with :func:`given`."""
    for option in reversed(PLACE_OPTIONS):
        function = option(function)
    return function


def given(
    target: tuple[str, ...],
    target_lists: tuple[str, ...],
    host_lists: tuple[str, ...],
    hosts_file: str | None,
) -> tuple[list[str], list[str]]:
    """Every target (``--target`` repeated, ``--targets`` lists) and host (``--hosts``
    lists, ``--hosts-file``), in the order given."""
    hosts = _split(host_lists)
    if hosts_file:
        hosts += read_hosts_file(read_text(Path(hosts_file), HOSTS_FILE_LIMIT, "host list"))
    targets = [
        check_value("--target", value, path=True) for value in [*target, *_split(target_lists)]
    ]
    return targets, hosts


def _split(values: tuple[str, ...]) -> list[str]:
    return [item.strip() for value in values for item in value.split(",") if item.strip()]
