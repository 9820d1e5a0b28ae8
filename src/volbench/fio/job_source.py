"""A user's fio job files read the way fio's own reader reads them (fio 3.x: init.c
``__parse_jobs_ini`` and ``is_empty_or_comment``, parse.c ``strip_blank_end``, options.c
``fio_option_dup_subs`` and ``fio_keyword_replace``), so what volbench checks is what
fio runs:

- a line has at most 8,191 characters: fio reads lines with ``fgets`` into
  ``OPT_LEN_MAX`` = 8,192 bytes, so a longer one would go on as a line of its own;
- a line whose first character that is not a blank is ``;`` or ``#`` is a comment; on
  any other line the text from its first ``;``, then from its first ``#``, is cut, then
  the blanks at its end;
- ``[NAME]`` starts a section; a name that starts with ``global`` is a global section
  (fio compares its first six characters);
- a line starting with ``include`` reads the options of the file named after its
  eighth character in its place: that path as it stands (relative to the folder fio
  runs in), else beside the file that includes it; an included file holds no section;
- in an option line, ``${NAME}`` is replaced by the environment variable NAME (by
  nothing when it is not set), then ``$pagesize``, ``$mb_memory`` and ``$ncpus`` by
  facts of this host (HOWTO "Environment variables", "Reserved keywords"); fio works an
  expression holding one of those out with ``bc`` through a shell: refused here;
- an option is ``KEY=VALUE`` (KEY without the blanks at its end, VALUE as it stands
  after the first ``=``) or ``KEY`` alone (a flag).

Several files are read as fio reads several given on its command line: each starts
without the global options of the files before it, and its first job waits for every
job before it (init.c ``parse_jobs_ini``'s ``stonewall_flag``). Nothing here writes;
every refusal is one line naming the file and line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from volbench.errors import UsageError
from volbench.fio.job_rules import canonical
from volbench.fio.job_text import control_problem
from volbench.text_file import read_text
from volbench.units import MiB, shown

LINE_CHARS = 8_191
"""The longest line fio reads whole (``OPT_LEN_MAX`` - 1, fio parse.h)."""
MAX_FILE_BYTES = 1 * MiB
"""The largest job file (or included file) read."""
MAX_FILES = 16
"""The most job files given at once."""
MAX_INCLUDE_DEPTH = 8
"""How deep includes may nest (fio has no limit: a file including itself never ends)."""
MAX_SECTIONS = 1_024
"""The most sections in all the files."""
MAX_LINES = 200_000
"""The most lines read in all, an included file's lines counted each time it is
included (a file including another many times, which includes another many times ...,
would have fio read billions)."""

NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+@-]{0,99}\Z")
"""A section (job) name volbench takes: letters, digits and ``_ . + @ -``."""
KEY = re.compile(r"[a-z0-9_][a-z0-9_-]{0,63}\Z")
"""An option name as fio spells them (lower-case, digits, ``_`` and ``-``)."""
KEYWORDS = ("$pagesize", "$mb_memory", "$ncpus")
"""fio's reserved keywords, in the order fio replaces them."""
_MATH = re.compile(r"[-+*/]")


@dataclass(frozen=True)
class HostFacts:
    """What fio's reserved keywords stand for on this host: ``$pagesize`` (bytes),
    ``$mb_memory`` (MiB of memory, ``os_phys_mem`` / 1 MiB) and ``$ncpus`` (CPUs
    configured, ``cpus_configured``: sysconf(_SC_NPROCESSORS_CONF))."""

    page_bytes: int
    memory_mib: int
    cpus: int

    @classmethod
    def here(cls) -> HostFacts:
        page = os.sysconf("SC_PAGE_SIZE")
        memory = os.sysconf("SC_PHYS_PAGES") * page // MiB
        return cls(page, memory, os.sysconf("SC_NPROCESSORS_CONF"))

    def replacement(self, keyword: str) -> str:
        values = {"$pagesize": self.page_bytes, "$mb_memory": self.memory_mib}
        return str(values.get(keyword, self.cpus))


@dataclass(frozen=True)
class OptionLine:
    """One option as fio parses it: ``key`` (as written), ``value`` (None: a flag) after
    ``${NAME}`` and keyword replacement; ``where`` is ``FILE:LINE``."""

    key: str
    value: str | None
    where: str

    @property
    def text(self) -> str:
        """The option as a job file line."""
        return self.key if self.value is None else f"{self.key}={self.value}"


@dataclass(frozen=True)
class Section:
    """One ``[name]`` of a job file with its options in order (an include's in its
    place); ``file`` is the job file's place in the list given (0: the first)."""

    name: str
    options: tuple[OptionLine, ...]
    file: int
    where: str

    @property
    def is_global(self) -> bool:
        return self.name.startswith("global")


