"""Harness for the integration tests that run the real ``volbench`` command.

``volbench`` runs ``python -m volbench`` in a subprocess with its result store
(``VOLBENCH_DB``) and fio's work folders (``--runs-dir``) under the test's own
temporary directory, so tests never touch the user's store or each other's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from volbench.report.export import export
from volbench.report.run_sheets import run_sheet
from volbench.store.repository import Store

SHORT_RUN = ("--runtime", "500ms", "--ramp-time", "0", "--size", "32m")
"""Options that keep a quick run at about three seconds of fio (six 0.5 s tests)."""

QUICK_TESTS = (
    "randwrite-4k-iops",
    "randread-4k-iops",
    "randwrite-16k-throughput",
    "randread-16k-throughput",
    "randwrite-4k-latency",
    "randread-4k-latency",
)


PYCACHE_PREFIX: Path | None = None
"""Where the commands keep their compiled bytecode (set once per test session).

With ``PYTHONDONTWRITEBYTECODE`` every command would compile SQLAlchemy and
volbench from source again (about a second each); a shared cache outside the
source tree brings that down to a third.
"""


MY_ARRAY = """\
products:
  - id: my-array
    vendor: Our lab
    name: Array A, thin LUN
    size_unit: GiB
    capacity: {min: 1, max: 10000}
    editions:
      - from: 2024-01-01
        iops: {expr: "min(100 * size, 50000)"}
        throughput: {expr: "iops * 16 / 1024", unit: MiB/s}
"""
"""The issue's minimal private-array entry (a user's catalogue): no quote, status,
source or edition label."""


class Volbench:
    """Runs ``python -m volbench ARGS`` with a private store and runs folder."""

    def __init__(self, home: Path) -> None:
        home.mkdir(parents=True, exist_ok=True)
        self.home = home
        self.db = home / "volbench.db"
        self.runs_dir = home / "runs"
        self.env = {**os.environ, "VOLBENCH_DB": str(self.db)}
        self.env.pop("COLUMNS", None)
        if PYCACHE_PREFIX is not None:
            self.env.pop("PYTHONDONTWRITEBYTECODE", None)
            self.env["PYTHONPYCACHEPREFIX"] = str(PYCACHE_PREFIX)

    def start(self, *args: str, env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
        """Start ``volbench ARGS`` (``env`` adds to or overrides the environment)."""
        return subprocess.Popen(
            [sys.executable, "-m", "volbench", *args],
            env={**self.env, **(env or {})},
            cwd=self.home,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def __call__(
        self, *args: str, env: Mapping[str, str] | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        return finish(self.start(*args, env=env), timeout)

    def quick_args(self, target: Path | str, *args: str) -> tuple[str, ...]:
        """``run quick`` on ``target`` with short tests and this runs folder, then ``args``."""
        return (
            "run",
            "quick",
            "--target",
            str(target),
            *SHORT_RUN,
            "--runs-dir",
            str(self.runs_dir),
            *args,
        )

    def quick(self, target: Path | str, *args: str) -> subprocess.CompletedProcess[str]:
        """``volbench run quick`` on ``target`` with short tests (``args`` come last)."""
        return self(*self.quick_args(target, *args))

    def document(self, *args: str) -> dict[str, Any]:
        """The JSON document of a command run with ``--format json`` (exit code 0)."""
        proc = self(*args, "--format", "json")
        assert proc.returncode == 0, proc.stderr
        result: dict[str, Any] = json.loads(proc.stdout)
        return result

    def show(self, ref: str = "latest") -> dict[str, Any]:
        """``volbench show REF --format json``."""
        return self.document("show", ref)

    def stored(self, ref: str = "latest") -> dict[str, Any]:
        """Run ``ref`` read straight from the store (in this process: no start-up cost),
        as the document ``show --format json`` prints."""
        with Store.open(str(self.db)) as store:
            document: dict[str, Any] = json.loads(export(run_sheet(store.get_run(ref)), "json"))
        return document

    def stored_runs(self) -> list[int]:
        """Ids of the runs in the store, the one added last first ([] when there is no store
        yet)."""
        if not self.db.exists():
            return []
        with Store.open(str(self.db)) as store:
            return [run.id for run in store.list_runs()]


def fio_documents(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """fio's own JSON documents of a run (``show --format json``), one per fio process."""
    return [json.loads(raw) for raw in document["fio_outputs"]]


