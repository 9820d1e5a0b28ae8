"""The catalogue's formula evaluator: arithmetic, min/max, variables, nothing else."""

from __future__ import annotations

import pytest

from volbench.specs.formula import FormulaError, evaluate, variables


def test_seed_001_formulas_evaluate() -> None:
    assert evaluate("min(1800 + 50 * size, 1200000)", {"size": 2040}) == 103800
    assert evaluate("min(120 + 0.5 * size, 4800)", {"size": 2040}) == 1140
    assert evaluate("max(-(2 - 5), 1) / 2", {}) == 1.5


def test_variables_exclude_function_names() -> None:
    assert variables("min(provisioned_iops, 50 * size, 64000)") == {"provisioned_iops", "size"}


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('true')",
        "size.real",
        "(lambda: 1)()",
        "'a' * 3",
        "min(size, key=None)",
        "size ** 2",
        "True + 1",
        "[1][0]",
        "abs(size)",
        "min()",
    ],
)
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises(FormulaError):
        evaluate(text, {"size": 4})


def test_a_missing_variable_is_named() -> None:
    with pytest.raises(FormulaError, match="needs a value for provisioned_iops"):
        evaluate("min(provisioned_iops, 4000)", {"size": 1})


def test_division_by_zero_is_an_error() -> None:
    with pytest.raises(FormulaError, match="divides by zero"):
        evaluate("1 / (size - 1)", {"size": 1})
