"""The host and disk of each other host a run's rounds run on, sampled like this
machine's (plans/runs/round_watch.py) and stored with each round.

For the whole run, each host runs the sampler script (targets/remote_sampler.py) on
the disk under its first target, through the channel its place's kind opens
(:meth:`volbench.places.kind.PlaceKind.sampler`: a second ssh session, a lab guest's
shell port); a kind with no channel (a plain fio server) says why instead. Each
round's :class:`RemoteWatch` keeps the samples of the hosts of that round from its
start to the reading after fio ended; its commit stores them as the local ones are
stored (analysis/host_series.py), each series named after its host (``LogSeries.host``).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Mapping, Sequence

from volbench.analysis.host_series import fact_series, sample_series
from volbench.model import HostSample, LogSeries, Place
from volbench.places.table import sampler as sampler_of
from volbench.plans.runs.execution import Session
from volbench.plans.runs.round_watch import Watch, enabled
from volbench.targets.remote_sampler import NOT_SAMPLED, RemoteSampler

Samplers = Mapping[str, RemoteSampler | str]
"""Each host of a run (its name in the places): its sampler, or why it has none."""


@contextlib.contextmanager
def sampled(places: Sequence[Place]) -> Iterator[dict[str, RemoteSampler | str]]:
    """Every other host of ``places`` sampled until the block ends (started at once, then
    each waited for until its first reading); empty when sampling is off
    (``VOLBENCH_SAMPLER``)."""
    found: dict[str, RemoteSampler | str] = {}
    if enabled():
        for place in places:
            if place.host is not None and place.host not in found:
                found[place.host] = sampler_of(place.host, place.path)
    opened = [s for s in found.values() if isinstance(s, RemoteSampler)]
    try:
        for sampler in opened:  # all at once, from this thread (see RemoteSampler.start)
            sampler.start()
        for sampler in opened:
            sampler.ready()
        yield found
    finally:
        for sampler in opened:
            sampler.close()


def unsampled(samplers: Samplers) -> dict[str, str]:
    """The hosts that give no samples now, and why (one line each)."""
    why = {}
    for host, sampler in samplers.items():
        if isinstance(sampler, str):
            why[host] = sampler
        elif sampler.failure is not None:
            why[host] = sampler.failure.replace(";", ",")
    return why


def not_sampled(host: str, reason: str) -> str:
    """The run's warning that ``host`` is not sampled (the limit sheets read it back)."""
    return f"host {host} {NOT_SAMPLED}{reason}"


@dataclasses.dataclass
class RemoteWatch:
    """Watches one round on other hosts (:class:`volbench.plans.runs.round_watch.Watch`)."""

    samplers: tuple[RemoteSampler, ...]
    _samples: dict[str, tuple[HostSample, ...]] | None = None

    def start(self) -> None:
        for sampler in self.samplers:
            sampler.begin()

    def _finish(self) -> dict[str, tuple[HostSample, ...]]:
        if self._samples is None:
            marks = [s.mark() for s in self.samplers]  # then each waits for its next reading
            self._samples = {
                s.name: s.end(mark) for s, mark in zip(self.samplers, marks, strict=True)
            }
        return self._samples

    def take(self, round_no: int, test: str) -> list[LogSeries]:
        """The round's series of every host, each named after its host (the sampling
        of the round stops at the first call)."""
        found: list[LogSeries] = []
        for sampler in self.samplers:
            samples = self._finish()[sampler.name]
            facts = {"dev_hwq": sampler.parser.hw_queues} if samples else {}
            started = samples[0].time_s if samples else 0.0
            found += [
                dataclasses.replace(series, host=sampler.name)
                for series in [
                    *sample_series(round_no, test, samples),
                    *fact_series(round_no, test, started, facts),
                ]
            ]
        return found

    def stop(self) -> None:
        """Stop keeping samples when the round ended without a commit (at once)."""
        if self._samples is None:
            self._samples = {s.name: s.end(wait=False) for s in self.samplers}


def watch_of(samplers: Samplers, places: Sequence[Place]) -> RemoteWatch | None:
    """The watch of a round on ``places`` (None: none of their hosts is sampled)."""
    hosts = {p.host for p in places if p.host is not None}
    working = tuple(
        s
        for host, s in samplers.items()
        if host in hosts and isinstance(s, RemoteSampler) and s.failure is None
    )
    return RemoteWatch(working) if working else None


@contextlib.contextmanager
def watching(
    session: Session,
    samplers: Samplers,
    places: Sequence[Place],
    told: set[str],
    watched: Watch | None,
) -> Iterator[Watch | None]:
    """The block (a round on ``places``) watched by a :class:`RemoteWatch`, unless
    something watches it already (``watched``); yields what watches it. Hosts that give
    no samples are told once (``told``: those told so far): a plain fio server as a
    note, a failed session as a warning stored with the run (the limit sheets read its
    reason)."""
    for host, why in unsampled(samplers).items():
        if host not in told:
            told.add(host)
            if isinstance(samplers[host], str):
                session.reporter.note(f"host {host} {NOT_SAMPLED}{why}")
            else:
                session.warn(not_sampled(host, why))
    watch = watch_of(samplers, places)
    if watch is None or watched is not None:
        yield watched
        return
    watch.start()
    try:
        yield watch
    finally:
        watch.stop()
