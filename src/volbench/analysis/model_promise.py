"""A fitted limiter model (:mod:`volbench.analysis.limiter_model`, a ``volbench run
limits`` run) against a product's promise (:class:`volbench.specs.expectation.
Expectation`): each fitted figure beside the catalogue's, with the verdict every other
check uses (:data:`volbench.analysis.promise.MEETS_LOW` to ``MEETS_HIGH`` of the
promise meets it); and which catalogue products a model matches.

Pure functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from volbench.analysis.burst_series import Burst
from volbench.analysis.limiter_model import KIB, DirectionModel, LimiterModel, Probe
from volbench.analysis.promise import Verdict, verdict_of
from volbench.specs.expectation import Expectation

MB = 1e6


def _top_mbps(probes: Sequence[Probe], direction: str) -> Probe | None:
    """The probe of ``direction`` that moved the most bytes a second."""
    own = [p for p in probes if p.direction == direction]
    return max(own, key=lambda p: p.bytes_per_s, default=None)


def _row(
    what: str, tests: Sequence[str], expected: float, measured: float, unit: str, reason: str
) -> Verdict:
    ratio = measured / expected if expected else 0.0
    return Verdict(", ".join(tests[:3]), what, expected, measured, unit, verdict_of(ratio), reason)


def _iops_row(direction: str, model: DirectionModel, expected: float | None) -> Verdict | None:
    if expected is None:
        return None
    if model.iops_cap is not None:
        cap = model.iops_cap
        return _row(
            f"{direction} IOPS cap",
            cap.tests,
            expected,
            cap.value,
            "IOPS",
            f"the fitted cap (±{cap.spread:.1%})",
        )
    if model.ceiling is not None:
        top = model.ceiling
        return _row(
            f"{direction} IOPS cap",
            top.tests,
            expected,
            top.value,
            "IOPS",
            "no cap found: the most the queue-depth ladder reached",
        )
    return None


def _bytes_row(
    direction: str, model: DirectionModel, expected: float | None, probes: Sequence[Probe]
) -> Verdict | None:
    if expected is None:
        return None
    if model.bytes_cap is not None:
        cap = model.bytes_cap
        return _row(
            f"{direction} MB/s cap",
            cap.tests,
            expected / MB,
            cap.value / MB,
            "MB/s",
            f"the fitted cap (±{cap.spread:.1%})",
        )
    top = _top_mbps(probes, direction)
    if top is None:
        return None
    return _row(
        f"{direction} MB/s cap",
        (top.name,),
        expected / MB,
        top.bytes_per_s / MB,
        "MB/s",
        "no MB/s cap met up to the largest request: the most measured",
    )


def model_verdicts(
    model: LimiterModel, burst: Burst | None, expectation: Expectation, probes: Sequence[Probe]
) -> tuple[list[Verdict], list[str]]:
    """Each fitted figure against ``expectation`` (IOPS caps per direction, MB/s caps,
    the burst's ceiling and bucket, the I/O unit), and findings on what the promise and
    the model count differently (one budget or two, the unit)."""
    found: list[Verdict] = []
    findings: list[str] = []
    for direction, own in (("read", model.read), ("write", model.write)):
        promised = expectation.read_iops if direction == "read" else expectation.write_iops
        rows = (
            _iops_row(direction, own, promised if promised is not None else expectation.iops),
            _bytes_row(direction, own, expectation.throughput_bytes_per_s, probes),
        )
        found += [row for row in rows if row is not None]
    if burst is not None and expectation.burst_iops:
        name = f"burst from rest (±{burst.spread:.1%})"
        found.append(
            _row(
                "burst ceiling",
                ("burst probe",),
                expectation.burst_iops,
                burst.ceiling,
                "IOPS",
                name,
            )
        )
        if expectation.burst_seconds and expectation.iops:
            bucket = expectation.burst_seconds * (expectation.burst_iops - expectation.iops)
            found.append(
                _row(
                    "burst credits",
                    ("burst probe",),
                    bucket,
                    burst.credits,
                    "I/Os",
                    "I/Os above the baseline until it ran out",
                )
            )
    elif expectation.burst_iops:
        findings.append(
            f"the promise bursts to {expectation.burst_iops:,.0f} IOPS; the burst probe saw"
            " no burst (a bucket spent before the run, or none)"
        )
    unit = expectation.product.count_unit_bytes
    fitted = model.read.unit or model.write.unit
    if unit and fitted and fitted.bytes != unit:
        findings.append(
            f"the promise counts I/Os in {unit // KIB} KiB units; the volume counts"
            f" {fitted.bytes // KIB} KiB"
        )
    separate = (
        expectation.read_iops is not None
        or expectation.write_iops is not None
        or expectation.product.rw_limits == "separate"
    )
    known = separate or expectation.product.rw_limits == "combined"
    if known and model.shared_iops is not None and model.shared_iops == separate:
        said = {True: "one IOPS budget", False: "separate read and write IOPS budgets"}
        findings.append(
            f"the volume has {said[model.shared_iops]}; the promise, {said[not model.shared_iops]}"
        )
    return found, findings


@dataclass(frozen=True)
class Match:
    """A catalogue product at a size whose promise the model meets in every figure
    compared (``figures``: how many)."""

    product: str
    size: float
    size_unit: str
    figures: int


def matches(
    model: LimiterModel,
    burst: Burst | None,
    promises: Sequence[Expectation],
    probes: Sequence[Probe],
) -> list[Match]:
    """The promises (catalogue products at the volume's size) whose every compared
    figure the model meets, most figures first: "which product is this volume?"."""
    found = []
    for promise in promises:
        verdicts, _ = model_verdicts(model, burst, promise, probes)
        if verdicts and all(v.verdict == "meets" for v in verdicts):
            product = promise.product
            found.append(Match(product.id, promise.size, product.size_unit, len(verdicts)))
    return sorted(found, key=lambda m: -m.figures)
