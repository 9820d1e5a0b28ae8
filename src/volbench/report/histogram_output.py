"""The part of a round's fio output that the latency histogram chart draws.

The chart (:func:`volbench.report.run_charts.histogram_chart`) draws the json+ bins
of at most ``lines`` tests, the first that have bins. Parsing a whole json+ output
checks every bin of every entry (:mod:`volbench.fio.latency`): 11 s for 20,000 jobs
(bench/import_scale.py). So the output is decoded, the entries of the first
``lines`` job names with bins are kept with fio's "All clients" entries, and only
they are parsed. The tests those entries make are the ones the whole output makes:
every entry of a kept name is kept, and where a reporting group of a kept name holds
another name as well (its entries share one latency kind, chosen over all of them:
:func:`volbench.fio.parser.parse`) the whole output is parsed instead.
"""

from __future__ import annotations

import json

from volbench.fio.document import load
from volbench.fio.parser import ALL_CLIENTS, parse
from volbench.model import FioOutput

_LISTS = ("jobs", "client_stats")


def _has_bins(entry: dict[str, object]) -> bool:
    """Whether any direction of ``entry`` holds a latency block with json+ bins."""
    return any(
        isinstance(block, dict)
        and any(isinstance(stats, dict) and stats.get("bins") for stats in block.values())
        for block in entry.values()
    )


def histogram_output(raw: str, lines: int) -> FioOutput:
    """``raw`` parsed as far as a histogram of ``lines`` tests needs (see the module
    docstring); ParseError as :func:`volbench.fio.parser.parse` for what it refuses."""
    doc = load(raw)
    entries = [e for key in _LISTS if isinstance(doc.get(key), list) for e in doc[key]]
    if any(not isinstance(e, dict) for e in entries):
        return parse(raw)  # refused there, with where
    kept: set[object] = set()
    for entry in entries:
        if len(kept) == lines:
            break
        name = entry.get("jobname")
        if name != ALL_CLIENTS and name not in kept and _has_bins(entry):
            kept.add(name)
    if len(kept) < lines:  # every name with bins is drawn: nothing to leave out
        return parse(raw)
    groups = {e.get("groupid") for e in entries if e.get("jobname") in kept}
    shared = any(
        e.get("groupid") in groups and e.get("jobname") not in kept | {ALL_CLIENTS} for e in entries
    )
    if shared:
        return parse(raw)
    part = {
        **doc,
        **{
            key: [e for e in doc[key] if e.get("jobname") in kept | {ALL_CLIENTS}]
            for key in _LISTS
            if isinstance(doc.get(key), list)
        },
    }
    return parse(json.dumps(part))
