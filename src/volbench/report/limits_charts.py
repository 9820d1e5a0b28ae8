"""Charts of a ``volbench run limits`` run that show its limits card holds: the probes
the model was fitted from, and the fitted caps drawn over them (read back from the
card's document, :func:`volbench.report.limits_card.card_fit`: the one fit the card
shows).

* IOPS vs queue depth at 4 KiB, a line each for reads and writes, each IOPS cap a level;
* mean latency vs queue depth at 4 KiB, and where a direction has an IOPS cap the
  latency the cap makes drawn dashed over it (Little's law: QD / cap, 1/cap more per
  queued I/O);
* MB/s vs request size at the deep queue, each MB/s cap a level, and the MB/s test
  it was read from (a few requests in flight for longer) a point of its own;
* IOPS vs request size at the deep queue, each IOPS cap a level (flat until a
  MB/s cap or an I/O unit takes over).

Units: MB/s = bytes/s / 10^6, request sizes in KiB, latency in the unit that fits the
chart's largest (µs, ms, s = ns / 10^3, 10^6, 10^9); queue depth and size on log axes
ticked at the values measured.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from volbench.analysis.limiter_model import (
    KIB,
    MBPS_TEST,
    DirectionModel,
    Probe,
    queue_ladder,
    size_ladder,
)
from volbench.report.axis import latency_unit
from volbench.report.chart import Chart, Series, colour, line_chart, with_fits, with_level
from volbench.report.limits_card import MB, card_fit
from volbench.report.sheet import Sheet

DIRECTIONS = ("read", "write")
"""The directions charted (the 50/50 mixes and the burst probe are the card's alone)."""

Ladders = Mapping[str, Sequence[Probe]]
"""The probes of each direction that has any, in the chart's order (its colours)."""

Level = Callable[[DirectionModel], tuple[float, str] | None]
"""A direction's fitted level on a chart (the value in the chart's unit, its label's
figure), None when the model has none."""


def _with_levels(
    chart: Chart, ladders: Ladders, models: Mapping[str, DirectionModel], level: Level
) -> Chart:
    """``chart`` with each direction's ``level`` drawn in its series' colour, named
    "read ..." at the left end and "write ..." at the right."""
    for index, direction in enumerate(ladders):
        found = level(models[direction])
        if found is not None:
            value, text = found
            chart = with_level(
                chart, value, f"{direction} {text}", color=colour(index), right=direction == "write"
            )
    return chart


def _iops_cap(model: DirectionModel) -> tuple[float, str] | None:
    cap = model.iops_cap
    return (cap.value, f"IOPS cap {cap.value:,.0f}") if cap is not None else None


def _bytes_cap(model: DirectionModel) -> tuple[float, str] | None:
    limit = model.bytes_cap
    if limit is None:
        return None
    what = "MB/s cap" if model.iops_cap is not None else "MB/s levelled at"
    return limit.value / MB, f"{what} {limit.value / MB:,.1f}"


def _queue_charts(
    prefix: str, probes: Sequence[Probe], models: Mapping[str, DirectionModel]
) -> list[Chart]:
    """IOPS and mean latency vs outstanding I/O at 4 KiB."""
    ladders = {d: ladder for d in DIRECTIONS if (ladder := queue_ladder(probes, d))}
    if not ladders:
        return []
    iops = [
        Series(d, [p.outstanding for p in ladder], [p.iops for p in ladder])
        for d, ladder in ladders.items()
    ]
    caps = {d: cap.value for d in ladders if (cap := models[d].iops_cap) is not None}
    at_cap = {  # the latency an IOPS cap makes: Little's law, QD / cap (ns)
        d: [p.outstanding / cap * 1e9 for p in ladders[d]] for d, cap in caps.items()
    }
    measured = [p.lat_mean_ns for ladder in ladders.values() for p in ladder]
    unit, size = latency_unit([*measured, *(v for values in at_cap.values() for v in values)])
    latency = [
        Series(d, [p.outstanding for p in ladder], [p.lat_mean_ns / size for p in ladder])
        for d, ladder in ladders.items()
    ]
    fits = [
        (
            Series(
                f"{d}: QD / {caps[d]:,.0f} IOPS",
                [p.outstanding for p in ladders[d]],
                [v / size for v in values],
            ),
            colour(list(ladders).index(d)),
        )
        for d, values in at_cap.items()
    ]
    depth = "Outstanding I/O (queue depth)"
    return [
        _with_levels(
            line_chart(
                f"{prefix}-qd-iops",
                "IOPS vs queue depth (4 KiB)",
                iops,
                x_title=depth,
                y_title="IOPS",
                log_x=True,
                x_at_values=True,
                unit="IOPS",
                y_from_zero=True,
            ),
            ladders,
            models,
            _iops_cap,
        ),
        with_fits(
            line_chart(
                f"{prefix}-qd-latency",
                "Mean latency vs queue depth (4 KiB)",
                latency,
                x_title=depth,
                y_title="Latency",
                log_x=True,
                log_y=True,
                x_at_values=True,
                unit=unit,
            ),
            fits,
        ),
    ]


def _size_charts(
    prefix: str, probes: Sequence[Probe], models: Mapping[str, DirectionModel]
) -> list[Chart]:
    """MB/s and IOPS vs request size at each direction's deep queue."""
    ladders = {d: ladder for d in DIRECTIONS if len(ladder := size_ladder(probes, d)) > 1}
    if not ladders:
        return []
    names = {d: f"{d} at QD {ladder[0].outstanding}" for d, ladder in ladders.items()}
    sizes = {d: [p.bs_bytes / KIB for p in ladder] for d, ladder in ladders.items()}
    mbps = [
        Series(names[d], sizes[d], [p.bytes_per_s / MB for p in ladder])
        for d, ladder in ladders.items()
    ] + [  # the MB/s test each MB/s cap is read from: a point of its own
        Series(f"{d} MB/s test at QD {p.outstanding}", [p.bs_bytes / KIB], [p.bytes_per_s / MB])
        for d in ladders
        for p in probes
        if p.direction == MBPS_TEST[d]
    ]
    iops = [Series(names[d], sizes[d], [p.iops for p in ladder]) for d, ladder in ladders.items()]
    size = "Request size (KiB)"
    return [
        _with_levels(
            line_chart(
                f"{prefix}-size-mbps",
                "MB/s vs request size (deep queue)",
                mbps,
                x_title=size,
                y_title="MB/s",
                log_x=True,
                log_y=True,
                x_at_values=True,
                unit="MB/s",
                x_unit="KiB",
            ),
            ladders,
            models,
            _bytes_cap,
        ),
        _with_levels(
            line_chart(
                f"{prefix}-size-iops",
                "IOPS vs request size (deep queue)",
                iops,
                x_title=size,
                y_title="IOPS",
                log_x=True,
                log_y=True,
                x_at_values=True,
                unit="IOPS",
                x_unit="KiB",
            ),
            ladders,
            models,
            _iops_cap,
        ),
    ]


def limits_charts(card: Sheet) -> list[Chart]:
    """The charts of a limits card (:func:`volbench.report.limits_card.limits_card`):
    IOPS and latency vs queue depth at 4 KiB, MB/s and IOPS vs request size at the
    deep queue, the fitted caps drawn as levels (see the module's docstring); a
    chart without probes to draw is left out."""
    probes, model = card_fit(card)
    prefix = f"run{card.document.get('run', 'limits')}-limits"
    models = {"read": model.read, "write": model.write}
    return _queue_charts(prefix, probes, models) + _size_charts(prefix, probes, models)
