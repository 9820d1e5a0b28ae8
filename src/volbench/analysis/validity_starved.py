"""The check "starved": fio, or the host it ran on, was short of CPU for the rate, so the
figure is the CPU's, not the volume's.

The signs and their thresholds are the limit verdict's "host CPU" rule, one test for
both (analysis/cpu_starvation.py): a fio job near all of a core (fio's usr + sys), fio's
cgroup at its CPU quota or throttled by it, or every CPU busy while fio's threads waited
for one. It reads fio's job CPU from the round's output and the host samples of the
test's own seconds: the samples whose whole second lies inside its timed part, as the
device's counters are read (analysis/device_window.py; a sample straddling an end holds
fio's start or its exit, the threads' set-up and the output's sums, which wait for a CPU
on a busy machine whatever the volume did), its round's where they cannot be placed; a
test too short to hold one whole second is not judged on the host's CPU, and says so.
Every CPU busy where fio's processes were not sampled is no mark (a busy host need not
have kept fio waiting): the test says it could not tell.
"""

from __future__ import annotations

from volbench.analysis.cpu_starvation import shortages
from volbench.analysis.validity import Checked, Mark, MarkKind
from volbench.analysis.validity_facts import TestFacts

ADVICE = (
    "give fio the CPU the rate needs: more jobs (--numjobs) on more cores, no CPU quota"
    " on its cgroup, a host with nothing else running, or a larger instance"
)


def check(facts: TestFacts) -> Checked:
    """The starved mark of ``facts`` (module docstring), or none; what it could not check."""
    measured = facts.measured
    found = shortages(
        measured.job_cpu_pct,
        measured.numjobs,
        facts.host,
        facts.cpu_quota_cores,
        facts.throttled_pct,
    )
    unchecked: tuple[str, ...] = ()
    if not facts.sampled:
        unchecked = ("the host's CPU: not sampled (fio's own job CPU checked alone)",)
    elif facts.host_note:
        unchecked = (f"the host's CPU: {facts.host_note} (fio's own job CPU checked alone)",)
    unseen = [s for s in found if not s.seen]
    if unseen:
        unchecked = (
            *unchecked,
            f"the host's CPU: {unseen[0].sentence}, but fio's processes were not sampled"
            " (whether fio waited for a CPU)",
        )
    found = [s for s in found if s.seen]
    if not found:
        return Checked(unchecked=unchecked)
    figures: dict[str, float] = {}
    for shortage in found:
        figures.update(shortage.figures)
    mark = Mark(
        MarkKind.STARVED,
        "fio was short of CPU for the rate: the figure is the CPU's, not the volume's",
        tuple(s.sentence for s in found),
        ADVICE,
        figures,
    )
    return Checked((mark,), unchecked)
