"""The CI skip guard: a skip CI must not have fails the run there, and only there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from skip_guard import disallowed

TESTS = """
import pytest

def test_missing_tool():
    pytest.skip("fio is not installed")

def test_kernel_fact():
    pytest.skip("zram is not available")

def test_passes():
    pass
"""


def _pytest(folder: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    tests = str(Path(__file__).parents[1])
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "skip_guard",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(folder),
            str(folder / "test_example.py"),
        ],
        env={**env, "PYTHONPATH": tests},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_ci_fails_on_a_missing_install_step_only(tmp_path: Path) -> None:
    (tmp_path / "test_example.py").write_text(TESTS)
    on_ci = _pytest(tmp_path, "true")
    assert on_ci.returncode == 1, on_ci.stdout
    assert "test_missing_tool: fio is not installed" in on_ci.stdout
    assert "test_kernel_fact" not in on_ci.stdout.split("skips CI must not have")[1]
    elsewhere = _pytest(tmp_path, None)
    assert elsewhere.returncode == 0, elsewhere.stdout


def test_reasons() -> None:
    assert disallowed("loop devices need root")
    assert disallowed("VOLBENCH_TEST_PG_URL is not set")
    assert disallowed("Chromium is not installed")
    assert not disallowed("the kernel shows no partitions of loop devices here")
