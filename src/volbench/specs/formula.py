"""Safe evaluation of the catalogue's declarative formulas.

A formula is an arithmetic expression over numbers and named variables
(``size``, ``provisioned_iops``, ``iops`` ...) with ``+ - * /``, parentheses,
``min(...)`` and ``max(...)``, e.g. ``min(1800 + 50 * size, 1200000)`` (UCloud
RSSD, the UCloud RSSD post). It is parsed with :mod:`ast` and only those node types are
walked: no names other than the given variables, no attributes, no other calls,
so no code can run.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping

from volbench.errors import UsageError

_FUNCTIONS = {"min": min, "max": max}
MAX_LENGTH = 1000
"""The longest formula parsed (the user's catalogue allows 300 characters)."""
MAX_CONSTANT = 1e15
"""The largest number a formula may write (a catalogue field's bound)."""


class FormulaError(UsageError):
    """A formula is not in the allowed grammar, or needs a variable not given."""


def parse(expression: str) -> ast.Expression:
    """Parse ``expression`` and check it uses only the allowed grammar."""
    if len(expression) > MAX_LENGTH:
        raise FormulaError(f"invalid formula {expression[:40]!r}...: longer than {MAX_LENGTH}")
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise FormulaError(f"invalid formula {expression!r}: {exc.msg}") from exc
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, deep nesting
        raise FormulaError(f"invalid formula {expression!r}: {exc}") from None
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED):
            raise FormulaError(
                f"invalid formula {expression!r}: {type(node).__name__} is not allowed"
            )
        if isinstance(node, ast.Call) and (
            not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS or node.keywords
        ):
            raise FormulaError(f"invalid formula {expression!r}: only min() and max() calls")
        if isinstance(node, ast.Constant) and (
            isinstance(node.value, bool)
            or not isinstance(node.value, int | float)
            or not abs(node.value) <= MAX_CONSTANT
        ):
            raise FormulaError(
                f"invalid formula {expression!r}: only numbers up to {MAX_CONSTANT:g} are allowed"
            )
    return tree


def variables(expression: str) -> frozenset[str]:
    """The variable names ``expression`` uses (functions excluded)."""
    tree = parse(expression)
    calls = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in calls)


def evaluate(expression: str, values: Mapping[str, float]) -> float:
    """The value of ``expression`` with ``values`` for its variables.

    Raises :class:`FormulaError` naming a missing variable, or when the value is not
    a finite number (``1e15 * 1e15 * ...`` overflows to infinity).
    """
    value = _value(parse(expression).body, values, expression)
    if not math.isfinite(value):
        shown = ", ".join(f"{k}={v:g}" for k, v in sorted(values.items()))
        raise FormulaError(f"formula {expression!r} gives no finite number ({shown})")
    return value


def _value(node: ast.expr, values: Mapping[str, float], text: str) -> float:
    if isinstance(node, ast.Constant):
        assert isinstance(node.value, int | float)  # parse() admits numbers only
        return float(node.value)
    if isinstance(node, ast.Name):
        if node.id not in values:
            raise FormulaError(f"formula {text!r} needs a value for {node.id}")
        return float(values[node.id])
    if isinstance(node, ast.UnaryOp):
        operand = _value(node.operand, values, text)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp):
        left = _value(node.left, values, text)
        right = _value(node.right, values, text)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if right == 0:
            raise FormulaError(f"formula {text!r} divides by zero")
        return left / right
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    args = [_value(a, values, text) for a in node.args]
    if not args:
        raise FormulaError(f"invalid formula {text!r}: {node.func.id}() needs arguments")
    return float(_FUNCTIONS[node.func.id](args))


_ALLOWED = (
    ast.Expression,
    ast.Constant,
    ast.Name,
    ast.Load,
    ast.UnaryOp,
    ast.USub,
    ast.UAdd,
    ast.BinOp,
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.Call,
)
