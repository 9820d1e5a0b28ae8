"""How every command that runs fio ends it.

A run is started by :func:`volbench.plans.starting.started` (its session by
:func:`volbench.plans.starting.open_session`). :func:`conclude` is the one place an
interrupted run ends the command: where it is and how to continue it, then exit 130
(143 after SIGTERM, :mod:`volbench.cli.main`).
"""

from __future__ import annotations

from collections.abc import Callable

from volbench.cli import console
from volbench.model import RunStatus
from volbench.plans.runs.execution import Outcome


def conclude(outcome: Outcome, show: Callable[[], None] | None = None) -> None:
    """The end of a command that ran ``outcome``: ``show`` its report; after an
    interruption (the report shown only when ``show`` is cheap enough to wait for),
    where the run is and how to continue it, and exit 130."""
    if show is not None:
        show()
    if outcome.status is RunStatus.INTERRUPTED:
        console.stderr.print(
            f"run {outcome.run_id} interrupted: every committed test is kept; see it with "
            f"`volbench show {outcome.run_id}`, continue it with "
            f"`volbench resume {outcome.run_id}`",
            markup=False,
            highlight=False,
        )
        raise KeyboardInterrupt  # main exits 130, or 128 + N after signal N (143: SIGTERM)
