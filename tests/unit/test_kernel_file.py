"""targets/kernel_file.py: the kernel's text files read as Path.read_text read them."""

from __future__ import annotations

from pathlib import Path

from volbench.targets.kernel_file import kernel_text, kernel_value


def test_text_as_read_text_gives_it(tmp_path: Path) -> None:
    file = tmp_path / "attr"
    file.write_bytes(b"a\r\nb\rc\n\xff" + b"x" * 70_000)  # longer than one read
    assert kernel_text(file) == file.read_text(encoding="utf-8", errors="replace")
    assert kernel_text(str(file)) == kernel_text(file)  # paths as strings too


def test_value_without_its_newline(tmp_path: Path) -> None:
    (tmp_path / "rotational").write_text("1\n")
    assert kernel_value(str(tmp_path / "rotational")) == "1"


def test_none_when_it_cannot_be_read(tmp_path: Path) -> None:
    assert kernel_text(tmp_path / "gone") is None
    assert kernel_text(str(tmp_path)) is None  # a folder
    assert kernel_value(tmp_path / "gone") is None
