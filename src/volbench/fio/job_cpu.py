"""Each fio job's own CPU use from fio's JSON, without parsing the rest of it.

fio reports per job ``usr_cpu`` and ``sys_cpu``: the job's user and system CPU time as
a share (%) of its runtime (fio HOWTO, "Interpreting the output": "CPU usage"). The
limit verdicts need them job by job (the busiest job, the sum against a CPU quota);
the stored results hold their mean over a test's jobs. Read with the jobs' times, in
one pass: fio/job_times.py.
"""

from __future__ import annotations

from volbench.fio.job_times import AGGREGATE as AGGREGATE
from volbench.fio.job_times import job_times


def job_cpu(text: str) -> dict[str, tuple[float, ...]]:
    """usr + sys CPU (% of one CPU) of each job entry, in order, by job name (local
    jobs, or client/server hosts' entries without fio's "All clients" aggregate);
    {} for text that is not fio's JSON."""
    return dict(job_times(text).cpu_pct)
