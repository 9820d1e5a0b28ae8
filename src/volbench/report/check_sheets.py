"""The sheet of ``volbench check``: a stored run against a catalogue product.

Each row is one verdict of :mod:`volbench.analysis.promise`: the expected figure
(from the catalogue, with its edition and sources), fio's measured figure (from
the stored result rows), ratio, verdict and reason. Notes carry the read/write
findings, tests that could not be compared, tests fio reported an error in, and
price/performance. A row fails the check (flagged) when its verdict is ``below`` or
``error``; a figure that is not the volume's (a mark of
:mod:`volbench.report.validity_sheets`) is ``not judged``, with the mark as its reason.
The check passes (``passed`` in its JSON, exit 0) when no judged figure fails.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from volbench.analysis.limit_evidence import KnownCap
from volbench.analysis.model_promise import model_verdicts
from volbench.analysis.promise import (
    FAILING,
    NOT_JUDGED,
    Verdict,
    check,
    measured_tests,
    not_judged,
    passed,
)
from volbench.analysis.run_limits import run_verdicts
from volbench.analysis.validity import Validity
from volbench.errors import UsageError
from volbench.model import RunRecord
from volbench.plans.limits import NAME as LIMITS
from volbench.plans.runs import fill
from volbench.report.burst_sheets import bucket_lines, catalogue_burst_lines, run_bursts
from volbench.report.limit_sheets import LimitRow, facts_of, limit_rows
from volbench.report.limits_card import fitted_model
from volbench.report.rows import Row, documents, number
from volbench.report.sheet import Column, Sheet
from volbench.report.summary import limit_phrase
from volbench.report.validity_sheets import Verdicts, given
from volbench.specs import run_promise
from volbench.specs.catalogue import Catalogue
from volbench.specs.expectation import (
    Expectation,
    InstanceCaps,
    expect,
    given_caps,
    instance_caps,
)
from volbench.specs.instances import find_limit
from volbench.specs.price import cost, rate_cost


@dataclass(frozen=True)
class CheckRequest:
    """What to check a run against; ``None`` product/size come from run labels
    (``product`` and ``size_gib`` or ``size``), provisioned values not given from its
    ``provisioned_iops``, ``provisioned_mb_s`` and ``extra_performance`` labels
    (:mod:`volbench.specs.run_promise`)."""

    product: str | None
    size: float | None
    as_of: str | None = None
    provisioned: Mapping[str, float] | None = None
    instance_iops: float | None = None
    instance_mb_s: float | None = None
    instance: str | None = None  # a VM type of the catalogue's instance table
    count_unit_bytes: int | None = None  # the user's I/O counting unit instead of the vendor's


def subject(run: RunRecord, request: CheckRequest) -> tuple[str, float]:
    """The product and size to check: the options, else the run's labels."""
    product = request.product or run.labels.get("product")
    size_text = run.labels.get("size_gib") or run.labels.get("size")
    size = request.size
    if size is None and size_text is not None:
        try:
            size = float(size_text)
        except ValueError:
            raise UsageError(f"run {run.id} label size_gib={size_text!r} is not a number") from None
    if product is None or size is None:
        raise UsageError(f"run {run.id} has no product/size_gib labels: give --product and --size")
    return product, size


def _num(value: object) -> str:
    return f"{number(value):,.1f}" if number(value) >= 100 else f"{number(value):,.3g}"


def _money(value: float | None, currency: str, per: str) -> str | None:
    return None if value is None else f"{value:,.4f} {currency}/month per {per}"


@dataclass(frozen=True, eq=False)
class PriceRow(Row):
    """Price/performance in one currency and billing model: the monthly cost, the
    promised and measured IOPS and MB/s (10^6 bytes/s), and the monthly cost per each
    (None: no such figure)."""

    currency: str
    billing: str
    monthly: float
    promised_iops: float | None
    promised_mb_s: float | None
    measured_iops: float | None
    measured_mb_s: float | None
    per_promised_iops: float | None
    per_promised_mb_s: float | None
    per_measured_iops: float | None
    per_measured_mb_s: float | None


