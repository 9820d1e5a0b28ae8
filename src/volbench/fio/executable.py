"""The fio program on this machine: where it is, its version, which ioengine works.

The ioengine order is io_uring -> libaio -> psync (DESIGN.md "fio usage"): the
first engine that completes a tiny direct read of a probe file is used, and the
choice is recorded with the run.
"""

from __future__ import annotations

import ctypes
import functools
import os
import shutil
import signal
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from volbench.errors import FioError
from volbench.fio.ctrl_c import kill_group, start_held
from volbench.fio.job_text import escape_filename

ENGINE_ORDER: tuple[str, ...] = ("io_uring", "libaio", "psync")

INSTALL_HINT = "install it with `apt-get install fio` or run `make setup`"


def fio_path() -> str:
    """Absolute path of fio, or FioError when it is not installed."""
    path = shutil.which("fio")
    if path is None:
        raise FioError(f"fio is not installed: {INSTALL_HINT}")
    return path


def _ask(option: str) -> subprocess.CompletedProcess[str]:
    """``fio OPTION`` (an option that prints and exits), its output as text."""
    try:
        return subprocess.run(
            [fio_path(), option], capture_output=True, text=True, timeout=30, check=False
        )
    except OSError as exc:
        raise FioError(f"cannot start fio: {exc.strerror}") from exc


@functools.cache
def fio_version() -> str:
    """fio's own version string, e.g. ``fio-3.33``."""
    done = _ask("--version")
    version = done.stdout.strip()
    if done.returncode != 0 or not version:
        raise FioError(f"`fio --version` failed with exit code {done.returncode}")
    return version


@functools.cache
def fio_engines() -> frozenset[str]:
    """The ioengines this fio was built with, as ``fio --enghelp`` lists them (one per
    indented line after "Available IO engines:")."""
    lines = _ask("--enghelp").stdout.splitlines()
    return frozenset(line.strip() for line in lines[1:] if line[:1].isspace() and line.strip())


@dataclass(frozen=True)
class Probe:
    """One probe read: whether it worked, whether fio printed its JSON result at all
    (a real fio does even when the read fails; a broken or fake one does not), and
    what it said (exit code and first line of its errors)."""

    works: bool
    answered: bool
    said: str


PROBE_TIMEOUT_S = 60.0
"""Seconds an engine probe's 64 KiB read may take."""


