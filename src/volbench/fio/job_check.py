"""Asking fio itself how it reads a job file: ``fio --parse-only --debug=parse,file``.

fio then reads the job files as it would to run them and prints, per section
(``Parsing section [NAME]``), each option it applies from its own table under the
option's own name (``handle_option=NAME, ptr=VALUE``, aliases resolved, ``${VAR}``
and keywords replaced; an ioengine's options follow its defaults, after ``init
options``, and are not read here) and each file a ``filename=`` adds, as named
(``"NAME" added at N``). Nothing is run: fio stops before it sets a job up
(init.c ``parse_dryrun``).

volbench's own reading (:mod:`volbench.fio.job_source`) is held against it before
anything runs (:func:`disagreement`): fio's options of every section must be among
volbench's, with the same values, and fio's files of every section exactly
volbench's. fio is only asked once volbench's own reading refused what would run a
command or load code at parse time (an ``external:`` ioengine, keywords fio works out
with ``bc``).
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from volbench.errors import FioError, UsageError
from volbench.fio.executable import fio_path
from volbench.fio.job_files import listed_files
from volbench.fio.job_rules import canonical
from volbench.fio.job_source import Section
from volbench.units import shown

_LINE = re.compile(r"(parse|file) +\d+ +(.*)\Z")
_HANDLE = re.compile(r"handle_option=([^,]*), ptr=(.*)\Z")
_ADDED = re.compile(r'file 0x[0-9a-f]+ "(.*)" added at \d+\Z')
_SECTION = re.compile(r"Parsing section \[(.*)\]\Z")
_ENGINE_OPTIONS = ("init options", "filling default options")


@dataclass
class FioSection:
    """One section as fio read it: the options it applied from its own table (name,
    value; None for a flag) and the files its ``filename=`` added."""

    name: str
    options: list[tuple[str, str | None]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    engine: bool = False
    """fio went on to the ioengine's own options (not read)."""


def read_debug(text: str) -> list[FioSection]:
    """The sections of ``fio --parse-only --debug=parse,file`` output ``text``."""
    sections: list[FioSection] = []
    for line in text.splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        kind, message = match.groups()
        if kind == "parse" and (found := _SECTION.match(message)):
            sections.append(FioSection(found.group(1)))
        elif not sections or message.startswith("Parsing ini file"):
            continue
        elif kind == "parse" and message in _ENGINE_OPTIONS:
            sections[-1].engine = True
        elif kind == "parse" and not sections[-1].engine and (found := _HANDLE.match(message)):
            value = None if found.group(2) == "(null)" else found.group(2)
            sections[-1].options.append((found.group(1), value))
        elif kind == "file" and (found := _ADDED.match(message)):
            sections[-1].files.append(found.group(1))
    return sections


def ask(
    files: Sequence[str], cwd: Path, env: Mapping[str, str], stdin: str | None = None
) -> list[FioSection]:
    """fio's reading of the job ``files`` (``-``: ``stdin``) in ``cwd`` with ``env``;
    UsageError with fio's own word when fio refuses them."""
    command = [fio_path(), "--parse-only", "--debug=parse,file", *files]
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=dict(env),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            errors="replace",
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FioError(f"`fio --parse-only` did not answer: {exc}") from None
    if done.returncode != 0:
        said = [ln.strip() for ln in done.stderr.splitlines() if ln.strip()]
        raise UsageError(f"fio refuses the job file: {'; '.join(said[:2])[:300] or 'no message'}")
    return read_debug(done.stdout)


def disagreement(ours: Sequence[Section], theirs: Sequence[FioSection]) -> str | None:
    """Where fio reads the files otherwise than volbench (one phrase), or None."""
    if not theirs:
        return "fio printed none of its reading (is it built without --debug?)"
    if [s.name for s in ours] != [s.name for s in theirs]:
        return f"fio reads the sections {', '.join(s.name for s in theirs)[:200]}"
    added = listed_files(ours)
    for section, fio, (_, files) in zip(ours, theirs, added, strict=True):
        mine = Counter((canonical(o.key), o.value) for o in section.options)
        for name, value in fio.options:
            if mine[(name, value)] < 1:
                said = name if value is None else f"{name}={value}"
                return f"fio reads {shown(said, 80)} in [{section.name}], which volbench does not"
            mine[(name, value)] -= 1
        if list(files) != fio.files:
            return (
                f"fio opens {shown(', '.join(fio.files), 120)} for [{section.name}], volbench"
                f" read {shown(', '.join(files), 120)}"
            )
    return None