def price_performance(
    expectation: Expectation, measured_iops: float | None, measured_mb_s: float | None
) -> tuple[list[str], list[PriceRow]]:
    """Notes and JSON rows of price/performance, one per currency and billing
    model: monthly cost per promised IOPS and MB/s (the expectation at the
    size) and per measured IOPS and MB/s: the best IOPS of the IOPS-bound
    deep-queue tests, the best MB/s of the throughput-bound ones (None: no such
    test; a 4 KiB IOPS test says nothing of the price per MB/s)."""
    notes: list[str] = []
    rows: list[PriceRow] = []
    e = expectation
    for total in cost(e.product, e.size, 1.0, e.variables, e.as_of):
        promised = rate_cost(total, expectation.iops, expectation.throughput_mb_s)
        measured = rate_cost(total, measured_iops, measured_mb_s)
        c = total.currency
        parts = [
            f"price/performance ({total.billing}): {total.monthly:,.2f} {c}/month",
            _money(promised.per_iops, c, f"promised IOPS ({promised.iops or 0:,.0f})"),
            _money(promised.per_mb_s, c, f"promised MB/s ({promised.mb_s or 0:,.1f})"),
            _money(measured.per_iops, c, f"measured IOPS ({measured_iops or 0:,.0f})")
            if measured_iops
            else "no IOPS-bound test measured",
            _money(measured.per_mb_s, c, f"measured MB/s ({measured_mb_s or 0:,.1f})")
            if measured_mb_s
            else "no throughput-bound test measured",
        ]
        sources = sorted({s for line in total.lines for s in line.price.sources})
        notes.append(", ".join(p for p in parts if p) + f" [src {', '.join(sources)}]")
        rows.append(
            PriceRow(
                currency=c,
                billing=total.billing,
                monthly=total.monthly,
                promised_iops=promised.iops,
                promised_mb_s=promised.mb_s,
                measured_iops=measured_iops,
                measured_mb_s=measured_mb_s,
                per_promised_iops=promised.per_iops,
                per_promised_mb_s=promised.per_mb_s,
                per_measured_iops=measured.per_iops,
                per_measured_mb_s=measured.per_mb_s,
            )
        )
    return notes, rows


def _instance(
    catalogue: Catalogue, request: CheckRequest, expectation: Expectation
) -> tuple[InstanceCaps | None, list[str]]:
    """The instance-side caps to apply (a catalogue VM type, or the values given)
    and the note naming them."""
    if request.instance is None:
        caps = given_caps(request.instance_iops, request.instance_mb_s)
        return caps, [] if caps is None else ["instance caps: as given on the command line"]
    if request.instance_iops is not None or request.instance_mb_s is not None:
        raise UsageError("give --instance or --instance-limit-iops/--instance-limit-mbps, not both")
    product = expectation.product
    row = find_limit(catalogue.instances, request.instance, product.id, product.vendor)
    figures = [
        f"{name} {value:,.6g}"
        for name, value in (
            ("IOPS", row.iops),
            ("baseline IOPS", row.iops_baseline),
            ("read IOPS", row.read_iops),
            ("write IOPS", row.write_iops),
            (row.unit, row.throughput),
            (f"baseline {row.unit}", row.throughput_baseline),
            (f"read {row.unit}", row.read_throughput),
            (f"write {row.unit}", row.write_throughput),
        )
        if value is not None
    ]
    note = (
        f"instance caps: {row.instance} ({row.label}, from {row.from_date}): {', '.join(figures)}"
        f" [{row.status} {', '.join(row.sources)}]"
    )
    return instance_caps(row), [note]


def _iops_text(e: Expectation) -> str:
    if e.read_iops is not None or e.write_iops is not None:
        return f"read {e.read_iops or 0:,.0f} / write {e.write_iops or 0:,.0f}"
    return f"{e.iops or 0:,.0f}"


def count_unit_lines(given: int | None, vendor: int | None) -> list[str]:
    """Say so when the I/O counting unit is the user's (``--count-unit``), not the vendor's."""
    if given is None:
        return []
    theirs = f"{vendor // 1024} KiB" if vendor else "none (each I/O counts as one)"
    return [f"I/O counted in {given // 1024} KiB units (--count-unit); the catalogue's: {theirs}"]


