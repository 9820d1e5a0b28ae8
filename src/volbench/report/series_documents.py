"""The JSON form of a run's stored per-second series (the run document's ``series``
and ``host_series``): fio's own logs, and the host and device samples taken while each
round ran (:mod:`volbench.analysis.host_series`)."""

from __future__ import annotations

from volbench.analysis.host_series import KINDS as HOST_UNITS
from volbench.fio.logs import UNITS
from volbench.model import LogSeries


def series_document(series: LogSeries) -> dict[str, object]:
    """One job's per-second log of a round, one direction, in JSON: ``points`` are
    ``[time in ms, value]`` as fio wrote them, the value in ``unit`` (IOPS, KiB/s, ns)."""
    return {
        "round": series.round,
        "test": series.test,
        "kind": series.kind,
        "unit": UNITS.get(series.kind, ""),
        "job": series.job,
        "host": series.host,
        "direction": series.direction,
        "points": [list(point) for point in series.points],
    }


def host_series_document(series: LogSeries) -> dict[str, object]:
    """One kind of the host and device samples stored with a round, in JSON: ``points``
    are ``[Unix time in ms, value]`` in ``unit``; ``job`` is the CPU's number for
    ``cpu``; ``host`` the host sampled, as stored with the samples (``LogSeries.host``:
    another host's name, None for the machine volbench ran on;
    :mod:`volbench.analysis.host_series`)."""
    return {
        "round": series.round,
        "test": series.test,
        "kind": series.kind,
        "unit": HOST_UNITS.get(series.kind, ""),
        "job": series.job,
        "host": series.host,
        "points": [list(point) for point in series.points],
    }