@dataclass
class _Reader:
    env: Mapping[str, str]
    host: HostFacts
    cwd: Path
    read: int = 0
    """Lines read so far (:data:`MAX_LINES`)."""
    numbered: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """Each file's lines, read once however often it is included."""

    def lines(self, path: str, included_at: str | None = None) -> list[tuple[str, str]]:
        """(``FILE:LINE``, the line) of ``path`` (relative to ``cwd``; ``included_at``:
        the line that includes it)."""
        if path not in self.numbered:
            self.numbered[path] = self._numbered(path)
        self.read += len(self.numbered[path])
        if self.read > MAX_LINES:
            raise UsageError(
                f"{included_at or path}: more than {MAX_LINES:,} lines read with the files"
                " included (each time they are included): refused"
            )
        return self.numbered[path]

    def _numbered(self, path: str) -> list[tuple[str, str]]:
        where = self.cwd / path
        if where.exists() and not where.is_file():  # a FIFO would block, a device never end
            raise UsageError(f"job file {where} is not a regular file: refused")
        text = read_text(where, MAX_FILE_BYTES, "job file")
        numbered = []
        for number, line in enumerate(text.split("\n"), start=1):
            at = f"{path}:{number}"
            if len(line) > LINE_CHARS:
                raise UsageError(
                    f"{at}: a line of {len(line):,} characters; fio reads lines of at most"
                    f" {LINE_CHARS:,} and would read the rest as a line of its own"
                )
            problem = control_problem(line.rstrip("\r").replace("\t", " "))
            if problem:
                raise UsageError(f"{at}: the line {problem}: refused")
            numbered.append((at, line))
        return numbered

    def options(self, path: str, depth: int, included_at: str) -> list[OptionLine]:
        """The options of file ``path`` included at ``included_at`` (no section may
        start in it)."""
        found: list[OptionLine] = []
        for at, raw in self.lines(path, included_at):
            if _comment(raw):
                continue
            line = raw.lstrip()
            if line.startswith("["):
                raise UsageError(f"{at}: an included file holds no [section] (fio refuses it)")
            found += self.option(path, at, _cut(line), depth)
        return found

    def option(self, path: str, at: str, line: str, depth: int) -> list[OptionLine]:
        """The option of ``line`` (cut), or the options of the file it includes."""
        if line.startswith("include"):
            return self.options(self.include(path, at, line[8:], depth), depth + 1, at)
        line = self.expand(line, at)
        key, equals, value = line.partition("=")
        key = key.rstrip()
        if not KEY.match(key):
            raise UsageError(f"{at}: {shown(key)} is not an fio option name")
        return [OptionLine(key, value if equals else None, at)]

    def include(self, including: str, at: str, name: str, depth: int) -> str:
        """The path fio opens for ``include NAME`` in file ``including``."""
        if depth >= MAX_INCLUDE_DEPTH:
            raise UsageError(f"{at}: includes nested more than {MAX_INCLUDE_DEPTH} deep")
        if not name or name != name.strip():
            raise UsageError(f"{at}: write an include as `include PATH` (one blank, then the path)")
        if not os.path.exists(self.cwd / name) and "/" in including:
            return including[: including.rindex("/") + 1] + name
        return name

    def expand(self, line: str, at: str) -> str:
        """``line`` with ``${NAME}`` and the reserved keywords replaced, as fio does."""
        out: list[str] = []
        index = 0
        while index < len(line):
            end = line.find("}", index) if line.startswith("${", index) else -1
            if end > index + 1:
                out.append(self.env.get(line[index + 2 : end], ""))
                index = end + 1
                continue
            out.append(line[index])
            index += 1
        expanded = "".join(out)
        replaced = False
        for keyword in KEYWORDS:
            if keyword in expanded:
                expanded = expanded.replace(keyword, self.host.replacement(keyword))
                replaced = True
        if replaced and _MATH.search(expanded) and "'" not in expanded:
            raise UsageError(
                f"{at}: {shown(line)}: fio works an expression with $pagesize, $mb_memory"
                " or $ncpus out with bc through a shell: refused (write the number)"
            )
        if len(expanded) >= LINE_CHARS + 1 or (problem := control_problem(expanded)):
            why = problem if len(expanded) <= LINE_CHARS else "is longer than fio reads"
            raise UsageError(f"{at}: the option, its variables replaced, {why}: refused")
        return expanded


def _comment(line: str) -> bool:
    """fio's ``is_empty_or_comment``: blank, or ``;``/``#`` before any other character."""
    for char in line:
        if char in ";#":
            return True
        if not (char.isspace() or char < " " or char == "\x7f"):
            return False
    return True


