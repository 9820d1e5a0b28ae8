"""How fio reads a job file's text: what a value may hold, and what fio will see.

A job file is lines of ``key=value`` under ``[section]`` headers. fio's reader
(init.c ``__parse_jobs_ini`` and parse.c, fio 3.x; seen with
``fio --parse-only --debug=parse``) does more than split lines:

- a line ends an option, so a newline in a value starts a new option or section;
- ``;`` and ``#`` start a comment anywhere on a line: ``filename=/tmp/a;b`` is
  ``/tmp/a``;
- ``${NAME}`` is replaced by the environment variable NAME, and ``$pagesize``,
  ``$mb_memory``, ``$ncpus`` by facts of the host (HOWTO "Environment variables");
- blanks at both ends of a value are dropped: ``filename=/dev/sdb `` is ``/dev/sdb``;
- in ``filename``, ``:`` separates several files unless escaped as ``\\:``.

So a value volbench writes must hold none of these, or fio would use another
file than the one the safety checks looked at. :func:`value_problem` says what is
wrong with a value; :func:`read_job` reads rendered text back the way fio does, so
the job builder can prove that the files fio will open are exactly the ones it
was given.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

from volbench.errors import UsageError

_COMMENT = re.compile(r"[;#]")
_KEY = re.compile(r"^[a-z][a-z0-9_]*\Z")
_LINE_BREAKS = {"\n": "a newline", "\r": "a carriage return", "\x00": "a NUL byte"}


class JobValueError(UsageError):
    """A value that cannot be written into an fio job file as it is."""


def control_problem(value: str) -> str | None:
    """Which line break or control character ``value`` holds (e.g. "holds a newline"),
    or None: such text is refused wherever it would be written or shown."""
    for char in value:
        if char in _LINE_BREAKS:
            return f"holds {_LINE_BREAKS[char]}"
        if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp"):
            return f"holds the control character U+{ord(char):04X}"
    return None


def value_problem(value: str, *, path: bool = False) -> str | None:
    """What would make fio read ``value`` differently from how it is written, or None.

    ``path``: the value names a file or folder, where ``\\`` is also refused (fio's
    escape character in ``filename``).
    """
    if not value:
        return "is empty"
    if control := control_problem(value):
        return control
    if comment := _COMMENT.search(value):
        return f"holds {comment.group()!r}, which starts a comment in an fio job file"
    if "$" in value:
        return "holds '$', which fio replaces by an environment variable or a host fact"
    if value != value.strip():
        return "starts or ends with a blank, which fio drops"
    if path and "\\" in value:
        return "holds '\\', fio's escape character in file names"
    return None


def check_value(option: str, value: str, *, path: bool = False) -> str:
    """``value`` unchanged when fio reads it as written; else JobValueError naming
    ``option``."""
    problem = value_problem(value, path=path)
    if problem is not None:
        raise JobValueError(f"{option} {value!r} {problem}: refused (pick another value)")
    return value


def check_key(key: str) -> str:
    """An option name as fio spells them (lower-case letters, digits, ``_``)."""
    if not _KEY.match(key):
        raise JobValueError(f"invalid fio option name {key!r}")
    return key


def escape_filename(path: str) -> str:
    """A path as fio's ``filename=`` takes it: fio splits names at ``:`` unless escaped
    as ``\\:`` (fio HOWTO, "filename"), and /dev/disk/by-path names contain colons."""
    return check_value("file name", path, path=True).replace(":", "\\:")


HELD_PREFIX = "volbench target: "
"""How ``description=`` names the target behind a held descriptor."""

_HELD_FILE = re.compile(r"/proc/\d+/fd/\d+\Z")


def held_description(path: str) -> str:
    """The ``description=`` of a job given a descriptor volbench holds for ``path``."""
    return HELD_PREFIX + check_value("file name", path, path=True)


def opened_file(options: Mapping[str, str]) -> str | None:
    """The file a job of fio's output opened, from its options: ``filename`` as fio
    reads it (``\\:`` unescaped), or, where that is a descriptor volbench held
    (``/proc/PID/fd/N``), the target its ``description`` names; None: no file named."""
    name = options.get("filename")
    if name is None:
        return None
    described = options.get("description", "")
    if _HELD_FILE.match(name) and described.startswith(HELD_PREFIX):
        return described[len(HELD_PREFIX) :]
    return name.replace("\\:", ":")


def split_filenames(value: str) -> tuple[str, ...]:
    """The files of a ``filename=`` value as fio opens them: split at ``:`` not
    preceded by ``\\``, then ``\\:`` unescaped."""
    parts = re.split(r"(?<!\\):", value)
    return tuple(part.replace("\\:", ":") for part in parts if part)


@dataclass(frozen=True)
class Section:
    """One ``[name]`` of a job file as fio reads it: options in order, flags as None."""

    name: str
    options: tuple[tuple[str, str | None], ...]

    def get(self, key: str) -> str | None:
        """The last value of ``key`` (fio keeps the last), or None when absent."""
        found = [v for k, v in self.options if k == key]
        return found[-1] if found else None

    def has(self, key: str) -> bool:
        return any(k == key for k, _ in self.options)


def read_job(text: str) -> tuple[Section, ...]:
    """The sections of job ``text`` as fio reads them (comments cut, blanks dropped).

    Raises JobValueError on what volbench never writes: an ``include`` directive,
    an option outside a section, or a value that fio would expand.
    """
    sections: list[tuple[str, list[tuple[str, str | None]]]] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line or line[0] in ";#":
            continue
        if line.startswith("[") and line.endswith("]"):
            sections.append((line[1:-1].strip(), []))
            continue
        if line.startswith("include "):
            raise JobValueError(f"job line {number}: an include directive")
        if not sections:
            raise JobValueError(f"job line {number}: an option before any [section]")
        line = _COMMENT.split(line, maxsplit=1)[0].rstrip()
        key, sep, value = line.partition("=")
        if "$" in value:
            raise JobValueError(f"job line {number}: a value fio would expand ({value!r})")
        sections[-1][1].append((key.strip(), value.strip() if sep else None))
    return tuple(Section(name, tuple(options)) for name, options in sections)


def job_files(text: str) -> dict[str, tuple[str, ...]]:
    """The files each job of ``text`` opens, by job name, as fio reads them: the
    job's own ``filename`` or else the global one (fio HOWTO, "filename")."""
    sections = read_job(text)
    base = next((s.get("filename") for s in sections if s.name == "global"), None)
    files: dict[str, tuple[str, ...]] = {}
    for section in sections:
        if section.name == "global":
            continue
        value = section.get("filename") if section.has("filename") else base
        files.setdefault(section.name, ())
        files[section.name] += split_filenames(value or "")
    return files
