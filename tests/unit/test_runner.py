"""Runners without running fio: the stdout splitter, the replay runner, RawRun."""

from __future__ import annotations

import json
import shutil
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from recorded import FIO_FIXTURES

from volbench.errors import FioError
from volbench.fio import runner as runner_module
from volbench.fio.runner import (
    DocumentSplitter,
    RawRun,
    ReplayRunner,
    SubprocessRunner,
    job_sections,
)

NOTE = (
    "note: both iodepth >= 1 and synchronous I/O engine are selected, "
    "queue depth will be capped at 1\n"
)


def split(text: str) -> tuple[DocumentSplitter, list[str]]:
    """Feed ``text`` line by line; also return what ``feed`` handed back."""
    splitter = DocumentSplitter()
    returned = [d for line in text.splitlines(keepends=True) if (d := splitter.feed(line))]
    splitter.finish()
    return splitter, returned


# --- DocumentSplitter on a real --status-interval stream ---------------------------


def test_stream_splits_into_its_documents(
    status_stream: str, status_documents: list[dict[str, Any]]
) -> None:
    splitter, returned = split(status_stream)
    assert len(status_documents) == 4  # three interim documents and the final one
    assert returned == splitter.documents
    assert [json.loads(d) for d in splitter.documents] == status_documents


def test_last_document_is_fios_final_output_verbatim(
    status_stream: str, status_documents: list[dict[str, Any]]
) -> None:
    splitter, _ = split(status_stream)
    final_start = status_stream.rindex("\n{\n") + 1
    assert splitter.documents[-1] == status_stream[final_start:]
    # only the final document has the whole runtime (--runtime=3) in every job
    runtimes = [{job["job_runtime"] for job in d["jobs"]} for d in status_documents]
    assert min(runtimes[-1]) >= 3000
    assert all(max(r) < 3000 for r in runtimes[:-1])


def test_text_lines_are_kept_and_nothing_is_lost(status_stream: str) -> None:
    splitter, _ = split(status_stream)
    assert splitter.text == [NOTE, NOTE]
    assert "".join(splitter.text) + "".join(splitter.documents) == status_stream


def test_text_between_documents_and_crlf() -> None:
    splitter, returned = split('fio: start\r\n{\r\n  "a" : 1\r\n}\r\nbetween\n{\n}\nend\n')
    assert returned == ['{\r\n  "a" : 1\r\n}\r\n', "{\n}\n"]
    assert splitter.text == ["fio: start\r\n", "between\n", "end\n"]


def test_indented_braces_do_not_end_a_document() -> None:
    splitter, returned = split('{\n  "job" : {\n  }\n}\n')
    assert returned == ['{\n  "job" : {\n  }\n}\n']
    assert splitter.text == []


def test_document_cut_off_by_a_crash_becomesfixture_text() -> None:
    splitter, returned = split('{\n}\n{\n  "jobs" : [\n')
    assert returned == ["{\n}\n"]
    assert splitter.documents == ["{\n}\n"]
    assert splitter.text == ["{\n", '  "jobs" : [\n']


# --- ReplayRunner ------------------------------------------------------------------


@pytest.fixture
def replay_dir(tmp_path: Path) -> Path:
    """Recorded outputs named so that file-name order differs from copy order."""
    directory = tmp_path / "recorded"
    directory.mkdir()
    shutil.copy(FIO_FIXTURES / "stonewall_jsonplus.json", directory / "2-stonewall.json")
    shutil.copy(FIO_FIXTURES / "status_interval_stream.out", directory / "1-stream.json")
    shutil.copy(FIO_FIXTURES / "text_around_json_jsonplus.txt", directory / "3-text.json")
    (directory / "0-ignored.txt").write_text("not a recorded output\n")
    return directory


def test_replay_returns_outputs_in_file_name_order(replay_dir: Path, tmp_path: Path) -> None:
    runner = ReplayRunner(replay_dir)
    names = ["1-stream.json", "2-stonewall.json", "3-text.json"]
    runs = [runner.run(f"; job {i}\n", tmp_path / f"work{i}") for i in range(3)]
    assert [r.command for r in runs] == [("replay", str(replay_dir / n)) for n in names]
    for run in runs:
        assert (run.returncode, run.stderr, run.interrupted) == (0, "", False)


def test_replay_output_is_the_final_document(
    replay_dir: Path, tmp_path: Path, status_stream: str
) -> None:
    runner = ReplayRunner(replay_dir)
    stream = runner.run("", tmp_path / "w")
    assert stream.output == status_stream[status_stream.rindex("\n{\n") + 1 :]
    assert stream.text == NOTE + NOTE

    whole = runner.run("", tmp_path / "w")
    assert whole.output == (FIO_FIXTURES / "stonewall_jsonplus.json").read_text()
    assert whole.text == ""

    text = (FIO_FIXTURES / "text_around_json_jsonplus.txt").read_text()
    around = runner.run("", tmp_path / "w")
    assert around.output == text[text.index("\n{\n") + 1 :]
    assert around.text == text[: text.index("\n{\n") + 1]
    assert around.text.startswith("note: ")


def test_replay_writes_the_job_file_to_the_workdir(replay_dir: Path, tmp_path: Path) -> None:
    workdir = tmp_path / "runs" / "1" / "round-000"
    ReplayRunner(replay_dir).run("[global]\nfilename=/x\n", workdir)
    assert (workdir / "job.fio").read_text() == "[global]\nfilename=/x\n"