def _cut(line: str) -> str:
    """fio's ``strip_blank_end``: cut at the first ``;``, then at the first ``#``, then
    the blanks and control characters at the end."""
    line = line.split(";", 1)[0].split("#", 1)[0]
    return line.rstrip("".join(chr(c) for c in range(33)) + "\x7f")


def read_files(
    paths: Sequence[str], env: Mapping[str, str], host: HostFacts, cwd: Path
) -> tuple[Section, ...]:
    """The sections of the job files ``paths`` (as given: relative to ``cwd``, the
    folder fio would run in), read as fio reads them (see the module docstring)."""
    if not 1 <= len(paths) <= MAX_FILES:
        raise UsageError(f"give 1 to {MAX_FILES} job files (got {len(paths)})")
    for path in paths:  # fio is given them on its command line: an option there
        if path.startswith("-") or control_problem(path):
            raise UsageError(
                f"job file {shown(path)}: give its path as ./NAME (fio takes -... as an option)"
            )
    reader = _Reader(env, host, cwd)
    sections: list[Section] = []
    for index, path in enumerate(paths):
        current: tuple[str, list[OptionLine], str] | None = None
        for at, raw in reader.lines(path):
            if _comment(raw):
                continue
            line = raw.lstrip()
            if line.startswith("["):
                if current is not None:
                    sections.append(Section(current[0], tuple(current[1]), index, current[2]))
                current = (_header(_cut(line), at), [], at)
                if len(sections) >= MAX_SECTIONS:
                    raise UsageError(f"{at}: more than {MAX_SECTIONS:,} sections")
                continue
            if current is None:
                raise UsageError(f"{at}: an option before any [section] (fio refuses it)")
            current[1].extend(reader.option(path, at, _cut(line), 0))
        if current is not None:
            sections.append(Section(current[0], tuple(current[1]), index, current[2]))
    if not any(not s.is_global for s in sections):
        raise UsageError(f"{', '.join(paths)}: no job (a [section] not named global...)")
    return tuple(sections)


def _header(line: str, at: str) -> str:
    """The name of section header ``line`` (cut), refused unless ``[NAME]`` with a NAME
    volbench takes (:data:`NAME`)."""
    name = line[1:-1] if line.endswith("]") else ""
    if not NAME.match(name):
        raise UsageError(
            f"{at}: {shown(line)}: a section is [NAME], NAME of letters, digits and _ . + @ -"
            " (at most 100)"
        )
    return name


@dataclass(frozen=True)
class Job:
    """One job of the files: its section and the global sections in effect for it
    (those of its own file before it, in order). Options are read by their canonical
    names (:func:`volbench.fio.job_rules.canonical`); where several set one, the last
    counts (fio parses a section's options in order, its globals' first)."""

    section: Section
    globals: tuple[Section, ...]

    @property
    def name(self) -> str:
        """The section's name (what fio names the job's files after)."""
        return self.section.name

    def lines(self) -> tuple[OptionLine, ...]:
        """Every option the job runs with, its globals' first, in order."""
        return (*(line for g in self.globals for line in g.options), *self.section.options)

    def get(self, key: str, default: str | None = None) -> str | None:
        """The value of canonical option ``key`` (the last given; a flag's is "")."""
        found = [line for line in self.lines() if canonical(line.key) == key]
        if not found:
            return default
        return "" if found[-1].value is None else found[-1].value

    def has(self, key: str) -> bool:
        return any(canonical(line.key) == key for line in self.lines())

    def where(self, key: str) -> str:
        """``FILE:LINE`` of canonical option ``key`` in effect (the last given), else the
        section's: where an error about its value points."""
        found = [line.where for line in self.lines() if canonical(line.key) == key]
        return found[-1] if found else self.section.where

    def effective(self) -> dict[str, str | None]:
        """Every option the job runs with by canonical name, the last given (None: a
        flag given without a value)."""
        return {canonical(line.key): line.value for line in self.lines()}

    @property
    def reported(self) -> str:
        """The name fio reports the job by: its own ``name=``, else its section's."""
        own = [line.value for line in self.section.options if canonical(line.key) == "name"]
        return own[-1] if own and own[-1] else self.name


def jobs(sections: Sequence[Section]) -> tuple[Job, ...]:
    """The jobs of ``sections`` in order, each with the global sections in effect."""
    found: list[Job] = []
    in_effect: list[Section] = []
    file = 0
    for section in sections:
        if section.file != file:
            in_effect, file = [], section.file
        if section.is_global:
            in_effect.append(section)
        else:
            found.append(Job(section, tuple(in_effect)))
    return tuple(found)
