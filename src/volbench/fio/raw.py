"""What one fio process leaves behind (:class:`RawRun`), and how fio's stdout splits
into its JSON documents and other text (:class:`DocumentSplitter`): shared by every
way volbench starts fio (:mod:`volbench.fio.runner`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RawRun:
    """What one fio process left behind.

    ``output`` is the final JSON document exactly as fio printed it ("" when fio
    printed none); ``text`` is whatever fio printed outside its JSON documents.
    """

    output: str
    returncode: int
    stderr: str
    interrupted: bool
    command: tuple[str, ...]
    text: str = ""
    stopped: bool = False  # ``should_stop`` asked for it (not the user's Ctrl-C)
    killed: bool = False  # fio did not end when asked and was killed (SIGKILL)
    started_s: float | None = None  # when fio was started (Unix time, volbench's clock)
    ended_s: float | None = None  # when fio ended or was given up on

    @property
    def last_error_line(self) -> str:
        """fio's last two lines on stderr joined in one (fio often says what failed,
        then that it failed), else its last informational line on stdout: one of fio's
        own messages (``fio: ...``, as a server's come, after the host's name) first."""
        errors = [line.strip() for line in self.stderr.splitlines() if line.strip()]
        if errors:
            return "; ".join(errors[-2:])
        notes = [line.strip() for line in self.text.splitlines() if line.strip()]
        said = [line for line in notes if "fio: " in line]
        return (said or notes or [""])[-1]


class DocumentSplitter:
    """Splits fio's stdout into top-level JSON documents and other text.

    fio prints each JSON document starting with a line ``{`` and ending with a
    line ``}`` at column 0; anything else between documents is informational text.
    """

    def __init__(self) -> None:
        self.documents: list[str] = []
        self.text: list[str] = []
        self._current: list[str] | None = None

    def feed(self, line: str) -> str | None:
        """Take one line; return a document when this line completed one."""
        stripped = line.rstrip("\r\n")
        if self._current is None:
            if stripped == "{":
                self._current = [line]
            else:
                self.text.append(line)
            return None
        self._current.append(line)
        if stripped == "}":
            document = "".join(self._current)
            self._current = None
            self.documents.append(document)
            return document
        return None

    def finish(self) -> None:
        if self._current is not None:  # a document cut off by a crash
            self.text.extend(self._current)
            self._current = None
