"""The suite's own scheduling: the long modules xdist hands out first exist (a module
renamed would otherwise start late again, unnoticed)."""

from __future__ import annotations

from pathlib import Path

from suite_order import FIRST_MODULES

TESTS = Path(__file__).resolve().parents[1]


def test_every_first_module_exists_once() -> None:
    for name in FIRST_MODULES:
        assert len(list(TESTS.rglob(name))) == 1, name
