"""The replay runner: fio's recorded outputs answer every way a round reaches fio
(one process, fio's client for other hosts, several processes at once), so every plan
runs in unit tests without fio (:mod:`volbench.fio.runner`)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from volbench.errors import FioError
from volbench.fio.client import ClientRun, HostAddress
from volbench.fio.concurrent import ConcurrentJob
from volbench.fio.concurrent import StatusCallback as TogetherStatus
from volbench.fio.executable import write_job
from volbench.fio.raw import DocumentSplitter, RawRun
from volbench.fio.request import (
    FailureCallback,
    FioRound,
    Ran,
    StatusCallback,
    StopCheck,
    dispatch,
)


class ReplayRunner:
    """Returns recorded fio outputs, one per ``run`` call.

    DIR holds ``*.json`` files (fio's stdout, text around the JSON allowed). For a
    job file, the replay takes the first unused output (file-name order) whose job
    names are the job file's sections; when every such output was used, the last
    one again (a recorded round stands for every later round of the same cells,
    so a PTS run replays from one recorded output per distinct round). A job file
    no output matches by name gets the next unused output in file-name order. The
    job text is written to the work folder as the real runner would.
    """

    writes_logs = False
    """Nothing runs: fio's per-second logs are not written."""

    def __init__(self, directory: Path) -> None:
        files = sorted(p for p in directory.glob("*.json") if p.is_file())
        if not files:
            raise FioError(f"no recorded fio outputs (*.json) in {directory}")
        self._files = files
        self._used: set[Path] = set()
        self._last: dict[tuple[str, ...], Path] = {}
        self._names: dict[Path, tuple[str, ...]] = {}
        self._first = files[0].read_text()

    def version(self) -> str:
        match = re.search(r'"fio version"\s*:\s*"([^"]*)"', self._first)
        return f"{match.group(1) if match else 'unknown'} (replay)"

    def engine(self, target: Path) -> str:
        match = re.search(r'"ioengine"\s*:\s*"([^"]*)"', self._first)
        return match.group(1) if match else "psync"

    def execute(self, request: FioRound) -> Ran:
        return dispatch(self, request)

    def run(
        self,
        job_text: str,
        workdir: Path,
        on_status: StatusCallback | None = None,
        should_stop: StopCheck | None = None,
    ) -> RawRun:
        workdir.mkdir(parents=True, exist_ok=True)
        write_job(workdir / "job.fio", job_text)
        return self._replay(job_sections(job_text))

    def _replay(self, sections: tuple[str, ...]) -> RawRun:
        """The recorded output chosen for a job file's ``sections``, cut to them."""
        path = self._choose(sections)
        text = path.read_text()
        splitter = DocumentSplitter()
        for line in text.splitlines(keepends=True):
            splitter.feed(line)
        splitter.finish()
        output = splitter.documents[-1] if splitter.documents else text
        if sections and set(self._job_names(path)) > set(sections):
            output = _only_jobs(output, sections)
        return RawRun(
            output=output,
            returncode=0,
            stderr="",
            interrupted=False,
            command=("replay", str(path)),
            text="".join(splitter.text),
        )

    def run_hosts(
        self,
        jobs: Mapping[HostAddress, str],
        workdir: Path,
        on_failure: FailureCallback | None = None,
        keep_going: bool = False,
    ) -> ClientRun:
        """The recorded client output whose tests are the hosts' job sections; each
        host's job file is written as fio's client would be given it."""
        workdir.mkdir(parents=True, exist_ok=True)
        sections: dict[str, None] = {}
        for index, text in enumerate(jobs.values()):
            write_job(workdir / f"job-{index}.fio", text)
            sections.update(dict.fromkeys(job_sections(text)))
        raw = self._replay(tuple(sections))
        return ClientRun(raw, ())

    def run_together(
        self, jobs: Sequence[ConcurrentJob], timeout_s: float, on_status: TogetherStatus
    ) -> list[RawRun]:
        """Each job's recorded output, in order (no process starts: no hook runs)."""
        return [self.run(job.job_text, job.workdir) for job in jobs]

    def prefetch(
        self,
        job_text: str,
        workdir: Path,
        let_go: bool = True,
        check: Callable[[], None] | None = None,
    ) -> None:
        """Nothing starts ahead: each recorded output answers its own run."""

    def release(self) -> None:
        """Nothing was started ahead."""

    def _job_names(self, path: Path) -> tuple[str, ...]:
        """The distinct job names of a recorded output, in order (clones share one)."""
        if path not in self._names:
            found = _JOBNAME.findall(path.read_text())
            self._names[path] = tuple(dict.fromkeys(n for n in found if n != "All clients"))
        return self._names[path]

    def _choose(self, sections: tuple[str, ...]) -> Path:
        unused = [p for p in self._files if p not in self._used]
        named = [p for p in unused if sections and self._job_names(p) == sections]
        if named:
            self._last[sections] = named[0]
        elif sections in self._last:
            return self._last[sections]
        elif wider := [
            p for p in self._files if sections and set(sections) < set(self._job_names(p))
        ]:
            return wider[0]  # several tests recorded in one fio process: this one's part
        elif not unused:
            raise FioError(f"replay has only {len(self._files)} recorded outputs")
        path = named[0] if named else unused[0]
        self._used.add(path)
        return path


def _only_jobs(output: str, names: tuple[str, ...]) -> str:
    """A recorded fio document cut down to the jobs ``names`` (one test of a recording
    of several tests in one fio process), in fio's own layout."""
    document = json.loads(output)
    for key in ("jobs", "client_stats"):
        if key in document:
            document[key] = [j for j in document[key] if j.get("jobname") in names]
    return json.dumps(document, indent=2) + "\n"


_SECTION = re.compile(r"^\[([^\]\n]+)\]\s*$", re.MULTILINE)
_JOBNAME = re.compile(r'"jobname"\s*:\s*"([^"]*)"')


def job_sections(job_text: str) -> tuple[str, ...]:
    """The job section names of a fio job file, in order (``[global]`` excluded)."""
    return tuple(n for n in _SECTION.findall(job_text) if n != "global")
