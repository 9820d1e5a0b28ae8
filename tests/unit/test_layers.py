"""The layer order is enforced: ``make lint`` runs import-linter on the contracts in
``pyproject.toml`` (``[tool.importlinter]``, written out in ``docs/design.md``).

The real tree keeps every contract. A copy of the tree with one import against a
contract (written into the copy, never into ``src/``) breaks it, and import-linter
names the import: so the contracts can fail, and a new arrow against the layers fails
``make lint``. lint-imports runs as a child process with the copy first on
``PYTHONPATH``, which comes before the editable install of ``src/``; each run takes
well under a second.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = ROOT / "pyproject.toml"
LINT_IMPORTS = (
    "import sys; from importlinter.cli import lint_imports_command; "
    "sys.exit(lint_imports_command())"
)


def lint_imports(cwd: Path, pythonpath: Path | None = None) -> subprocess.CompletedProcess[str]:
    """lint-imports on the project's contracts, with ``pythonpath`` first on the path
    (the tree it analyses: the package ``volbench`` found there), no cache."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run(
        [sys.executable, "-c", LINT_IMPORTS, str(PYPROJECT), "--no-cache"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def copy_with(tmp_path: Path, module: str, line: str) -> Path:
    """A copy of ``src/volbench`` under ``tmp_path`` whose ``module`` (a path inside the
    package, created if new) ends with ``line``; returns the folder to put on the path."""
    src = tmp_path / "src"
    shutil.copytree(
        ROOT / "src" / "volbench", src / "volbench", ignore=shutil.ignore_patterns("__pycache__")
    )
    path = src / "volbench" / module
    text = path.read_text() if path.exists() else '"""An import against the layers."""\n'
    path.write_text(text + line + "\n")
    return src


def test_the_tree_keeps_every_contract(tmp_path: Path) -> None:
    result = lint_imports(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
    assert "Layers: each imports only those below it KEPT" in result.stdout


@pytest.mark.parametrize(
    ("module", "line", "contract", "arrow"),
    [
        (
            "model.py",
            "import volbench.cli  # noqa: E402",
            "Layers: each imports only those below it BROKEN",
            "volbench.model -> volbench.cli",
        ),
        (
            "fio/upward.py",
            "from volbench.plans.runs import engine",
            "Layers: each imports only those below it BROKEN",
            "volbench.fio.upward -> volbench.plans.runs.engine",
        ),
        (
            "plans/runs/upward.py",
            "from volbench.plans.placement import placed",
            "Plans: plan kinds over where a run goes over how a run goes BROKEN",
            "volbench.plans.runs.upward -> volbench.plans.placement.placed",
        ),
        (
            "testbed.py",
            "import volbench.units  # noqa: E402",
            "Records are data: model and its parts import only each other and errors BROKEN",
            "volbench.testbed -> volbench.units",
        ),
        (
            "plans/printing.py",
            "import rich",
            "Only the commands parse arguments and draw on the terminal (click, rich) BROKEN",
            "volbench.plans.printing -> rich",
        ),
        (
            "analysis/reading.py",
            "import subprocess",
            "Analysis is pure: it reads no file, starts no process, opens no store BROKEN",
            "volbench.analysis.reading -> subprocess",
        ),
    ],
)
def test_an_import_against_a_contract_breaks_it(
    tmp_path: Path, module: str, line: str, contract: str, arrow: str
) -> None:
    result = lint_imports(tmp_path, copy_with(tmp_path, module, line))
    assert result.returncode == 1, result.stdout + result.stderr
    assert contract in result.stdout
    assert arrow in result.stdout
