"""A volume's fitted limiter (:mod:`volbench.analysis.limiter_model`, from a ``volbench
run limits`` run) as the caps every other test of the same volume can meet: the
verdict rules (:mod:`volbench.analysis.limit_rules`) then name the limiter from the
model ("the write MB/s cap (limits run 12), 12.0 MB/s") instead of inferring it from
the few tests another plan happened to run; and where no cap was found, the device's
own ceiling the experiment measured.

Pure functions; :mod:`volbench.volume_limits` finds the model of a run's volume in the
store.
"""

from __future__ import annotations

from collections.abc import Sequence

from volbench.analysis.burst_series import Burst
from volbench.analysis.limit_evidence import KnownCap
from volbench.analysis.limiter_model import (
    KIB,
    DirectionModel,
    LimiterModel,
    Probe,
    plateau_depth,
    settled,
    size_ladder,
)
from volbench.model import RunRecord

DIRECTIONS = ("read", "write")


def _direction_caps(
    direction: str,
    model: DirectionModel,
    source: str,
    sizes: Sequence[Probe] = (),
    plateau: int | None = None,
) -> list[KnownCap]:
    """``direction``'s caps; where none binds, the device's own rate at each size
    (``sizes``), for tests at least as deep as the 4 KiB ladder's ``plateau``
    (:func:`volbench.analysis.limiter_model.plateau_depth`; else the sizes' queue)."""
    found = []
    cap, unit = model.iops_cap, model.unit
    if cap is not None:
        counted = unit.bytes if unit is not None and unit.rounded else None
        each = f", {counted // KIB} KiB an I/O" if counted else ""
        found.append(
            KnownCap(
                f"the {direction} IOPS cap ({source}{each})",
                cap.value,
                None,
                direction,
                counted,
                fitted=True,
            )
        )
    if model.bytes_cap is not None and cap is not None:
        same = (
            f"; {cap.value:,.0f} IOPS in {unit.bytes // KIB} KiB units"
            if unit is not None and not unit.rounded
            else ""
        )
        found.append(
            KnownCap(
                f"the {direction} MB/s cap ({source}{same})",
                None,
                model.bytes_cap.value,
                direction,
                fitted=True,
            )
        )
    if cap is None and model.bytes_cap is not None:
        found.append(
            KnownCap(
                f"the {direction} MB/s level ({source}: a MB/s cap or the device's bandwidth)",
                None,
                model.bytes_cap.value,
                direction,
                fitted=True,
                kind="ceiling",
            )
        )
    if cap is None and model.ceiling is not None:
        found.append(
            KnownCap(
                f"the device's own {direction} ceiling ({source}: no limiter found)",
                model.ceiling.value,
                None,
                direction,
                fitted=True,
                kind="ceiling",
                bs_bytes=4 * KIB,  # the queue-depth ladder's size, at its deep queue
                least_outstanding=plateau or (sizes[0].outstanding if sizes else 1),
                cpu_bound=model.cpu_bound,
            )
        )
        found += [  # the size ladder at the deep queue: the device's own rate at each size
            KnownCap(
                f"the device's own {direction} rate at {p.bs_bytes // KIB} KiB ({source}:"
                f" no limiter found, {p.outstanding} I/Os in flight)",
                p.iops,
                None,
                direction,
                fitted=True,
                kind="ceiling",
                bs_bytes=p.bs_bytes,
                least_outstanding=plateau or p.outstanding,
                cpu_bound=p.starved,
            )
            for p in sizes
            if p.bs_bytes > 4 * KIB
        ]
    return found


def fitted_caps(
    model: LimiterModel,
    burst: Burst | None,
    source: str,
    write_burst: Burst | None = None,
    probes: Sequence[Probe] = (),
) -> tuple[KnownCap, ...]:
    """The caps of ``model`` (and the burst ceiling of ``burst``, the reads' or both
    directions'; of ``write_burst``, the writes' own), each labelled with
    ``source`` (e.g. "limits run 12"): a direction's IOPS cap (counting a rounded-up
    I/O unit as :class:`KnownCap` does) and its MB/s cap (an I/O unit counted in
    proportion is that same cap); a budget reads and writes share, once more without a
    direction (a mix meets it in all); without a cap, the device's own ceiling, and its
    own rate at each larger size of the experiment's ``probes`` (its size ladder)."""
    directions = {"read": model.read, "write": model.write}
    merged = settled(probes)
    found = [
        c
        for d in DIRECTIONS
        for c in _direction_caps(
            d, directions[d], source, size_ladder(merged, d), plateau_depth(merged, d)
        )
    ]
    read, write = model.read, model.write
    if model.shared_iops and read.iops_cap and write.iops_cap:
        value = (read.iops_cap.value + write.iops_cap.value) / 2
        label = f"the IOPS budget reads and writes share ({source})"
        found.append(KnownCap(label, value, None, fitted=True))
    if model.shared_bytes and read.bytes_cap and write.bytes_cap:
        value = (read.bytes_cap.value + write.bytes_cap.value) / 2
        if read.iops_cap and write.iops_cap:
            label = f"the MB/s budget reads and writes share ({source})"
            found.append(KnownCap(label, None, value, fitted=True))
        else:  # no limiter met: as each direction's level, a cap or the device's own
            label = (
                f"the MB/s level reads and writes share ({source}: a MB/s cap or the"
                " device's bandwidth)"
            )
            found.append(KnownCap(label, None, value, fitted=True, kind="ceiling"))
    if burst is not None and burst.steady and burst.unit == "IOPS":
        direction = "read" if write_burst is not None else None  # a bucket of the reads' own
        what = "read burst" if direction else "burst"
        label = f"the {what} ceiling ({source}, while credits last)"
        found.append(KnownCap(label, burst.ceiling, None, direction, fitted=True, kind="burst"))
    if write_burst is not None and write_burst.steady and write_burst.unit == "IOPS":
        label = f"the write burst ceiling ({source}, while credits last)"
        found.append(KnownCap(label, write_burst.ceiling, None, "write", fitted=True, kind="burst"))
    return tuple(found)


def volume_key(run: RunRecord) -> str | None:
    """What names ``run``'s volume across runs: a remote place's label (``HOST:PATH``,
    ``lab://NAME:/dev/vda``), else the target's identity (a device's serial or WWID, a
    loop device's backing file and offset; else its device number, a file's inode, and
    the boot: a device named only by its number is the same one within a boot); None
    for a run on several places, or a target with neither (an imported run)."""
    places = run.settings.places
    if len(places) > 1:
        return None
    if places and places[0].host:
        return places[0].label
    identity = run.target.identity
    if identity is None:
        return None
    if identity.source:
        return f"{identity.kind}:{identity.source}"
    inode = f":{identity.inode}" if identity.inode is not None else ""
    return f"{identity.kind}:{identity.number}{inode}:{identity.diskseq}:{identity.boot}"
