"""A user's job files read and checked before anything of them runs: volbench's own
reading (:mod:`volbench.fio.job_source`), every option judged by the name it stands for
(:func:`volbench.fio.job_rules.refusal`), then fio's own reading of the same files
(:mod:`volbench.fio.job_check`): where the two differ, the files are refused, and the
options fio names are judged again (an alias volbench does not know refuses what its
option does). Each refusal is one line naming the file, line and option.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from volbench.errors import UsageError
from volbench.fio.job_check import ask, disagreement
from volbench.fio.job_rules import canonical, refusal
from volbench.fio.job_source import HostFacts, Section, read_files


def read_checked(
    paths: Sequence[str], cwd: Path, env: Mapping[str, str], host: HostFacts
) -> tuple[Section, ...]:
    """The sections of job files ``paths`` (relative to ``cwd``, with the environment
    ``env``), every option checked by volbench and the reading held against fio's."""
    sections = read_files(paths, env, host, cwd)
    for section in sections:
        for line in section.options:
            why = refusal(canonical(line.key), line.value)
            if why is not None:
                raise UsageError(f"{line.where}: {why}: refused")
            if line.value is not None and line.value != line.value.lstrip():
                raise UsageError(
                    f"{line.where}: write {line.key.strip()}=VALUE without a blank after ="
                    " (fio keeps it in some values and refuses it in others)"
                )
    theirs = ask(paths, cwd, env)
    problem = disagreement(sections, theirs)
    if problem is not None:
        raise UsageError(f"volbench reads {', '.join(paths)} otherwise than fio: {problem}")
    for section, fio in zip(sections, theirs, strict=True):
        for name, value in fio.options:
            why = refusal(name, value)
            if why is not None:
                raise UsageError(f"{section.where}: [{section.name}]: {why}: refused")
    return sections
