"""What a path is on another host, asked through fio's own server.

volbench reaches a ``--hosts`` host only through fio's client/server protocol
(directly, or through an SSH tunnel): it cannot look at the host's files. But fio
runs a job's ``exec_prerun`` command on the host before the job, through
``system(3)``, and skips the job when it fails (fio HOWTO, "exec_prerun"; fio
backend.c ``exec_string``). So a job that reads 4 KiB from fio's null engine after
a ``test`` of the path tells, by whether it read anything, whether the path is
what a plain file target must be there: its own canonical path (no link in it,
``readlink -f``) and not a block or character device.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from pathlib import Path

from volbench.errors import FioError, UsageError
from volbench.fio.client import HostAddress
from volbench.fio.executable import fio_path

SAFE_PATH = re.compile(r"/[A-Za-z0-9._/+@%=,:-]*\Z")
"""What a target path on another host may hold: it goes into a shell command there."""

CHECK_JOB = "volbench-path-check"
"""The check job's name: fio writes the command's output to ``NAME.prerun.txt`` in the
server's folder, which the command removes again."""


def check_job(path: str) -> str:
    """The job file asking whether ``path`` is a plain path on the host (see module)."""
    if not SAFE_PATH.match(path):
        raise UsageError(
            f"target path {path} on another host may hold only letters, digits and "
            "/ . _ - + @ % = , : (rename it or use a link-free path without them)"
        )
    out = f"{CHECK_JOB}.prerun.txt"
    test = f'test "{path}" = "`readlink -f -- {path}`" -a ! -b {path} -a ! -c {path}'
    return (
        f"[{CHECK_JOB}]\nioengine=null\nrw=read\nbs=4k\nsize=4k\n"
        f"exec_prerun={test} && rm -f {out} || (rm -f {out} && false)\n"
    )


def is_plain_path(host: HostAddress, path: str, timeout_s: float = 30.0) -> bool:
    """Whether ``path`` on ``host`` is its own canonical path and no device (a file,
    or nothing yet); FioError when fio's client gets no answer."""
    with tempfile.TemporaryDirectory(prefix="volbench-check-") as folder:
        job = Path(folder) / "check.fio"
        job.write_text(check_job(path))
        try:
            proc = subprocess.run(
                [fio_path(), host.client_option, "--output-format=json", str(job)],
                cwd=folder,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout_s,
            )
        except subprocess.TimeoutExpired as exc:
            raise FioError(f"host {host} did not answer the check of {path}") from exc
    start = proc.stdout.find("{")
    try:
        document = json.loads(proc.stdout[start:]) if start >= 0 else {}
    except ValueError as exc:
        raise FioError(f"host {host}: fio's answer to the check of {path} is not JSON") from exc
    jobs = document.get("client_stats") or document.get("jobs") or []
    read = [j.get("read", {}).get("io_bytes", 0) for j in jobs if j.get("jobname") == CHECK_JOB]
    if not read:
        raise FioError(f"host {host} did not run the check of {path}: {proc.stderr.strip()}")
    return any(b > 0 for b in read)
