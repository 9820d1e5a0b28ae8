"""A user's job file read as fio reads it (volbench.fio.job_source, job_files,
plans.jobs.groups), held against fio's own recorded reading of the same files
(tests/fixtures/fio/jobfile: ``fio --parse-only --debug=parse,file``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from recorded import FIO_FIXTURES

from volbench.errors import UsageError
from volbench.fio.job_check import FioSection, disagreement, read_debug
from volbench.fio.job_files import exists_here, job_files, listed_files, opened
from volbench.fio.job_source import (
    LINE_CHARS,
    MAX_LINES,
    HostFacts,
    Section,
    jobs,
    read_files,
)
from volbench.plans.jobs.groups import groups
from volbench.plans.placement.job_targets import named_paths, resolve

FOLDER = FIO_FIXTURES / "jobfile"
FILES = ("groups.fio", "named.fio")
HOST = HostFacts(page_bytes=4096, memory_mib=2048, cpus=2)
ENV = {"BS": "8k"}


def _read(tmp_path: Path, *texts: str) -> list[str]:
    """Job files ``texts`` written as a.fio, b.fio ... in ``tmp_path``; their names."""
    names = []
    for number, text in enumerate(texts):
        name = f"{'abcdef'[number]}.fio"
        (tmp_path / name).write_text(text)
        names.append(name)
    return names


def _sections(tmp_path: Path, *texts: str) -> tuple[Section, ...]:
    return read_files(_read(tmp_path, *texts), {}, HOST, tmp_path)


def test_volbench_reads_the_files_as_fio_did() -> None:
    ours = read_files(FILES, ENV, HOST, FOLDER)
    theirs = read_debug((FOLDER / "groups.parse.txt").read_text())
    assert disagreement(ours, theirs) is None
    assert [s.name for s in theirs] == [
        "global",
        "read-a",
        "read-b",
        "write",
        "write-beside",
        "global",
        "named",
    ]
    assert ("runtime", "1") in theirs[0].options and ("bs", "8k") in theirs[0].options
    assert theirs[4].options == [("new_group", None), ("rw", "write")]  # defaults not read
    assert theirs[2].files == ["data/own.dat"]
    assert listed_files(ours)[2] == ("read-b", ("data/own.dat",))


def test_where_fio_reads_otherwise_the_files_are_refused() -> None:
    theirs = read_debug((FOLDER / "groups.parse.txt").read_text())
    other_env = read_files(FILES, {"BS": "4k"}, HOST, FOLDER)
    assert disagreement(other_env, theirs) == (
        "fio reads 'bs=8k' in [global], which volbench does not"
    )
    ours = read_files(FILES, ENV, HOST, FOLDER)
    alias = [FioSection(s.name, list(s.options), list(s.files)) for s in theirs]
    alias[1].options.append(("exec_prerun", "touch /tmp/x"))  # an alias volbench missed
    assert "exec_prerun=touch /tmp/x" in (disagreement(ours, alias) or "")
    alias = [FioSection(s.name, list(s.options), list(s.files)) for s in theirs]
    alias[1].files.append("/dev/sda")
    assert "fio opens 'data/shared.dat, /dev/sda'" not in (disagreement(ours, alias) or "x")
    assert "/dev/sda" in (disagreement(ours, alias) or "")
    assert (
        disagreement(ours, []) == "fio printed none of its reading (is it built without --debug?)"
    )


def test_comments_include_variables_and_keywords_as_fio(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "inner.inc").write_text("bs=${BS}k\n; a comment\nsize=$mb_memory\n")
    (tmp_path / "sub" / "opts.inc").write_text("include inner.inc\n")  # beside the includer
    (tmp_path / "sub" / "job.fio").write_text(
        "  # a comment\n[global]\ninclude sub/opts.inc\n[j1] ; c\nrw=read;cut#too\n"
        "description=${UNSET}x${OPEN\niodepth=$ncpus\n[globalish]\nrw=write\n"
    )
    sections = read_files(["sub/job.fio"], {"BS": "4"}, HOST, tmp_path)
    assert [(s.name, s.is_global) for s in sections] == [
        ("global", True),
        ("j1", False),
        ("globalish", True),
    ]
    assert [o.text for o in sections[0].options] == ["bs=4k", "size=2048"]
    assert sections[0].options[0].where == "sub/inner.inc:1"
    assert [o.text for o in sections[1].options] == ["rw=read", "description=x${OPEN", "iodepth=2"]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("rw=read\n[j]\n", "a.fio:1: an option before any [section]"),
        ("[j k]\n", "a.fio:1: '[j k]': a section is [NAME]"),
        ("[j]\nRW=read\n", "a.fio:2: 'RW' is not an fio option name"),
        ("[j]\nsize=$ncpus*2\n", "fio works an expression with $pagesize"),
        ("[j]\nrw=read\x01\n", "a.fio:2: the line holds the control character U+0001"),
        ("[j]\nfilename=" + "x" * LINE_CHARS + "\n", "fio reads lines of at most 8,191"),
        ("[j]\ninclude nowhere.inc\n", "cannot read job file"),
        ("[j]\ninclude  two-blanks.inc\n", "write an include as `include PATH`"),
        ("[global]\n", "no job (a [section] not named global...)"),
    ],
)
def test_what_fio_would_read_otherwise_is_refused(tmp_path: Path, text: str, said: str) -> None:
    with pytest.raises(UsageError, match=None) as refused:
        _sections(tmp_path, text)
    assert said in str(refused.value)


def test_a_job_file_named_like_an_option_is_refused(tmp_path: Path) -> None:
    """fio is given the files on its command line: ``--exec...`` would be an option."""
    for name in ("-", "--output=x.fio"):
        with pytest.raises(UsageError, match=r"give its path as \./NAME"):
            read_files([name], {}, HOST, tmp_path)


def test_includes_hold_no_section_and_end(tmp_path: Path) -> None:
    (tmp_path / "section.inc").write_text("[other]\n")
    with pytest.raises(UsageError, match="an included file holds no"):
        _sections(tmp_path, "[j]\ninclude section.inc\n")
    (tmp_path / "self.inc").write_text("include self.inc\n")
    with pytest.raises(UsageError, match="includes nested more than 8 deep"):
        _sections(tmp_path, "[j]\ninclude self.inc\n")


def test_each_file_starts_without_the_globals_before_it(tmp_path: Path) -> None:
    every = jobs(_sections(tmp_path, "[global]\nbs=8k\n[a]\n[global]\nrw=write\n[b]\n", "[c]\n"))
    assert [(j.name, j.get("bs"), j.get("rw")) for j in every] == [
        ("a", "8k", None),
        ("b", "8k", "write"),
        ("c", None, None),
    ]


def test_files_follow_fios_rules() -> None:
    every = jobs(read_files(FILES, ENV, HOST, FOLDER))
    named = {j.name: job_files(j) for j in every}
    assert named["read-a"].listed == ("data/shared.dat",)
    assert named["read-b"].listed == ("data/shared.dat", "data/own.dat")  # added, not replaced
    fio_named = named["named"]
    assert fio_named.named_by_fio and fio_named.directories == ("data",)
    assert opened(fio_named, "named", lambda _: False) == (
        "data/named.0.0",
        "data/named.0.1",
        "data/named.1.0",
        "data/named.1.1",
    )


def test_directories_formats_and_a_job_named_as_a_device(tmp_path: Path) -> None:
    every = jobs(
        _sections(
            tmp_path,
            "[j]\ndirectory=d1:d2\nfilename=/abs:rel\\:x\n"
            "[k]\ndirectory=d1:d2\nnumjobs=3\nfilename_format=$JobName-$jobnum.$filenum\n"
            "[null]\n",
        )
    )
    files = [job_files(j) for j in every]
    assert files[0].listed == ("d1//abs", "d1/rel:x")  # dir + "/" + name, absolute or not
    assert opened(files[1], "k", lambda _: False) == ("d1/k-0.0", "d2/k-1.0", "d1/k-2.0")
    os.symlink("/dev/null", tmp_path / "null")  # exists, not a regular file: fio uses it
    assert opened(files[2], "null", exists_here(str(tmp_path))) == ("null",)
    assert opened(files[2], "null", lambda _: False) == ("null.0.0",)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[j]\nfilename=-\n", "filename=- reads or writes fio's own stdin/stdout"),
        ("[j]\nread_iolog=x.log\n", "give replay_redirect=DEVICE"),
        ("[j]\nnrfiles=lots\n", "nrfiles='lots': give a whole number"),
    ],
)
def test_files_volbench_cannot_check_are_refused(tmp_path: Path, text: str, said: str) -> None:
    (job,) = jobs(_sections(tmp_path, text))
    with pytest.raises(UsageError) as refused:
        job_files(job)
    assert said in str(refused.value)


def test_groups_rounds_and_names_as_fio_counts_them(tmp_path: Path) -> None:
    made = groups(jobs(read_files(FILES, ENV, HOST, FOLDER)))
    assert [(g.name, [j.name for j in g.jobs], g.round, g.number) for g in made] == [
        ("read-a", ["read-a", "read-b"], 0, 0),
        ("write", ["write"], 1, 1),
        ("write-beside", ["write-beside"], 1, 2),
        ("named", ["named"], 2, 3),
    ]
    text = "[global]\nstonewall\n[ab]\nname=a b\n[x]\nname=a b\n[job]\n[c]\nname=buffered.c\n"
    same = groups(jobs(_sections(tmp_path, text)))
    assert [g.name for g in same] == ["a-b-g0", "a-b-g1", "job", "job-buffered.c"]


def test_wait_for_a_job_fio_runs_beside_is_refused(tmp_path: Path) -> None:
    ok = "[a]\n[b]\nstonewall\nwait_for=a\n"
    assert [g.round for g in groups(jobs(_sections(tmp_path, ok)))] == [0, 1]
    with pytest.raises(UsageError, match="waits for a job fio runs at the same time"):
        groups(jobs(_sections(tmp_path, "[a]\n[b]\nwait_for=a\n")))
    with pytest.raises(UsageError, match="no job of that name before it"):
        groups(jobs(_sections(tmp_path, "[a]\nwait_for=b\n[b]\n")))


def test_a_directory_fio_cannot_use_and_the_line_that_names_it(tmp_path: Path) -> None:
    """A ``directory=`` that is a link to a device is not a folder (not "missing"); the
    root folder gives the files fio would make there, one ``/`` between; each refusal
    points at the option's own line, not its section's."""
    os.symlink("/dev/null", tmp_path / "device")
    text = "[j]\nrw=write\ndirectory=device\n[k]\nrw=write\nsize=1m\ndirectory=/\n"
    device, root = jobs(_sections(tmp_path, text))
    with pytest.raises(UsageError) as refused:
        resolve(device, str(tmp_path))
    assert str(refused.value) == "a.fio:3: directory /dev/null is not a folder (fio needs one)"
    assert resolve(root, str(tmp_path))[1] == ("/k.0.0",)
    (pattern,) = jobs(_sections(tmp_path, "[j]\nrw=write\n\nfilename_format=../$jobname\n"))
    with pytest.raises(UsageError) as refused:
        resolve(pattern, str(tmp_path))
    assert str(refused.value).startswith("a.fio:4: filename_format='../$jobname': ")


def test_includes_that_multiply_are_refused_before_they_are_read_out(tmp_path: Path) -> None:
    """Four files each including the next 30 times make 810,000 lines of the fifth's
    (fio would read them all; deeper, billions): refused in one line, where the budget
    of :data:`MAX_LINES` ran out."""
    for name, after in zip("abcd", "bcde", strict=True):
        (tmp_path / f"{name}.inc").write_text(f"include {after}.inc\n" * 30)
    (tmp_path / "e.inc").write_text("bs=4k\n")
    with pytest.raises(UsageError) as refused:
        _sections(tmp_path, "[job]\ninclude a.inc\n")
    assert str(refused.value).endswith(
        f": more than {MAX_LINES:,} lines read with the files included (each time they are"
        " included): refused"
    )
    assert str(refused.value).startswith("d.inc:")  # the include whose file went over


def test_a_job_file_that_is_no_regular_file_is_refused_unread(tmp_path: Path) -> None:
    """A FIFO given or included would block reading (nothing writes it), a device never
    end: refused without opening them."""
    os.mkfifo(tmp_path / "fifo")
    for text in ("[job]\ninclude fifo\n", "[job]\ninclude /dev/zero\n"):
        with pytest.raises(UsageError) as refused:
            _sections(tmp_path, text)
        assert str(refused.value).endswith(" is not a regular file: refused")
    with pytest.raises(UsageError, match="fifo is not a regular file: refused"):
        read_files(["fifo"], {}, HOST, tmp_path)


def test_a_replay_writes_its_redirect_whatever_rw_says(tmp_path: Path) -> None:
    """An iolog's own writes and trims are replayed onto ``replay_redirect`` with fio's
    default ``rw`` (read): the device counts as written, checked as a write target."""
    text = "[replay]\nread_iolog=t.log\nreplay_redirect=dev\n[reads]\nfilename=r.dat\n"
    replay, reads = jobs(_sections(tmp_path, text))
    _, named = named_paths((replay, reads), str(tmp_path))
    assert [(n.path, n.writes) for n in named] == [
        (str(tmp_path / "dev"), True),
        (str(tmp_path / "r.dat"), False),
    ]
