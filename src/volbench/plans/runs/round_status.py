"""What a round's fio processes say while they run, however many there are.

Each fio process started with ``--status-interval=1`` prints a status document a
second (:mod:`volbench.fio.runner`); from them a round shows its live figures (one
process's, or the sum of the newest of each when several run at once: a QoS
verification's tenants) and watches each process for stalls
(:class:`volbench.fio.stall.StallWatch`: a job with I/O outstanding and none
completing). The first stall found stops the round when the run's stall policy
says so (``--abort-on-stall``). fio's client on other hosts prints no interim
documents: such a round is not watched.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from volbench.fio.live import LiveSample, LiveSampler
from volbench.fio.stall import StallPolicy, StallWatch, stall_reason
from volbench.model import Stall, Workload
from volbench.plans.runs.reporter import Reporter


class RoundStatus:
    """The live figures and stall watches of one round's fio processes, each given as
    the workloads it runs; process ``i``'s output is stored as round ``round_no + i``.
    Status documents may come from several reader threads at once."""

    def __init__(
        self,
        reporter: Reporter,
        policy: StallPolicy,
        round_no: int,
        processes: Sequence[Sequence[Workload]],
        *,
        watched: bool = True,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._reporter = reporter
        self._policy = policy
        self._clock = clock
        self._count = len(processes)
        started = clock()
        self._watches = (
            [
                StallWatch(
                    round_no + index,
                    started,
                    workloads[0].name,
                    policy.seconds,
                    {w.name: w.thinktime_s for w in workloads if w.thinktime_s},
                    {w.name: w.duration_s for w in workloads},
                )
                for index, workloads in enumerate(processes)
            ]
            if watched
            else []
        )
        self._samplers: dict[int, LiveSampler] = {}
        self._latest: dict[int, LiveSample] = {}
        self._lock = threading.Lock()
        self.opened: list[Stall] = []
        """Every stall seen so far, in the order they opened."""

    def on_status(self, index: int, document: dict[str, Any]) -> None:
        """Process ``index`` printed the status ``document``."""
        with self._lock:
            if index < len(self._watches):
                self._warn(self._watches[index].status(self._clock(), document))
            sample = self._samplers.setdefault(index, LiveSampler()).sample(document)
            if sample is None:
                return
            if self._count == 1:
                self._reporter.sample(sample)
                return
            self._latest[index] = sample
            self._reporter.sample(
                LiveSample(
                    f"{len(self._latest)} fio processes",
                    sum(s.iops for s in self._latest.values()),
                    sum(s.bw_bytes_per_s for s in self._latest.values()),
                    None,
                    sample.interval_s,
                    sum(s.io_bytes for s in self._latest.values()),
                )
            )

    def should_stop(self) -> bool:
        """Asked while fio runs: True once a stall was seen and the policy aborts on it."""
        with self._lock:
            now = self._clock()
            for watch in self._watches:
                self._warn(watch.tick(now))
            return self._policy.abort and bool(self.opened)

    def finish(self, now_s: float) -> list[Stall]:
        """Every stall of every process, once they have all ended."""
        with self._lock:
            return [stall for watch in self._watches for stall in watch.finish(now_s)]

    def _warn(self, stalls: list[Stall]) -> None:
        for stall in stalls:
            self.opened.append(stall)
            self._reporter.note(f"warning: {stall_reason(stall)} (I/O outstanding)")
