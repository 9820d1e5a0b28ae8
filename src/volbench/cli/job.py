"""``volbench run job``: the user's own fio job files, run as fio runs them, with
everything volbench adds to a plan (:mod:`volbench.plans.jobs.tests`)."""

from __future__ import annotations

import dataclasses
import os

import click

from volbench.cli.plan_run import TargetChoice, job_target_options, run_plan
from volbench.plans.jobs import tests as job_tests


@click.command("job")
@click.argument("files", nargs=-1, required=True, metavar="FILE.fio...")
@job_target_options
def command(files: tuple[str, ...], choice: TargetChoice) -> None:
    """Run your own fio job files as fio would: each group of jobs (up to a stonewall or
    new_group) is a test, each on the files its jobs name, checked as --target is
    (--target or --hosts replaces them). Options that run commands or reach outside the
    run are refused. Stored, resumed, sampled, watched and reported like any plan."""
    run_job_files(choice, files)


def run_job_files(choice: TargetChoice, files: tuple[str, ...]) -> None:
    """Read and check the job ``files`` (in the folder volbench was started in, with its
    environment), then run them through the one run engine (:func:`run_plan`)."""
    replaced = bool(choice.targets or choice.hosts)
    made = job_tests.plan(
        files, job_tests.cwd(), os.environ, replaced=replaced, remote=bool(choice.hosts)
    )
    choice = dataclasses.replace(choice, ioengine=made.engines)
    run_plan(choice, made.spec, made.writes, made.named)
