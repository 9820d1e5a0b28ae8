"""The latency histogram of a large json+ output parses only the tests it draws
(report/histogram_output.py), and draws what parsing the whole output would."""

from __future__ import annotations

import copy
import json
from typing import Any

from recorded import raw_document

from volbench.analysis.aggregate import group_tests
from volbench.fio.parser import parse
from volbench.model import FioOutput
from volbench.report.histogram_output import histogram_output


def _many(jobs: int, *, own_groups: bool = True) -> str:
    """The json+ fixture's four clones as ``jobs`` entries of ``jobs // 2`` names, each
    name's two entries in a group of its own (or all in group 0)."""
    document: dict[str, Any] = raw_document("numjobs4_jsonplus.json")
    model = document["jobs"]
    entries = []
    for number in range(jobs):
        entry = copy.deepcopy(model[number % len(model)])
        entry["jobname"] = f"job-{number // 2}"
        entry["groupid"] = number // 2 if own_groups else 0
        entries.append(entry)
    document["jobs"] = entries
    return json.dumps(document)


def _histograms(output: FioOutput, lines: int) -> list[tuple[str, str, dict[int, int]]]:
    found = [
        (test.name, name, dict(d.latency.bins))
        for test in group_tests(output)
        for name, d in test.directions.items()
        if d.active and d.latency is not None and d.latency.bins
    ]
    return found[:lines]


def test_only_the_drawn_tests_are_parsed_and_their_bins_are_the_same() -> None:
    raw = _many(60)
    part = histogram_output(raw, 4)
    assert len(part.jobs) == 8  # 4 names of 2 entries each, of 60 entries
    assert _histograms(part, 4) == _histograms(parse(raw), 4)
    assert [j.name for j in part.jobs] == [j.name for j in parse(raw).jobs[:8]]


def test_a_group_shared_with_other_names_is_parsed_whole() -> None:
    """Entries of one group share a latency kind chosen over all of them: leaving some
    out could change it, so the whole output is parsed."""
    raw = _many(12, own_groups=False)
    assert len(histogram_output(raw, 2).jobs) == 12
    few = _many(6)
    assert len(histogram_output(few, 24).jobs) == 6  # fewer names than lines
