"""``volbench lab``: QEMU guests whose virtio disk is limited the way clouds limit
volumes (:mod:`volbench.lab`), places of runs as ``--hosts lab://NAME``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from volbench.cli import console
from volbench.cli.options import POSITIVE_SIZE, Converted, format_option, grouped
from volbench.cli.spec import AMOUNT, catalogue_option, provisioned_options, provisioned_values
from volbench.errors import UsageError
from volbench.lab import backing as backings
from volbench.lab import lifecycle, monitor
from volbench.lab.filesystem import FILESYSTEMS, MOUNT
from volbench.lab.guest import DISK_CACHES
from volbench.lab.home import check_name
from volbench.lab.promise import LimitChoice
from volbench.lab.throttle import HandLimits
from volbench.report.sheet import Column, Sheet
from volbench.units import parse_size

F = TypeVar("F", bound=Callable[..., Any])

_HAND = (
    "iops_total",
    "iops_read",
    "iops_write",
    "mbps",
    "mbps_read",
    "mbps_write",
    "burst_iops",
    "burst_credits",
    "burst_mbps",
    "burst_mb",
    "io_unit",
    "io_max",
)
_PROMISE = ("product", "provisioned_iops", "provisioned_mbps", "extra_performance")


def _choice(catalogue_files: tuple[str, ...], **given: Any) -> LimitChoice:
    """The limits asked for: a catalogue product (at the disk's size) or hand-set."""
    values = provisioned_values(
        given["provisioned_iops"], given["provisioned_mbps"], given["extra_performance"]
    )
    hand = HandLimits(**{key: given[key] for key in _HAND})
    return LimitChoice(hand, given["product"], values, catalogue_files)


LIMIT_OPTIONS = (
    click.option("--iops-total", type=AMOUNT, help="IOPS reads and writes share."),
    click.option("--iops-read", type=AMOUNT, help="Read IOPS (a budget of their own)."),
    click.option("--iops-write", type=AMOUNT, help="Write IOPS (a budget of their own)."),
    click.option("--mbps", type=AMOUNT, help="MB/s (10^6 B/s) reads and writes share."),
    click.option("--mbps-read", type=AMOUNT, help="Read MB/s."),
    click.option("--mbps-write", type=AMOUNT, help="Write MB/s."),
    click.option("--burst-iops", type=AMOUNT, help="IOPS while the bucket has credits."),
    click.option("--burst-credits", type=AMOUNT, help="I/Os in a full bucket."),
    click.option("--burst-mbps", type=AMOUNT, help="MB/s while the MB/s cap's bucket has credits."),
    click.option("--burst-mb", type=AMOUNT, help="MB (10^6 B) in a full MB/s bucket."),
    click.option(
        "--io-unit",
        type=Converted("size", parse_size),
        default=None,
        help="A larger request counts as size/unit I/Os (QEMU iops-size), e.g. 256k.",
    ),
    click.option(
        "--io-max",
        is_flag=True,
        help="Set them with the guest kernel's cgroup v2 io.max (each direction's IOPS and"
        " MB/s), not QEMU's throttle group.",
    ),
    click.option("--product", default=None, help="Limits of a catalogue product at the size."),
    provisioned_options,
    catalogue_option,
    grouped("choice", _choice, (*_HAND, *_PROMISE, "catalogue_files")),
)


def limit_options(function: F) -> F:
    """The disk-limit options, reaching the command as one ``choice`` (LimitChoice)."""
    for option in reversed(LIMIT_OPTIONS):
        function = option(function)
    return function


@click.group("lab")
def lab() -> None:
    """QEMU guests with cloud-like disk limits, reached as --hosts lab://NAME."""


@lab.command("up")
@click.argument("name")
@click.option(
    "--size",
    type=POSITIVE_SIZE,
    default="1g",
    show_default=True,
    help="The guest disk (a sparse image); with --product, the volume's size.",
)
@click.option(
    "--kernel",
    type=click.Path(dir_okay=False),
    default=None,
    help="A kernel image (default: Debian's linux-image-amd64, downloaded once).",
)
@click.option(
    "--accel",
    type=click.Choice(["auto", "kvm", "tcg"]),
    default="auto",
    show_default=True,
    help="auto: KVM if the guest boots under it in time, else TCG.",
)
@click.option(
    "--backing",
    metavar="B",
    default=None,
    help="Put the disk image on shared backing device B (a loop device volbench makes"
    " once, ext4 in the lab's folder): guests on one B share its capability.",
)
@click.option(
    "--disk-cache",
    type=click.Choice(DISK_CACHES),
    default="none",
    show_default=True,
    help="QEMU's cache mode of the disk: none (O_DIRECT) or writeback (this machine's page"
    " cache: reads it holds never reach the image; runs on the guest are marked).",
)
@click.option(
    "--filesystem",
    type=click.Choice(FILESYSTEMS),
    default=None,
    help=f"Make this filesystem on the disk image (here, before the boot); the guest"
    f" mounts it at {MOUNT}, for a folder or file target there (default: a raw disk).",
)
@click.option(
    "--memory",
    type=POSITIVE_SIZE,
    default="512m",
    show_default=True,
    help="The guest's memory: fio's buffers need iodepth x bs x numjobs of it (e.g. 2g for"
    " 16 jobs of 64 x 1 MiB).",
)
@limit_options
def up(
    name: str,
    size: int,
    kernel: str | None,
    accel: str,
    backing: str | None,
    disk_cache: str,
    filesystem: str | None,
    memory: int,
    choice: LimitChoice,
) -> None:
    """Boot guest NAME; print where it is once fio's server in it answers."""

    def say(line: str) -> None:
        console.stderr.print(line)

    check_name(name)
    lifecycle.check_disk_size(size)
    memory_mib = lifecycle.check_memory(memory)
    limits = choice.limits(size)
    disk = None
    if backing is not None:
        shared = backings.ensure(check_name(backing))
        disk = shared.disk(name)
        say(f"disk image on backing device {backing} ({shared.loop} at {shared.mount})")
    try:
        guest = lifecycle.up(
            name, limits, size, kernel, accel, say, disk, disk_cache, filesystem, memory_mib
        )
    finally:
        if backing is not None:
            backings.release_unused()  # a failed boot's own backing device
    console.stdout.print(
        f"{guest.place} up: fio at {guest.address}:{guest.fio_port}, shell at "
        f"{guest.address}:{guest.shell_port}, {guest.accel}, {memory_mib:,} MiB memory,"
        f" booted in "
        f"{guest.boot_seconds:.1f} s, disk /dev/vda {guest.disk_bytes / (1 << 30):g} GiB"
        f" (cache {guest.disk_cache}), {lifecycle.on_disk(guest)}, limits:"
        f" {guest.limits.text()}"
    )


@lab.command("limit")
@click.argument("name")
@limit_options
def limit(name: str, choice: LimitChoice) -> None:
    """Change running guest NAME's disk limits (every figure: an unset one is none)."""
    guest = monitor.change_limits(name, choice)
    console.stdout.print(f"{guest.place} limits: {guest.limits.text()}")


COLUMNS = (
    Column("name", "Name"),
    Column("state", "State"),
    Column("pid", "PID"),
    Column("address", "Address"),
    Column("accel", "Accel"),
    Column("limits", "Limits"),
    Column("disk", "Disk"),
    Column("filesystem", "On disk"),
)


@lab.command("list")
@format_option
def list_(fmt: str) -> None:
    """The lab's guests: alive or dead, where, and their disk's limits."""
    for line in monitor.reclaim():  # a killed verify's guests: their own limits first
        console.stderr.print(line)
    rows = tuple(vars(row) for row in lifecycle.listing())
    document = {"schema": "volbench.lab/1", "guests": list(rows)}
    console.show(Sheet("lab guests", COLUMNS, rows, document), fmt)


@lab.command("down")
@click.argument("name", required=False)
@click.option("--all", "every", is_flag=True, help="Every guest of the lab.")
def down(name: str | None, every: bool) -> None:
    """Stop guest NAME (or --all) and remove its disk and folder."""
    if every == (name is not None):
        raise UsageError("give a guest NAME or --all")
    if name is not None:
        ran = lifecycle.down(name)
        backings.forget(name)
        console.stdout.print(f"lab://{name} " + ("stopped and removed" if ran else "removed"))
    else:
        gone = lifecycle.down_all()
        for each in gone:
            backings.forget(each)
        console.stdout.print(f"stopped and removed: {', '.join(gone) or 'no guest'}")
    released = backings.release_unused()
    if released:
        console.stdout.print(f"backing device removed: {', '.join(released)}")
