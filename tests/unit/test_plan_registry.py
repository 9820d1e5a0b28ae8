"""The two tables of plans (how a run is shown, :mod:`volbench.views`; what it is to
the run engine, :mod:`volbench.plans.kinds`): every plan the CLI can create has a row
in both, and importing a table alone gives all of it (nothing registers itself)."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

from volbench.analysis import qos_results
from volbench.cli.main import cli
from volbench.model import RW, RunSettings
from volbench.plans import capture, firsttouch, hdtune, iometer, limits, quick, replay, sweep
from volbench.plans.imported import importing
from volbench.plans.jobs import tests as job_tests
from volbench.plans.kinds import KINDS, kind
from volbench.plans.pts import driver
from volbench.plans.qos import capability as qos_capability
from volbench.plans.qos import verify as qos_verify
from volbench.plans.resumers import PLANNED, Tests, never
from volbench.views import UNKNOWN, VIEWS, view

CREATED_BY = {
    ("run", "quick"): quick.NAME,
    ("run", "sweep"): sweep.NAME,
    ("run", "iometer"): iometer.NAME,
    ("run", "scan"): hdtune.SCAN,
    ("run", "filebench"): hdtune.FILEBENCH,
    ("run", "firsttouch"): firsttouch.NAME,
    ("pts",): driver.NAME,
    ("qos", "verify"): qos_results.PLAN,
    ("qos", "plan"): qos_capability.NAME,  # --measure: the capability run
    ("import",): importing.PLAN,
    ("capture",): capture.NAME,
    ("run", "replay"): replay.NAME,
    ("run", "limits"): limits.NAME,
    ("run", "job"): job_tests.NAME,
}
"""Each command that stores runs -> the plan name of those runs."""

STORES_NO_RUN = {("run", "recipe")}
"""``volbench run`` commands that store no run: ``run recipe`` lists the clouds' recipes
and prints their job files, it runs none."""

PARTS = ("sheet", "report", "sections", "charts")

TABLE_PARTS = """
import json
from volbench.views import VIEWS
parts = ("sheet", "report", "sections", "charts")
print(json.dumps({n: [p for p in parts if getattr(e, p) is not None] for n, e in VIEWS.items()}))
"""


def _command(path: tuple[str, ...]) -> click.Command:
    command: click.Command = cli
    for name in path:
        assert isinstance(command, click.Group), path
        found = command.get_command(click.Context(command), name)
        assert found is not None, path
        command = found
    return command


def test_every_plan_the_cli_creates_has_an_entry() -> None:
    run_group = _command(("run",))
    assert isinstance(run_group, click.Group)
    run_commands = {("run", n) for n in run_group.list_commands(click.Context(run_group))}
    new = run_commands - STORES_NO_RUN
    assert new <= set(CREATED_BY), "a new `volbench run` command: add its plan here"
    for path in CREATED_BY:
        _command(path)  # the command exists
    assert set(CREATED_BY.values()) == set(VIEWS) == set(KINDS)  # a row each, none stale


def test_importing_the_table_alone_gives_the_full_table() -> None:
    found = subprocess.run(
        [sys.executable, "-c", TABLE_PARTS], capture_output=True, text=True, check=True
    )
    here = {n: [p for p in PARTS if getattr(e, p) is not None] for n, e in VIEWS.items()}
    assert json.loads(found.stdout) == here
    assert here[driver.NAME] == ["report", "sections"]
    assert here[sweep.NAME] == ["sheet", "charts"]
    assert here[quick.NAME] == ["sheet"]  # the diskmark profile's table


def test_the_table_is_read_only_and_unknown_plans_are_generic() -> None:
    with pytest.raises(TypeError):
        VIEWS["new"] = UNKNOWN  # type: ignore[index]
    assert view("no-such-plan") is UNKNOWN
    for plan in ("no-such-plan", importing.PLAN):  # shown generically
        assert all(getattr(view(plan), part) is None for part in PARTS)
    # a plan's own parts, each given runs without their fill (--fill)
    own = view(driver.NAME)
    assert [p for p in PARTS if getattr(own, p) is not None] == ["report", "sections"]


def test_how_each_plan_resumes_is_in_the_table() -> None:
    assert kind(driver.NAME).resume is driver.resume  # after its last committed round
    assert kind(qos_results.PLAN).resume is qos_verify.resume  # its tenants together
    assert kind(importing.PLAN).resume is never and kind(capture.NAME).resume is never
    assert kind(quick.NAME).resume is PLANNED
    job = kind(job_tests.NAME).resume
    assert isinstance(job, Tests) and job.together is not None and job.rebuild is None
    assert kind("no-such-plan").resume is PLANNED  # its recorded tests, if any


def test_a_sweep_run_is_rebuilt_from_its_settings() -> None:
    options = sweep.SweepOptions(RW.RANDREAD, 4096, (1, 2, 4), (1, 2), find_max=True)
    plan = sweep.find_max_plan(options)
    resumer = kind(sweep.NAME).resume
    assert isinstance(resumer, Tests) and resumer.rebuild is not None
    rebuild = resumer.rebuild
    stored = RunSettings.from_record(
        json.loads(json.dumps(RunSettings(options=plan.options).record()))
    )
    rebuilt = rebuild(stored)
    assert rebuilt.name == sweep.NAME and rebuilt.next_round is not None
    assert rebuilt.options == stored.options == plan.options