def check_sheet(
    run: RunRecord,
    catalogue: Catalogue,
    request: CheckRequest,
    volume: Sequence[KnownCap] = (),
    validity: Verdicts | None = None,
) -> Sheet:
    """Check ``run`` against the catalogue (a limits run: its fitted model, figure by
    figure); a UsageError when nothing compares. ``volume``: the caps of the volume's
    fitted model (:mod:`volbench.volume_limits`), for the limit verdicts; ``validity``:
    the command's (:class:`Verdicts`: a figure not the volume's is not judged)."""
    name, size = subject(run, request)
    product = catalogue.find(name)
    vendor_unit = product.count_unit_bytes
    if request.count_unit_bytes is not None:  # the EC2/Azure disk article's 16 KiB AWS rule
        product = dataclasses.replace(product, count_unit_bytes=request.count_unit_bytes)
    provisioned = {**run_promise.provisioned(run.labels), **(request.provisioned or {})}
    expectation = expect(product, size, request.as_of, provisioned)
    tests, skipped = measured_tests(fill.without(run).results)  # --fill: not a test to judge
    bursts = run_bursts(run)
    caps, instance_notes = _instance(catalogue, request, expectation)
    if run.plan == LIMITS:
        found = fitted_model(run)
        burst = found.burst[1] if found.burst else None
        verdicts, findings = model_verdicts(found.model, burst, expectation, found.probes)
    else:
        verdicts, findings = check(tests, expectation, caps)
        verdicts = judged(verdicts, run, given(validity))
    if not verdicts:
        why = "; ".join(skipped) or "it holds no results"
        raise UsageError(f"run {run.id} has no workload that can be compared: {why}")
    bound = {v.test: v.metric for v in verdicts if v.metric in ("IOPS", "MB/s")}
    deep = [t for t in tests if t.outstanding > 1]
    best_iops = max((t.iops for t in deep if bound.get(t.test) == "IOPS"), default=None)
    best_mb_s = max(
        (t.bw_bytes_per_s / 1e6 for t in deep if bound.get(t.test) == "MB/s"), default=None
    )
    price_notes, price_rows = price_performance(expectation, best_iops, best_mb_s)
    rows = tuple(VerdictRow.of(v) for v in verdicts)
    columns = (
        Column("test", "test"),
        Column("metric", "metric"),
        Column("expected", "expected", _num, numeric=True),
        Column("measured", "measured", _num, numeric=True),
        Column("unit", "unit"),
        Column("ratio", "ratio", lambda v: f"{number(v):.2f}", numeric=True),
        Column("verdict", "verdict"),
        Column("reason", "reason"),
    )
    edition = expectation.edition
    notes = (
        f"expected: {product.id} at {size:g} {product.size_unit}, formulas {edition.label!r}"
        f" (from {edition.from_date}); IOPS {_iops_text(expectation)}, throughput"
        f" {expectation.throughput_value or 0:,.1f} {expectation.throughput_unit}",
        *catalogue_burst_lines(expectation),
        *bucket_lines(bursts, expectation),
        *count_unit_lines(request.count_unit_bytes, vendor_unit),
        *instance_notes,
        f"measured: fio's figures as stored for run {run.id}; a figure meets the promise"
        " at 0.9 to 1.1 times the expected value (AWS's own band: at least 90% of"
        ' provisioned IOPS 99% of the time, Amazon EC2 user guide, "General Purpose SSD'
        " volumes\"; volbench holds every vendor's product to it)",
        *error_lines(verdicts),
        *not_judged_lines(verdicts),
        *findings,
        *(
            ["latency: the vendor states none, QD 1 tests not checked"]
            if not expectation.latency
            else []
        ),
        *(f"not compared: {s}" for s in skipped),
        *price_notes,
    )
    limit_notes, limit_rows = check_limits(run, expectation, caps, request.instance, volume)
    notes = (*notes, *limit_notes)
    flagged = frozenset(i for i, v in enumerate(verdicts) if v.verdict in FAILING)
    document = {
        "run": run.id,
        "product": product.id,
        "size": size,
        "size_unit": product.size_unit,
        "edition": edition.label,
        "edition_from": edition.from_date,
        "instance": request.instance,
        "verdicts": documents(rows),
        "findings": findings,
        "not_compared": skipped,
        "notes": list(notes),
        "price_performance": documents(price_rows),
        "limits": documents(limit_rows),
        "passed": passed(verdicts),
    }
    if bursts:
        document["bursts"] = [b.row() for b in bursts]
    title = f"Run {run.id} vs {product.vendor} {product.name} at {size:g} {product.size_unit}"
    return Sheet(title, columns, rows, document, notes, flagged)


