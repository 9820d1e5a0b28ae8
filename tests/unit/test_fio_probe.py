"""The ioengine probe: a fio that does not work is told from a target that refuses
direct reads (issue 22: a fake fio printing only a version was reported as "none of
the ioengines can do direct reads")."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from volbench.errors import FioError
from volbench.fio import executable


@pytest.fixture(autouse=True)
def fresh_probe() -> Iterator[None]:
    executable.best_engine.cache_clear()
    yield
    executable.best_engine.cache_clear()


def _fake_fio(folder: Path, script: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fio = folder / "fio"
    fio.write_text("#!/bin/sh\n" + script)
    fio.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


def test_a_fio_printing_only_its_version_does_not_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "target.img"
    target.write_bytes(bytes(1 << 16))
    _fake_fio(tmp_path, "echo fio-3.33\n", monkeypatch)
    with pytest.raises(FioError) as error:
        executable.best_engine(target)
    message = str(error.value)
    assert message.startswith(f"the fio at {tmp_path / 'fio'} does not work: a 64 KiB read")
    assert "printed no result (exit code 0)" in message and "\n" not in message
    assert "direct reads" not in message


def test_a_fio_that_fails_says_what_it_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "target.img"
    target.write_bytes(bytes(1 << 16))
    _fake_fio(tmp_path, "echo 'fio: symbol lookup error' >&2\nexit 127\n", monkeypatch)
    with pytest.raises(FioError, match=r"exit code 127: fio: symbol lookup error"):
        executable.best_engine(target)


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_a_real_fio_that_cannot_read_the_target_blames_the_target(tmp_path: Path) -> None:
    """A real fio prints its JSON result even when the read fails: the target is named."""
    target = tmp_path / "missing.img"  # --readonly: fio refuses to create it
    with pytest.raises(FioError, match=r"none of the ioengines .* can do direct reads of"):
        executable.best_engine(target)
    assert not target.exists()