def _probe(engine: str, target: Path) -> Probe:
    cmd = [
        fio_path(),
        "--name=probe",
        f"--filename={escape_filename(str(target))}",
        "--readonly",
        "--size=64k",
        "--bs=4k",
        "--rw=read",
        f"--ioengine={engine}",
        "--direct=1",
        "--iodepth=2",
        "--output-format=json",
    ]
    try:  # as every fio: known before an interrupt, dying with volbench
        proc, interrupted = start_held(lambda: start_fio(cmd, Path(os.curdir)))
    except FioError as exc:
        return Probe(False, False, str(exc))
    try:
        if interrupted:
            raise KeyboardInterrupt
        stdout, stderr = proc.communicate(timeout=PROBE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        kill_group(proc)  # not reaped yet
        proc.communicate()
        return Probe(False, False, f"no answer in {PROBE_TIMEOUT_S:.0f} s")
    except BaseException:
        if proc.returncode is None:  # not reaped yet: its group id is still its own
            kill_group(proc)
            proc.wait()
        raise
    errors = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = f"exit code {proc.returncode}" + (f": {errors[0][:200]}" if errors else "")
    answered = '"fio version"' in stdout
    return Probe(proc.returncode == 0 and '"error" : 0' in stdout, answered, said)


@functools.cache
def best_engine(target: Path) -> str:
    """The first ioengine of ENGINE_ORDER that does direct reads of ``target``.

    The probe reads the first 64 KiB of the target itself (fio ``--readonly``):
    O_DIRECT and io_uring support differ between filesystems and devices. When no
    probe printed fio's JSON result at all (psync is built into every fio), the fio
    found does not work: the error says so, not that the target refuses direct reads.
    """
    probes = []
    for engine in ENGINE_ORDER:
        probe = _probe(engine, target)
        if probe.works:
            return engine
        probes.append(probe)
    if not any(p.answered for p in probes):
        raise FioError(
            f"the fio at {fio_path()} does not work: a 64 KiB read of {target} printed no"
            f" result ({probes[-1].said}); {INSTALL_HINT}"
        )
    raise FioError(
        f"none of the ioengines {', '.join(ENGINE_ORDER)} can do direct reads of {target}"
    )


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent() -> Callable[[], None]:
    """A hook to run in a child before exec: have the kernel send it SIGTERM when
    this process (volbench) dies.

    fio runs in a session of its own (volbench decides what reaches it on Ctrl-C),
    so without this a volbench killed with SIGKILL would leave fio writing to the
    target; on SIGTERM fio stops its jobs and exits (prctl(2), PR_SET_PDEATHSIG).
    A parent that died between fork and the prctl call sends nothing (prctl(2):
    "the parent-death signal is sent upon subsequent termination"), so the child
    then compares its parent with the pid taken here, before the fork, and exits
    without starting fio.
    """
    parent = os.getpid()

    def hook() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(128 + signal.SIGTERM)

    return hook


_SETPRIV = "setpriv"
"""util-linux's setpriv(1): ``--pdeathsig SIG`` calls prctl(PR_SET_PDEATHSIG) and
execs the rest of its command line."""

_SAME_PARENT = 'if [ "$PPID" != "$1" ]; then exit 143; fi; shift; exec "$@"'
"""POSIX sh: exec the rest of the arguments only while the parent is the pid given
(143 = 128 + SIGTERM, what a fio stopped by the parent-death signal would return)."""


@functools.cache
def _setpriv_path() -> str | None:
    """setpriv's absolute path, None when util-linux's setpriv or a POSIX sh is missing."""
    return shutil.which(_SETPRIV) if shutil.which("sh") else None


def dying_with_parent(command: Sequence[str]) -> list[str] | None:
    """``command`` wrapped to die with this process without a Python hook in the child:
    ``setpriv --pdeathsig TERM`` (the prctl of :func:`die_with_parent`), then ``sh``
    compares its parent with this process's pid, taken here before the fork, and
    execs ``command`` only while they are the same (the race :func:`die_with_parent`
    closes). Both exec in place, so the child's pid, session and parent stay fio's.
    None when setpriv is not installed.

    With no ``preexec_fn``, :mod:`subprocess` starts the child with ``vfork`` (CPython
    3.10+, Linux): the parent's page tables are not copied at every fio start.
    """
    setpriv = _setpriv_path()
    if setpriv is None:
        return None
    check = ["sh", "-c", _SAME_PARENT, "volbench-fio", str(os.getpid())]
    return [setpriv, "--pdeathsig", "TERM", "--", *check, *command]


def write_job(path: Path, text: str) -> None:
    """Write the job file ``path`` for fio; an OS error names the file (a full disk's
    ENOSPC comes from ``write``, which knows no file name)."""
    try:
        path.write_text(text)
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from exc


def start_fio(
    command: Sequence[str], workdir: Path, before_exec: Callable[[], None] | None = None
) -> subprocess.Popen[str]:
    """Start fio with ``command`` in ``workdir``: stdout and stderr piped as text lines,
    no stdin, in a session of its own (volbench decides what reaches it on Ctrl-C),
    dying with volbench: ``before_exec`` run in the child when given (it must call the
    hook of :func:`die_with_parent` itself), else ``command`` wrapped by
    :func:`dying_with_parent` (the hook where setpriv is missing).

    Raises FioError when fio cannot be started.
    """
    argv = None if before_exec else dying_with_parent(command)
    if argv is None:
        argv, before_exec = list(command), before_exec or die_with_parent()
    try:
        return subprocess.Popen(
            argv,
            cwd=workdir,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
            start_new_session=True,
            preexec_fn=before_exec,
        )
    except OSError as exc:
        raise FioError(f"cannot start fio: {exc.strerror or exc}") from exc