def judged(verdicts: Sequence[Verdict], run: RunRecord, validity: Verdicts) -> list[Verdict]:
    """``verdicts`` with each figure that is not the volume's (``validity``) ``not
    judged`` (a test's last round, as the check compares it; a figure of a test fio
    reported an error in stays ``error``)."""
    last: dict[str, Validity] = {}
    for (_, test), verdict_of_test in sorted(validity.of(run).items()):
        last[test] = verdict_of_test
    found = []
    for verdict in verdicts:
        marked = last.get(verdict.test)
        if marked is not None and not marked.valid and verdict.verdict != "error":
            verdict = not_judged(verdict, marked.reason())
        found.append(verdict)
    return found


def not_judged_lines(verdicts: Sequence[Verdict]) -> list[str]:
    """What ``not judged`` means, when there are any."""
    tests = list(dict.fromkeys(v.test for v in verdicts if v.verdict == NOT_JUDGED))
    if not tests:
        return []
    return [
        f"not judged: {', '.join(tests)}: the figure is not the volume's (a mark: volbench"
        " explain), so it neither meets nor fails the promise; the check passes only when"
        " every judged figure meets it"
        + ("; no figure was judged" if all(v.verdict == NOT_JUDGED for v in verdicts) else "")
    ]


def error_lines(verdicts: Sequence[Verdict]) -> list[str]:
    """What the ``error`` verdicts mean, when there are any."""
    tests = list(dict.fromkeys(v.test for v in verdicts if v.verdict == "error"))
    if not tests:
        return []
    return [
        f"error: fio reported an error in {', '.join(tests)}: the test stopped early, so its"
        " figure does not meet the promise, whatever its value (it fails the check as below)"
    ]


def latency_floor_ns(expectation: Expectation) -> float | None:
    """The lowest mean latency (ns) the product's medium can give: half the least its
    vendor states (None: it states none); under it, a cache answered (the limit verdict's
    cache rule, the validity mark "cache")."""
    latency = expectation.latency
    return latency.min_ms * 1e6 / 2 if latency and latency.min_ms else None


def check_limits(
    run: RunRecord,
    expectation: Expectation,
    caps: InstanceCaps | None,
    instance: str | None,
    fitted: Sequence[KnownCap] = (),
) -> tuple[list[str], list[LimitRow]]:
    """What limited each test, with the volume's promised figures (and the instance's
    caps, and its fitted model's: ``fitted``) as limits it could meet: notes (one per
    test) and the JSON rows."""
    product = expectation.product
    known = [
        KnownCap(
            f"the {product.vendor} {product.name} {expectation.size:g} {product.size_unit} volume",
            expectation.iops,
            expectation.throughput_bytes_per_s,
            unit_bytes=product.count_unit_bytes,
        )
    ]
    label = known[0].label
    for direction, iops in (("read", expectation.read_iops), ("write", expectation.write_iops)):
        if iops is not None:
            known.append(
                KnownCap(
                    f"{label} ({direction} limit)", iops, None, direction, product.count_unit_bytes
                )
            )
    if caps is not None:
        known.append(KnownCap(f"the {instance or 'instance'} instance", caps.iops, caps.bw))
    low = latency_floor_ns(expectation)
    rows = limit_rows(run_verdicts(facts_of(run), [*known, *fitted], low))
    notes = [f"{r.test}: {limit_phrase(r.limit)}" + (f" ({r.why})" if r.why else "") for r in rows]
    return notes, rows


@dataclass(frozen=True, eq=False)
class VerdictRow(Row):
    """A checked metric of a test as a row (:class:`volbench.analysis.promise.Verdict`):
    the expected and measured figures in ``unit``, measured / expected, the verdict
    (meets, below, above) and why."""

    test: str
    metric: str
    expected: float
    measured: float
    unit: str
    ratio: float
    verdict: str
    reason: str

    @classmethod
    def of(cls, v: Verdict) -> VerdictRow:
        return cls(v.test, v.metric, v.expected, v.measured, v.unit, v.ratio, v.verdict, v.reason)
