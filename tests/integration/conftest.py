"""Fixtures of the integration tests (the harness itself is in ``cli_harness``)."""

from __future__ import annotations

from pathlib import Path

import cli_harness
import pytest
from cli_harness import Volbench
from lab_guest import capacity, guest, lab  # noqa: F401 (the lab modules' fixtures)

from volbench.store.repository import Store


@pytest.fixture(scope="session", autouse=True)
def _shared_bytecode_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """One bytecode cache for every command of the session, in pytest's temp folder."""
    cli_harness.PYCACHE_PREFIX = tmp_path_factory.mktemp("pycache")
    # fill it once, before tests start many commands at the same time
    warm_up = Volbench(tmp_path_factory.mktemp("warm-up"))
    Store.open(str(warm_up.db)).close()  # `runs` reads a store, it creates none
    warm = warm_up("runs", "--format", "json")
    assert warm.returncode == 0, warm.stderr


@pytest.fixture
def volbench(tmp_path: Path) -> Volbench:
    """``volbench(*args)`` runs the real command with a store under ``tmp_path``."""
    return Volbench(tmp_path / "volbench")
