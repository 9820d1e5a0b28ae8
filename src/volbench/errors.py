"""The errors volbench reports to users: one line each, with an exit code.

Exit codes follow the command-line conventions in DESIGN.md: 1 the measured
thing failed its check, 2 bad usage or input, 3 the run itself failed; any other
exception is a bug, exit 70 (:data:`volbench.cli.main.INTERNAL_ERROR`).
"""

from __future__ import annotations


class VolbenchError(Exception):
    """Base class: ``str(error)`` is the one-line message shown to the user."""

    exit_code = 2


class UsageError(VolbenchError):
    """Bad option values or input files."""

    exit_code = 2


class TargetError(VolbenchError):
    """The target is missing, too small, not accessible or refused for safety."""

    exit_code = 2


class FioError(VolbenchError):
    """fio is missing, failed, or printed something volbench cannot read."""

    exit_code = 3


class ParseError(FioError):
    """fio output that cannot be read, or that holds a value fio cannot produce.

    ``what`` says what is wrong, ``where`` where: a position in the text ("line 3
    column 5 (byte 57)", counted from the start of the file) or a path in fio's JSON
    ("jobs[0].read.iops"). A run whose fio output is refused failed (exit 3); an
    imported file that is refused is bad input (the importer reports exit 2).
    """

    def __init__(self, what: str, where: str = "") -> None:
        super().__init__(f"{what} at {where}" if where else what)
        self.what = what
        self.where = where


class StoreError(VolbenchError):
    """The result store cannot be opened or the run asked for does not exist."""

    exit_code = 2


class CheckFailed(VolbenchError):
    """The measured thing failed its check."""

    exit_code = 1


class RunStalled(VolbenchError):
    """The run was stopped because the target stalled (``--abort-on-stall``)."""

    exit_code = 3


class RunFailed(VolbenchError):
    """The run failed for a reason outside fio: the system refused a file or folder
    it needs (permission, disk full, a device that vanished)."""

    exit_code = 3
