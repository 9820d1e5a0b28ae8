"""A capture run's stored workload profile, read back as a typed record.

A ``capture`` run stores its profile and fitted job as one JSON document
(:func:`volbench.analysis.workload_fit.workload_record`) under its settings
(:class:`volbench.plans.capture.CaptureSetup`, ``profile``). Everything that shows
it (``volbench workload``, ``show``, ``report``) reads it through
:func:`stored_profile`, and ``volbench import`` reads a bundled capture run the same
way before anything is stored: a field missing or of the wrong type, a pattern
without its share row or a concentration without one of its shares is one
:class:`~volbench.records.RecordError` naming the run and where (exit 2), never a
``KeyError`` in a sheet. Fields a profile may lack since it was first stored have
defaults (``longest_idle_s``, ``before``, ``lost``).
"""

from __future__ import annotations

from dataclasses import dataclass

from volbench.analysis.workload_profile import HOT_SHARES
from volbench.model import RunRecord
from volbench.plans.capture import CaptureSetup
from volbench.records import RecordError, structure


@dataclass(frozen=True)
class OpCounts:
    """Requests per direction."""

    read: int
    write: int
    trim: int
    flush: int


@dataclass(frozen=True)
class SizeRow:
    """Requests of one direction and transfer size (bytes)."""

    op: str
    size_bytes: int
    count: int


@dataclass(frozen=True)
class PatternRow:
    """One dominant access pattern (its ``label`` as the profile wrote it)."""

    access: str
    op: str
    size_bytes: int
    share_pct: float
    label: str


@dataclass(frozen=True)
class PatternShare:
    """One (access, op, size) pattern's share (%) in the trace and as the fitted job
    issues it."""

    access: str
    op: str
    size_bytes: int
    share_pct: float
    fitted_pct: float


@dataclass(frozen=True)
class LatencyRow:
    """Device time (issue to completion) of one direction's requests, in ns."""

    op: str
    count: int
    mean_ns: float
    p50_ns: float
    p99_ns: float
    max_ns: float


@dataclass(frozen=True)
class Synthetic:
    """The fitted fio job (fio's units: bytes, percentages) and its match (%)."""

    rwmixread_pct: int
    read_bssplit: tuple[tuple[int, int], ...]
    write_bssplit: tuple[tuple[int, int], ...]
    read_random_pct: int
    write_random_pct: int
    random_distribution: str
    iodepth: int
    span_bytes: int
    match_pct: float


@dataclass(frozen=True)
class StoredProfile:
    """What the workload sheets and charts read of a stored profile (the module
    docstring says where it comes from; units as the profile's names say)."""

    ios: int
    counts: OpCounts
    duration_s: float
    iops: float
    read_pct: float
    sequential_pct: float
    sequential_by_op: dict[str, float]
    sizes: tuple[SizeRow, ...]
    qd_mean: float
    qd_percentile: float
    qd_max: int
    busy_pct: float
    working_set_bytes: int
    span_bytes: int
    region_bytes: int
    hot_pct: dict[str, float]
    """Share of requests (%) in the hottest 5, 20 and 50% of the touched space, keyed
    by that percentage as text."""
    patterns: tuple[PatternRow, ...]
    pattern_shares: tuple[PatternShare, ...]
    latency: tuple[LatencyRow, ...]
    per_second: tuple[tuple[int, int, int], ...]
    qd_per_second: tuple[float, ...]
    synthetic: Synthetic
    longest_idle_s: float = 0.0
    before: int = 0
    lost: int = 0

    def share_of(self, pattern: PatternRow) -> PatternShare:
        """``pattern``'s row of :attr:`pattern_shares` (:func:`stored_profile` checked
        that there is one)."""
        return next(
            s
            for s in self.pattern_shares
            if (s.access, s.op, s.size_bytes) == (pattern.access, pattern.op, pattern.size_bytes)
        )


def stored_profile(run: RunRecord) -> StoredProfile:
    """``run``'s stored workload profile (a ``capture`` run's), checked whole;
    :class:`RecordError` naming the run and where when it does not fit."""
    what = f"run {run.id}: its stored settings"
    stored = run.setup(CaptureSetup).profile
    try:
        profile = structure(dict(stored), StoredProfile, what)
    except RecordError as error:  # where in the settings: under the profile
        raise RecordError(what, error.problem.replace("@ $", "@ $.profile", 1)) from None
    for share in HOT_SHARES:
        if str(share) not in profile.hot_pct:
            raise RecordError(what, f"required field missing @ $.profile.hot_pct.{share}")
    shares = {(s.access, s.op, s.size_bytes) for s in profile.pattern_shares}
    for index, pattern in enumerate(profile.patterns):
        if (pattern.access, pattern.op, pattern.size_bytes) not in shares:
            raise RecordError(
                what, f"a pattern without its share row @ $.profile.patterns[{index}]"
            )
    return profile
