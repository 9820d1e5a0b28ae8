"""Each fio job's own CPU use from fio's JSON, without parsing the rest of it.

fio reports per job ``usr_cpu`` and ``sys_cpu``: the job's user and system CPU time as
a share (%) of its runtime (fio HOWTO, "Interpreting the output": "CPU usage"). The
limit verdicts need them job by job (the busiest job, the sum against a CPU quota);
the stored results hold their mean over a test's jobs.
"""

from __future__ import annotations

from typing import Any

from volbench.errors import ParseError
from volbench.fio.document import load

AGGREGATE = "All clients"


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def job_cpu(text: str) -> dict[str, tuple[float, ...]]:
    """usr + sys CPU (% of one CPU) of each job entry, in order, by job name (local
    jobs, or client/server hosts' entries without fio's "All clients" aggregate);
    {} for text that is not fio's JSON."""
    try:
        doc = load(text)
    except ParseError:
        return {}
    entries = [*(doc.get("jobs") or []), *(doc.get("client_stats") or [])]
    found: dict[str, list[float]] = {}
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("jobname") == AGGREGATE:
            continue
        usr, sys_ = _number(entry.get("usr_cpu")), _number(entry.get("sys_cpu"))
        name = entry.get("jobname")
        if isinstance(name, str) and usr is not None and sys_ is not None:
            found.setdefault(name, []).append(usr + sys_)
    return {name: tuple(values) for name, values in found.items()}
