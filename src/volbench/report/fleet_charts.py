"""Charts of a run on several targets or hosts at once, from its places sheet
(:func:`volbench.report.fleet_sheets.fleet_sheet`): each place's share of every
test, and the aggregate against the sum of what each place did alone."""

from __future__ import annotations

from volbench.report.chart import Chart, Series, bar_chart
from volbench.report.fleet_sheets import PlaceRow
from volbench.report.rows import rows_of
from volbench.report.sheet import Sheet


def _category(row: PlaceRow) -> str:
    return f"{row.test} {row.direction}"


def place_charts(prefix: str, sheet: Sheet) -> list[Chart]:
    """IOPS per test and place (the aggregate as "all N together"); with figures
    alone (``--solo``), the aggregate beside the sum of the places alone."""
    rows = rows_of(sheet.rows, PlaceRow)
    if not rows:
        return []
    places: dict[str, list[PlaceRow]] = {}
    for row in rows:
        places.setdefault(row.place, []).append(row)
    shares = [
        Series(place, [_category(r) for r in chosen], [float(r.iops) for r in chosen])
        for place, chosen in places.items()
    ]
    charts = [
        bar_chart(
            f"{prefix}-places", "IOPS per place, all at once", shares, y_title="IOPS", unit="IOPS"
        )
    ]
    alone: dict[str, float] = {}
    together: dict[str, float] = {}
    for row in rows:
        if row.alone_iops is not None:
            alone[_category(row)] = alone.get(_category(row), 0.0) + float(row.alone_iops)
        elif row.place.startswith("all "):
            together[_category(row)] = float(row.iops)
    tests = [t for t in together if t in alone]
    if tests:
        charts.append(
            bar_chart(
                f"{prefix}-shared",
                "Together vs the sum of each place alone",
                [
                    Series("together", tests, [together[t] for t in tests]),
                    Series("sum alone", tests, [alone[t] for t in tests]),
                ],
                y_title="IOPS",
                unit="IOPS",
            )
        )
    return charts