def test_replay_version_and_engine_come_from_the_first_output(
    replay_dir: Path, status_documents: list[dict[str, Any]]
) -> None:
    runner = ReplayRunner(replay_dir)
    first = status_documents[0]
    assert runner.version() == f"{first['fio version']} (replay)"
    assert runner.engine(Path("/any/target")) == first["jobs"][0]["job options"]["ioengine"]
    assert runner.engine(Path("/any/target")) == "psync"

    (replay_dir / "1-stream.json").unlink()  # now the stonewall output comes first
    assert ReplayRunner(replay_dir).engine(Path("/t")) == "libaio"


def test_replay_without_version_or_engine(tmp_path: Path) -> None:
    (tmp_path / "bare.json").write_text('{\n  "jobs" : []\n}\n')
    runner = ReplayRunner(tmp_path)
    assert runner.version() == "unknown (replay)"
    assert runner.engine(tmp_path) == "psync"


def test_replay_needs_recorded_outputs(tmp_path: Path) -> None:
    with pytest.raises(FioError, match=r"no recorded fio outputs \(\*\.json\)"):
        ReplayRunner(tmp_path)
    (tmp_path / "output.txt").write_text("{}\n")
    with pytest.raises(FioError):
        ReplayRunner(tmp_path)


def test_replay_error_when_exhausted(replay_dir: Path, tmp_path: Path) -> None:
    runner = ReplayRunner(replay_dir)
    for _ in range(3):
        runner.run("", tmp_path / "w")
    with pytest.raises(FioError, match="replay has only 3 recorded outputs"):
        runner.run("", tmp_path / "w")


def test_replay_picks_outputs_by_job_name_and_repeats_the_last(tmp_path: Path) -> None:
    directory = tmp_path / "named"
    directory.mkdir()
    for name, source in (
        ("1-clones.json", "numjobs4_jsonplus.json"),  # job "clones" (4 clones)
        ("2-randread.json", "randread_json.json"),  # job "randread"
        ("3-clones.json", "numjobs4_jsonplus.json"),
        ("4-other.json", "stonewall_jsonplus.json"),  # jobs "randwrite", "randread"
    ):
        shutil.copy(FIO_FIXTURES / source, directory / name)
    runner = ReplayRunner(directory)
    work = tmp_path / "w"

    def replayed(job_text: str) -> str:
        return Path(runner.run(job_text, work).command[1]).name

    assert job_sections("[global]\nbs=4k\n\n[randread]\nrw=randread\n") == ("randread",)
    assert replayed("[global]\n[randread]\n") == "2-randread.json"
    assert replayed("[clones]\n") == "1-clones.json"
    assert replayed("[clones]\n") == "3-clones.json"
    assert replayed("[clones]\n") == "3-clones.json"  # all used: the last one again
    assert replayed("[randread]\n") == "2-randread.json"
    assert replayed("[unrecorded]\n") == "4-other.json"  # no name matches: file order
    with pytest.raises(FioError, match="only 4 recorded outputs"):
        replayed("[another]\n")


# --- RawRun.last_error_line -----------------------------------------------------------


def raw(stderr: str = "", text: str = "") -> RawRun:
    return RawRun(output="", returncode=1, stderr=stderr, interrupted=False, command=(), text=text)


def test_last_error_line_joins_the_last_two_non_blank_stderr_lines() -> None:
    stderr = (
        "fio: first problem\n"
        "fio: engine nosuchengine not loadable\n"
        "   \n"
        "fio: failed to load engine\n\n"
    )
    assert raw(stderr).last_error_line == (
        "fio: engine nosuchengine not loadable; fio: failed to load engine"
    )
    assert "\n" not in raw(stderr).last_error_line


def test_last_error_line_from_stdout_text_and_when_silent() -> None:
    assert raw(text="  fio: job dropped  \n").last_error_line == "fio: job dropped"
    assert raw().last_error_line == ""
    assert raw(" \n\t\n").last_error_line == ""


def test_last_error_line_prefers_the_error_on_stderr() -> None:
    run = raw(stderr="fio: io_u error on file /dev/x: Input/output error\n", text=NOTE)
    assert run.last_error_line == "fio: io_u error on file /dev/x: Input/output error"


def test_an_interrupted_fio_that_does_not_end_is_killed_and_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C or SIGTERM (KeyboardInterrupt) while fio cannot end (its I/O stalled):
    SIGINT, then after the grace its process group gets SIGKILL and the runner returns
    without waiting for it, with no result document."""
    stuck = tmp_path / "fio"
    stuck.write_text("#!/bin/sh\ntrap '' INT TERM\necho '{'\necho '}'\nsleep 60 & wait\n")
    stuck.chmod(0o755)
    monkeypatch.setattr(runner_module, "fio_path", lambda: str(stuck))
    interrupts = iter([KeyboardInterrupt()])

    def on_status(_document: dict[str, object]) -> None:
        raise next(interrupts)  # the signal arrives while fio runs

    started = time.monotonic()
    raw = SubprocessRunner().run("[job]\n", tmp_path / "work", on_status)
    elapsed = time.monotonic() - started
    assert raw.interrupted and raw.killed and raw.output == ""
    assert raw.returncode == -signal.SIGKILL
    assert elapsed < 3.0, elapsed