def raw_jobs(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every job entry fio printed for a run, in order, over all its fio processes
    (volbench runs each test in a fio process of its own)."""
    return [job for raw in fio_documents(document) for job in raw.get("jobs", [])]


def raw_job(document: Mapping[str, Any], name: str) -> dict[str, Any]:
    """The one job entry fio printed for job ``name`` (its only clone)."""
    found = [job for job in raw_jobs(document) if job["jobname"] == name]
    assert len(found) == 1, (name, len(found))
    return found[0]


def cgroup_prefix(group: Path) -> list[str]:
    """A command prefix that moves the command's process into cgroup ``group``, then
    execs the rest of the command line."""
    return ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(group)]


def real_time_fio(volbench: Volbench) -> tuple[str, ...]:
    """A command prefix under which volbench's fio, and only fio, runs at a real-time
    priority (``chrt --fifo 1``: other work waits for it), through a ``fio`` first on
    PATH that execs the real one so. volbench itself stays a normal process: at a
    real-time priority its Python (start, analysis, store: seconds of CPU) held a core
    from the kernel's own workers, which dispatch throttled I/O, and other tests' caps
    fell short (CI: a toy place's tenants 10-15 % under their caps)."""
    real, chrt = shutil.which("fio"), shutil.which("chrt")
    if chrt is None or real is None:
        pytest.skip("chrt (util-linux) or fio is not installed")
    folder = volbench.home / "real-time-fio"
    folder.mkdir(exist_ok=True)
    wrapper = folder / "fio"
    wrapper.write_text(f'#!/bin/sh\nexec {chrt} --fifo 1 {real} "$@"\n')
    wrapper.chmod(0o755)
    return ("env", f"PATH={folder}:{volbench.env.get('PATH', os.defpath)}")


def in_cgroup(
    volbench: Volbench, group: Path, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``volbench ARGS`` with its process moved into the cgroup ``group`` first (so
    fio and every job it starts run under that cgroup's limits)."""
    return prefixed(volbench, cgroup_prefix(group), *args, timeout=timeout)


def prefixed(
    volbench: Volbench, prefix: Sequence[str], *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``volbench ARGS`` run through the command ``prefix`` (a cgroup's, ``chrt``)."""
    return subprocess.run(
        [*prefix, sys.executable, "-m", "volbench", *args],
        env=volbench.env,
        cwd=volbench.home,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def finish(proc: subprocess.Popen[str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Wait for a started command and collect its exit code and output."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()  # the volbench process this test started
        proc.communicate()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def run_all(
    calls: Sequence[tuple[Volbench, Sequence[str], Mapping[str, str] | None]],
) -> list[subprocess.CompletedProcess[str]]:
    """Run several independent commands at once (each costs about a second of Python
    start-up); results in the order given."""
    started = [volbench.start(*args, env=env) for volbench, args, env in calls]
    return [finish(proc) for proc in started]


def error_line(proc: subprocess.CompletedProcess[str], exit_code: int) -> str:
    """The one ``volbench: error:`` line of a failed command, after checking that the
    command exited with ``exit_code``, printed no traceback and nothing on stdout."""
    assert proc.returncode == exit_code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.stdout == ""
    lines = [line for line in proc.stderr.splitlines() if line.startswith("volbench: error:")]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def only_error_line(proc: subprocess.CompletedProcess[str], exit_code: int) -> str:
    """Like :func:`error_line`, and stderr holds that line and nothing else."""
    line = error_line(proc, exit_code)
    assert proc.stderr.strip() == line, proc.stderr
    return line


def fio_json(text: str) -> dict[str, Any]:
    """fio's JSON document from its stdout (text around it dropped), by json.loads alone."""
    document: dict[str, Any] = json.loads(text[text.find("{") : text.rfind("}") + 1])
    return document


def fio_jobs(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """fio's job entries (local ``jobs`` or client/server ``client_stats``), without
    fio's "All clients" aggregate."""
    entries = list(document.get("jobs", [])) + list(document.get("client_stats", []))
    return [e for e in entries if e.get("jobname") != "All clients"]
