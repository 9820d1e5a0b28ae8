"""Reading QoS plan files (issue 22): hostile files are one line, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from volbench.analysis.qos import MAX_TENANTS, Rates, Tenant, fit_alpha, make_plan
from volbench.analysis.qos_document import plan_document
from volbench.errors import UsageError
from volbench.plans.qos.plan_file import MAX_BYTES, read_plan


def _document() -> dict[str, object]:
    plan = make_plan(
        Rates(3888, 156, 4e8, 2e8),
        Rates(975, 0, 0, 0),
        [Tenant("web", 40), Tenant("db", 60)],
        alpha=0.2,
    )
    return plan_document(plan)


def test_a_plan_file_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(_document()))
    assert plan_document(read_plan(str(path))) == _document()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested more than 32 deep"),
        ('{"a": "' + "[" * 100 + '"}', "not a volbench QoS plan"),  # brackets in a string
        ("{", r"is not JSON \(line 1\)"),
        ("1" * 5000, "Exceeds the limit"),
    ],
)
def test_hostile_plan_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "plan.json"
    path.write_text(text)
    with pytest.raises(UsageError, match=message):
        read_plan(str(path))


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_a_capability_nan_is_refused(tmp_path: Path, literal: str) -> None:
    """Regression (issue 22): a capability `NaN` (which Python's json reads) was planned."""
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(_document()).replace('"riops": 3888', f'"riops": {literal}'))
    with pytest.raises(UsageError, match=f"{literal.lstrip('-')} is not a number JSON holds"):
        read_plan(str(path))


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("alpha", 10**400, "alpha is not a finite number"),
        ("alpha", 1e300, "alpha is not a finite number up to 1e15"),
        ("volume_gib", "40", "volume_gib is not a number"),
        ("tenants", [{"name": ["x"], "size_gib": 1}], "name is not text"),
        ("tenants", [{"name": "a", "size_gib": 1}] * (MAX_TENANTS + 1), "at most 1,000"),
    ],
)
def test_plan_figures_are_checked(tmp_path: Path, key: str, value: object, message: str) -> None:
    document = _document()
    document[key] = value
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(document))
    with pytest.raises(UsageError, match=message):
        read_plan(str(path))


def test_a_plan_file_not_utf8_or_too_large(tmp_path: Path) -> None:
    """Regression (issue 22): a file not UTF-8 was a UnicodeDecodeError traceback."""
    path = tmp_path / "plan.json"
    path.write_bytes(b'{"schema": "\xff\xfe"}')
    with pytest.raises(UsageError, match="is not UTF-8 text"):
        read_plan(str(path))
    path.write_bytes(b" " * (MAX_BYTES + 1))
    with pytest.raises(UsageError, match="larger than 1 MiB"):
        read_plan(str(path))


def test_fitting_alpha_needs_finite_figures() -> None:
    """Regression (issue 22): `qos fit --host-used nan` gave alpha nan."""
    assert fit_alpha(3888, 975, [118, 187, 235]) == pytest.approx(0.8146, abs=1e-4)
    for capability, used, achieved in (
        (3888, float("nan"), [1.0]),
        (float("inf"), 0, [1.0]),
        (3888, 0, [float("nan")]),
    ):
        with pytest.raises(UsageError, match="must be numbers"):
            fit_alpha(capability, used, achieved)
