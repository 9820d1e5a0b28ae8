"""The order pytest-xdist hands the test modules out in (``scripts/test``)."""

from __future__ import annotations

FIRST_MODULES = (
    "test_lab_draws.py",
    "test_lab_limits.py",
    "test_lab.py",
    "test_lab_recipes.py",
    "test_throttle_loop.py",
    "test_cli_pts.py",
    "test_recipe_every.py",
    "test_cli_resume.py",
)
"""The modules of several minutes each (``--durations``: the lab's random draws alone
take 7), in the order pytest-xdist hands them out first: one started last would end the
run alone on its worker while the others idle. ``scripts/test`` turns off xdist's own
order (the modules with the most tests first, ``--no-loadscope-reorder``)."""
