"""What a round asks of fio, whatever the runner: one call (:meth:`Runner.execute`
of :mod:`volbench.fio.runner`) takes one of three requests and answers with what
fio printed (:class:`Ran`).

* :class:`Here`: one fio process on this machine (a target here, or several at once
  in one job file);
* :class:`OnHosts`: one fio client process that hands each host running
  ``fio --server`` its job file (:mod:`volbench.fio.client`);
* :class:`Together`: several fio processes here at the same time, each started by a
  hook in the child (a QoS tenant joining its cgroup, :mod:`volbench.fio.concurrent`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from volbench.fio.client import ClientRun, HostAddress, HostFailure
from volbench.fio.concurrent import ConcurrentJob
from volbench.fio.concurrent import StatusCallback as TogetherStatus
from volbench.fio.raw import RawRun

FailureCallback = Callable[[HostFailure], None]
StatusCallback = Callable[[dict[str, Any]], None]
StopCheck = Callable[[], bool]
"""Asked several times a second while fio runs: True = stop fio now (it keeps what it has)."""


@dataclass(frozen=True)
class Here:
    """Run one fio job file here; call ``on_status`` with each interim JSON document
    and stop fio (as Ctrl-C does) when ``should_stop`` says so."""

    job_text: str
    workdir: Path
    on_status: StatusCallback | None = None
    should_stop: StopCheck | None = None


@dataclass(frozen=True)
class OnHosts:
    """Run each host's job file on it at once (one fio client); a host that fails is
    told to ``on_failure`` and, unless ``keep_going``, stops the others."""

    jobs: Mapping[HostAddress, str]
    workdir: Path
    on_failure: FailureCallback | None = None
    keep_going: bool = False


@dataclass(frozen=True)
class Together:
    """Start every job's fio here at once (each after its hook, in the child); wait
    for all, at most ``timeout_s`` (seconds) each."""

    jobs: Sequence[ConcurrentJob]
    timeout_s: float
    on_status: TogetherStatus


FioRound = Here | OnHosts | Together


@dataclass(frozen=True)
class Ran:
    """What fio printed for a request: one output per fio process (:class:`Together`:
    in the order of its jobs), and the hosts that failed (:class:`OnHosts`)."""

    raws: tuple[RawRun, ...]
    failures: tuple[HostFailure, ...] = ()

    @property
    def raw(self) -> RawRun:
        """The output of a request of one fio process (:class:`Here`, :class:`OnHosts`)."""
        (raw,) = self.raws
        return raw


class Shapes(Protocol):
    """A runner's own call for each kind of request."""

    def run(
        self,
        job_text: str,
        workdir: Path,
        on_status: StatusCallback | None = None,
        should_stop: StopCheck | None = None,
    ) -> RawRun: ...

    def run_hosts(
        self,
        jobs: Mapping[HostAddress, str],
        workdir: Path,
        on_failure: FailureCallback | None = None,
        keep_going: bool = False,
    ) -> ClientRun: ...

    def run_together(
        self, jobs: Sequence[ConcurrentJob], timeout_s: float, on_status: TogetherStatus
    ) -> list[RawRun]: ...


def dispatch(runner: Shapes, request: FioRound) -> Ran:
    """``request`` answered by the runner's own call for its kind."""
    match request:
        case Here():
            raw = runner.run(
                request.job_text, request.workdir, request.on_status, request.should_stop
            )
            return Ran((raw,))
        case OnHosts():
            done = runner.run_hosts(
                request.jobs, request.workdir, request.on_failure, request.keep_going
            )
            return Ran((done.raw,), tuple(done.failures))
        case Together():
            raws = runner.run_together(request.jobs, request.timeout_s, request.on_status)
            return Ran(tuple(raws))
