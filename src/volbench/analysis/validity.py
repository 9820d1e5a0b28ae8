"""Whether a test's figure is the volume's: the ways a benchmark fools its reader, each a
mark on the test with the evidence and what to do (issue "A figure you can trust, or a
mark that says why not").

fio can do exactly what it was told and still measure something other than the volume:
a cache answered the reads, the reads met blocks never written (a thin volume answers
them without touching its medium: Google Cloud's "Benchmarking persistent disk
performance" fills a disk before reading it), another process used the device, a burst
or a step was averaged with what came after it, or the CPU was short for the rate. A
test with none of these is valid; else each problem is a :class:`Mark`.

This module holds the records every check returns and every view reads; the checks are
pure functions of what volbench stored with the test (fio's own counts, the device's
counters sampled each second, per-second series, the target's identity and what was
written to it), one module each, reading one context record
(:class:`volbench.analysis.validity_facts.TestFacts`); the service that runs them on a
stored run is :mod:`volbench.analysis.run_validity`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum


class MarkKind(StrEnum):
    """What made a figure not the volume's."""

    CACHE = "cache"
    """A cache answered: the device completed far fewer I/Os than fio counted; buffered
    I/O; latency under what the medium can do; a working set smaller than a cache in
    front of the volume."""
    UNWRITTEN = "unwritten"
    """Reads over blocks no write reached (for this target's identity)."""
    SHARED = "shared"
    """Another process used the device: it completed more I/Os than fio did."""
    MIXED = "mixed"
    """A burst or a step inside the test, or a test that never settled."""
    STARVED = "starved"
    """fio's CPU, or the host's, short for the rate."""


@dataclass(frozen=True)
class Part:
    """A stretch of a test's per-second series that a mark tells apart: from
    ``start_s`` to ``end_s`` on fio's clock (s since the test's timed part began, as
    its per-second logs count), its rate ``value`` in ``unit`` (the median of its
    seconds), what it is (``label``: "burst", "before the step", "after the step"...),
    and whether it is the part a report shades (``marked``: the burst, the seconds
    before the test settled)."""

    start_s: float
    end_s: float
    value: float
    unit: str
    label: str
    marked: bool = True


@dataclass(frozen=True)
class Mark:
    """One problem with one test: ``problem`` a sentence saying what is wrong,
    ``evidence`` sentences with the figures it rests on (each fio's own or a sampled
    counter's, with units), ``advice`` what to do, ``figures`` the same figures by name
    for JSON (units in the names: ``device_ios``, ``fio_ios``, ``ratio``, ``iops_before``),
    ``parts`` the stretches of its series the mark tells apart, each with its figure
    (none: the whole test is marked, no part of it can be told)."""

    kind: MarkKind
    problem: str
    evidence: tuple[str, ...]
    advice: str
    figures: Mapping[str, float] = field(default_factory=dict)
    parts: tuple[Part, ...] = ()


@dataclass(frozen=True)
class Checked:
    """What one check found on one test: its marks, or why it could not check (a
    sentence naming the data it lacked: "no device samples: an imported output")."""

    marks: tuple[Mark, ...] = ()
    unchecked: tuple[str, ...] = ()


@dataclass(frozen=True)
class Validity:
    """A test's verdict: valid when it has no mark; ``unchecked`` names each check that
    could not run on it and why (an imported output without device samples)."""

    round: int
    test: str
    marks: tuple[Mark, ...] = ()
    unchecked: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        return not self.marks

    @property
    def kinds(self) -> tuple[MarkKind, ...]:
        """The kinds of its marks, each once, in order."""
        return tuple(dict.fromkeys(m.kind for m in self.marks))

    def reason(self) -> str:
        """One line saying why the figure is not the volume's ("" when valid): each
        mark's kind and problem."""
        return "; ".join(f"{m.kind}: {m.problem}" for m in self.marks)
