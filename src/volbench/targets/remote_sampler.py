"""Samples another host and its disk once a second, as the local sampler samples this
machine (targets/sampler.py), through a channel volbench already has to it.

The sampler script (targets/remote_stream.py) runs for the whole run on its channel
(targets/remote_channel.py: an ssh session, a lab guest's TCP shell); a thread reads
its stream, turns each pair of consecutive readings into a
:class:`~volbench.model.HostSample` with the local sampler's own arithmetic
(:func:`~volbench.targets.sampler.sample_between`) and keeps those of the round
under way: :meth:`RemoteSampler.begin` when a round starts, :meth:`RemoteSampler.end`
when it has ended (it asks for a reading at once and waits for it, a few seconds at
most: a reading of a block begun after fio ended).

Times: a reading's clock is the host's ``/proc/uptime``; elapsed time between two
readings is the difference of those, and sample times are put on this machine's
Unix clock by the offset of the first reading (the time it arrived here), so they
line up with the round's start and end as volbench stores them. Readings further
apart than :data:`MAX_GAP_S` (a host that was suspended, a garbled clock) give no
sample: the later one starts afresh.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from typing import IO

from volbench.model import HostSample
from volbench.targets.remote_channel import Channel, ChannelError
from volbench.targets.remote_stream import MAX_LINE, StreamParser
from volbench.targets.sampler import Reading, sample_between

READY_S = 20.0
"""Seconds the first reading may take (an ssh login, a slow guest)."""
MAX_GAP_S = 10.0
"""Readings further apart than this give no sample (see the module)."""
NOT_SAMPLED = "is not sampled: "
"""How a run's warnings say why a host was not sampled: ``host NAME is not sampled:
REASON`` (the limit sheets read the reason back)."""


class RemoteSampler:
    """One host's samples over ``channel`` for a run (see the module): :meth:`open`,
    then :meth:`begin`/:meth:`end` around each round, :meth:`close` at the end.
    ``failure`` is why it gives no samples (None while it works)."""

    def __init__(
        self,
        name: str,
        channel: Channel,
        *,
        interval_s: float = 1.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.name = name
        self.failure: str | None = None
        self.parser = StreamParser()
        self._channel = channel
        self._interval_s = interval_s
        self._clock = clock
        self._offset: float | None = None
        self._last: Reading | None = None
        self._arrived = 0
        self._begun = 0
        """Blocks whose ``@begin`` line came so far (their files are read after it)."""
        self._done = 0
        """The number of the latest block (as counted in ``_begun``) that gave a reading."""
        self._round: list[HostSample] | None = None
        self._ended = False
        self._closing = False
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    @property
    def device(self) -> str | None:
        """The host's disk sampled (its sysfs name), None: none."""
        return self.parser.device

    def open(self, ready_s: float = READY_S) -> None:
        """:meth:`start`, then :meth:`ready`."""
        self.start()
        self.ready(ready_s)

    def start(self) -> None:
        """Start the script (in the calling thread: a channel's process may be bound to
        the life of the thread that started it, PR_SET_PDEATHSIG) and its reader."""
        try:
            stream = self._channel.open()
        except ChannelError as error:
            self.failure = str(error)
            return
        self._thread = threading.Thread(
            target=self._read, args=(stream,), name=f"volbench-sampler {self.name}", daemon=True
        )
        self._thread.start()

    def ready(self, ready_s: float = READY_S) -> None:
        """Wait for the first reading (``ready_s`` at most); :attr:`failure` says why
        when none came, and the channel is closed."""
        with self._changed:
            self._changed.wait_for(lambda: self._arrived > 0 or self._ended, ready_s)
            if self.failure is None and not self._arrived and not self._ended:
                self.failure = f"no sample from it in {ready_s:g} s"
        if self.failure is not None:
            self.close()

    def _read(self, stream: IO[bytes]) -> None:
        """Read the stream to its end, a line of at most :data:`MAX_LINE` bytes at a time."""
        try:
            while line := stream.readline(MAX_LINE + 1):
                if len(line) > MAX_LINE and not line.endswith(b"\n"):
                    self.parser.overlong()  # and the rest of the line goes
                    while (rest := stream.readline(MAX_LINE + 1)) and not rest.endswith(b"\n"):
                        pass
                    continue
                if line.startswith(b"@begin "):
                    with self._changed:
                        self._begun += 1
                reading = self.parser.line(line.decode("ascii", errors="replace"))
                if reading is not None:
                    self._take(reading)
        except (OSError, ValueError):
            pass  # closed under it
        with self._changed:
            self._ended = True
            if not self._closing and self.failure is None:
                self.failure = f"its sampling session ended ({self._channel.reason()})"
            self._changed.notify_all()

    def _take(self, reading: Reading) -> None:
        """A reading arrived: the sample since the one before, kept during a round."""
        if self._offset is None:
            self._offset = self._clock() - reading.time_s
        reading = dataclasses.replace(reading, time_s=reading.time_s + self._offset)
        last, sample = self._last, None
        if last is not None and 0 < reading.time_s - last.time_s <= MAX_GAP_S:
            sample = sample_between(last, reading, self.parser.hz)
        with self._changed:
            if last is None or reading.time_s > last.time_s or sample is not None:
                self._last = reading
            if sample is not None and self._round is not None:
                self._round.append(sample)
            self._arrived += 1
            self._done = self._begun
            self._changed.notify_all()

    def begin(self) -> None:
        """A round starts: keep the samples from the latest reading on."""
        with self._changed:
            self._round = []

    def mark(self) -> int:
        """The blocks begun so far (see :meth:`end`)."""
        with self._changed:
            return self._begun

    def end(self, after: int | None = None, wait: bool = True) -> tuple[HostSample, ...]:
        """The round's samples, up to a reading of a block begun after ``after`` (a
        :meth:`mark` taken once fio ended; None: now): the script is asked for one at
        once, and waited for two intervals and a second at most (``wait`` False: not
        at all)."""
        if wait:
            self._channel.poke()
        with self._changed:
            seen = self._begun if after is None else after
            self._changed.wait_for(
                lambda: self._done > seen or self._ended,
                2 * self._interval_s + 1.0 if wait else 0.0,
            )
            found, self._round = tuple(self._round or ()), None
            return found

    def close(self) -> None:
        """End the script and the reading thread."""
        with self._changed:
            self._closing = True
        self._channel.close()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)
