"""What the limit sheets say of a run's host and device samples: which hosts were
sampled, and exactly why one was not.

A run on this machine is sampled by plans/runs/round_watch.py, one on other hosts by
plans/runs/remote_watch.py (its series named after each host). A host that was not
sampled is one of: a plain fio server (``HOST[:PORT]``: volbench has no channel to
it), a host whose sampling session failed (an ssh session, a lab guest's shell: the
run's stored warning ``host NAME is not sampled: REASON``,
targets/remote_sampler.py), or one of a run with sampling off
(``VOLBENCH_SAMPLER=off``) or stored by a volbench that did not sample there.
"""

from __future__ import annotations

import re

from volbench.model import RunRecord
from volbench.places.table import kind_of
from volbench.plans.imported.importing import PLAN as IMPORTED
from volbench.targets.remote_sampler import NOT_SAMPLED

SAMPLED = (
    "samples: each CPU's busy share, fio's processes' CPU and run-queue wait, the"
    " device's busy time and in-flight requests, once a second while each test ran"
)
OFF = "sampling was off, or the run was stored by a volbench older than it"


def why_not(run: RunRecord, host: str) -> str:
    """Why ``host``, one of ``run``'s places' hosts, has no samples (one line)."""
    recorded = [p for p in run.settings.places if p.host == host]
    if any(p.kind is None for p in recorded):
        return _stored_before_kinds(run, host)
    why = next((p.unsampled for p in recorded if p.unsampled), None)
    return why or f"{host} was not sampled: {OFF}"


def _stored_before_kinds(run: RunRecord, host: str) -> str:
    """:func:`why_not` for a run stored by a volbench that recorded no facts of its
    places: a failed session is in the run's stored warnings (``host NAME is not
    sampled: REASON``), and the host's kind is found from its name."""
    found = re.search(rf"host {re.escape(host)} {re.escape(NOT_SAMPLED)}([^;]*)", run.error or "")
    if found:
        return f"{host} {NOT_SAMPLED}{found[1].strip()}"
    return kind_of(host).unsampled(host) or f"{host} was not sampled: {OFF}"


def sampled_note(run: RunRecord) -> str:
    """The limit sheets' note on ``run``'s host and device samples."""
    series = [s for s in run.series if s.direction == "host"]
    hosts = sorted({p.host for p in run.settings.places if p.host is not None})
    if series and not hosts:
        return SAMPLED
    if series:
        on = sorted({s.host for s in series if s.host is not None})
        missing = [why_not(run, h) for h in hosts if h not in on]
        return f"{SAMPLED}, on {', '.join(on)}" + "".join(f"; {m}" for m in missing)
    if hosts:
        why = "; ".join(why_not(run, h) for h in hosts)
    elif run.settings.places:
        why = "a run on several targets at once is not sampled"
    elif run.plan == IMPORTED:
        why = "an imported fio output holds none"
    else:
        why = OFF
    return f"no host or device samples: {why}; the verdicts rest on fio's figures alone"
