"""The times of a trace file's events, checked in the order the file gives them.

blkparse(1) merges its per-CPU streams by time, and ``trace_pipe`` merges the
kernel's per-CPU buffers the same way: what is left out of order is the CPUs'
clocks apart, microseconds (a step back of 0.1 s is already far beyond it). An
event more than :data:`MAX_STEP_BACK_NS` before one printed above it is two traces
joined in one file or a broken time, and so is a trace spanning more than
:data:`MAX_SPAN_NS` (a completion a billion seconds after its issue): either
would make the profile's per-second series (one row a second,
:mod:`volbench.analysis.workload_profile`) what no one asked for. Each is refused in
one line naming the lines and what to do.
"""

from __future__ import annotations

from dataclasses import dataclass

from volbench.errors import UsageError

NS_PER_S = 1_000_000_000
MAX_SPAN_S = 7 * 86_400
"""The longest time a trace may span, in seconds: a week (a weekly cycle; a day's
trace, with its 86,400 rows a second, is well within)."""
MAX_SPAN_NS = MAX_SPAN_S * NS_PER_S
MAX_STEP_BACK_NS = 10 * NS_PER_S
"""How far (ns) an event may come before the latest one above it in the file."""


def shown(time_ns: int) -> str:
    """``time_ns`` as blkparse prints it: seconds with nine decimals."""
    return f"{time_ns // NS_PER_S}.{time_ns % NS_PER_S:09d}"


@dataclass
class EventClock:
    """The earliest and latest event times (ns) of one file so far, with their lines.

    ``source`` names the file in the messages.
    """

    source: str = "trace text"
    earliest_ns: int = 0
    earliest_line: int = 0
    latest_ns: int = 0
    latest_line: int = 0

    def check(self, time_ns: int, line: int) -> None:
        """Take the event of ``line`` at ``time_ns``; a :class:`UsageError` when it
        steps back more than :data:`MAX_STEP_BACK_NS` or stretches the trace beyond
        :data:`MAX_SPAN_NS`."""
        if not self.earliest_line:
            self.earliest_ns = self.latest_ns = time_ns
            self.earliest_line = self.latest_line = line
            return
        where = f"{self.source} line {line}"
        if time_ns < self.latest_ns - MAX_STEP_BACK_NS:
            raise UsageError(
                f"{where}: time {shown(time_ns)} s is"
                f" {(self.latest_ns - time_ns) / NS_PER_S:,.0f} s before line"
                f" {self.latest_line}'s ({shown(self.latest_ns)} s): the events are out of"
                " order (two traces in one file?): give each trace a file of its own"
            )
        if time_ns > self.latest_ns:
            self.latest_ns, self.latest_line = time_ns, line
        elif time_ns < self.earliest_ns:
            self.earliest_ns, self.earliest_line = time_ns, line
        if self.latest_ns - self.earliest_ns > MAX_SPAN_NS:
            raise UsageError(
                f"{where}: the trace would span"
                f" {(self.latest_ns - self.earliest_ns) / NS_PER_S:,.0f} s (line"
                f" {self.earliest_line} to line {self.latest_line}), beyond {MAX_SPAN_S:,} s"
                " (7 days): check the file's times, or split it (blkparse -w START:END)"
                " and import each part"
            )
