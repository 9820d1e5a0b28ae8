"""Shaded stretches of a per-second chart: a stall (no I/O), a burst (a limiter's
credits spent above its baseline), or the part of a test a validity mark tells apart
(analysis/validity.py: a burst or a step averaged in, the seconds before it settled),
each from where it began, named with its figures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from volbench.analysis.burst_series import Burst
from volbench.analysis.validity import Validity
from volbench.model import Stall
from volbench.report.chart import Chart

STALL_COLOR = "#d62728"
STALL_TEXT = "stall: {s.test} ({s.seconds:.0f} s at 0 IOPS)"
BURST_COLOR = "#2ca02c"
MARK_COLOR = "#ff7f0e"


@dataclass(frozen=True)
class Span:
    """A shaded stretch of a per-second chart (s since the test started) and its label."""

    start_s: float
    end_s: float
    text: str
    color: str


def stall_spans(stalls: Sequence[Stall]) -> list[Span]:
    """Each stall of a known offset, from where it began for as long as it lasted."""
    return [
        Span(s.test_offset_s, s.test_offset_s + s.seconds, STALL_TEXT.format(s=s), STALL_COLOR)
        for s in stalls
        if s.test_offset_s is not None
    ]


def burst_spans(bursts: Mapping[tuple[int, str], Burst]) -> list[Span]:
    """Each burst from its start for its seconds at the ceiling, with its figures."""
    return [
        Span(
            b.start_s,
            b.end_s,
            f"burst: {test} {b.ceiling:,.0f} {b.unit} for {b.seconds:.1f} s "
            f"(~{b.credits:,.0f} {'I/Os' if b.unit == 'IOPS' else 'MB'} above "
            f"{b.baseline:,.0f})",
            BURST_COLOR,
        )
        for (_, test), b in sorted(bursts.items())
    ]


def mark_spans(found: Mapping[tuple[int, str], Validity]) -> list[Span]:
    """Each marked part of a test (a mark's parts that are ``marked``), named with the
    mark, the test and the part's figure."""
    return [
        Span(
            part.start_s,
            part.end_s,
            f"{mark.kind}: {v.test} {part.label} {part.value:,.0f} {part.unit}",
            MARK_COLOR,
        )
        for _, v in sorted(found.items())
        for mark in v.marks
        for part in mark.parts
        if part.marked
    ]


def with_spans(chart: Chart, spans: Sequence[Span]) -> Chart:
    """``chart`` (time since the test started on x) with each span shaded and named."""
    if not spans:
        return chart
    layout = dict(chart.figure["layout"])
    layout["shapes"] = [
        *layout.get("shapes", []),
        *(
            {
                "type": "rect",
                "xref": "x",
                "yref": "paper",
                "x0": span.start_s,
                "x1": span.end_s,
                "y0": 0,
                "y1": 1,
                "fillcolor": span.color,
                "opacity": 0.15,
                "line": {"width": 0},
            }
            for span in spans
        ),
    ]
    layout["annotations"] = [
        *layout.get("annotations", []),
        *(
            {
                "x": span.start_s,
                "y": 1,
                "xref": "x",
                "yref": "paper",
                "text": span.text,
                "showarrow": False,
                "xanchor": "left",
                "yanchor": "bottom",
                "font": {"size": 10, "color": span.color},
            }
            for span in spans
        ),
    ]
    return Chart(chart.id, chart.title, {**chart.figure, "layout": layout})
