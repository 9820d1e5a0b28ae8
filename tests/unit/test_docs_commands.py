"""Every ``volbench ...`` command line the documentation shows is one the CLI accepts.

The lines are taken from the fenced code blocks of ``README.md`` and ``docs/**/*.md``
and from inline code spans that start with ``volbench `` (`volbench show latest` in
prose). Each is run in-process through click's parser with ``--help`` appended
(:func:`rejection`): ``--help`` is eager, so click has already resolved every command
name and every option name when it prints the help and stops, but nothing runs. An
unknown command or option is exit code 2 with click's "No such command" / "No such
option" (and its "Did you mean" suggestion), which the test prints with the file and
line the command came from. ``--dry-run`` is not used: it reads the target, and the
pages name devices (``/dev/nvme1n1``) this machine does not have.

Then the values (:func:`value_rejection`): the command's context is made from the line
as click would before running it, without running it, so a value click refuses (a
choice such as ``--cache directt``, a size, a duration, an extra argument) fails too.
volbench's option types only parse text; a required option left out of an example,
or a file the reader would have (``--hosts-file hosts.txt``) does not count.

Conventions for a command line in the documentation:

* a command continues on the next line after a trailing backslash;
* ``volbench``, ``.venv/bin/volbench`` or any ``.../volbench`` starts it, after
  ``$ `` or ``sudo`` or ``NAME=value`` environment assignments;
* ``# comment``, and a pipe or redirection (``|``, ``>``, ``>>``, ``<``, ``;``,
  ``&&``, ``||``) ends it;
* placeholders are written in capitals (``RUN``, ``FILE``) or between angle brackets
  (``<RUN>``), and ``[ ]`` mark an optional part, whose options are checked as if given;
  ``...`` after a placeholder (``RUN...``) is dropped. No line is skipped.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from volbench.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
"""The repository: README.md and docs/ are read from there."""

FENCE = re.compile(r"^\s*(```|~~~)")
"""A fenced code block opens or closes on this line."""

INLINE = re.compile(r"`(volbench [^`]+)`")
"""An inline code span holding a volbench command."""

ENDS = frozenset({"|", ">", ">>", "<", ";", "&&", "||", "&", "2>&1"})
"""Shell tokens after which a command line has ended."""

ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*\Z")
"""``NAME=value`` before a command: an environment variable for it."""

PLACEHOLDER_VALUES = {"RUN": "latest", "<RUN>": "latest"}
"""A value each placeholder of a checked type stands for (a RUN is an id or ``latest``,
checked where it is parsed)."""

MINIMUM_LINES = 100
"""The documentation shows more command lines than this: fewer found means the
extraction broke, not that the docs shrank that much."""


@dataclass(frozen=True)
class DocCommand:
    """One command line shown in the documentation."""

    source: str
    """``FILE:LINE`` where it starts, relative to the repository."""
    text: str
    """As written, continuation lines joined."""
    args: tuple[str, ...]
    """The arguments after ``volbench``, placeholders and brackets as described above."""


def documents() -> list[Path]:
    """README.md and every page of the documentation site."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def command_args(text: str) -> tuple[str, ...] | None:
    """The arguments of the ``volbench`` command in ``text``, or None when the line
    does not run volbench."""
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=False)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        tokens = list(lexer)
    except ValueError:  # an unclosed quote: not a command line
        return None
    while tokens and (tokens[0] in ("$", "sudo") or ASSIGNMENT.match(tokens[0])):
        tokens.pop(0)
    if not tokens or tokens[0].rsplit("/", 1)[-1] != "volbench":
        return None
    args: list[str] = []
    for token in tokens[1:]:
        if token in ENDS:
            break
        token = token.strip("[]")
        token = token.removesuffix("...")
        if token:
            args.append(token)
    return tuple(args)


def fenced_lines(lines: list[str]) -> Iterator[tuple[int, str]]:
    """The lines inside fenced code blocks with their numbers (1-based), a line that
    ends with a backslash joined with the next."""
    inside = False
    pending: tuple[int, str] | None = None
    for number, line in enumerate(lines, 1):
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            continue
        start, text = pending if pending is not None else (number, "")
        text += line.strip()
        if text.endswith("\\"):
            pending = (start, text[:-1] + " ")
            continue
        pending = None
        yield start, text


def inline_lines(lines: list[str]) -> Iterator[tuple[int, str]]:
    """The inline code spans outside code blocks that start with ``volbench ``."""
    inside = False
    for number, line in enumerate(lines, 1):
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            for match in INLINE.finditer(line):
                yield number, match.group(1)


def doc_commands(path: Path) -> list[DocCommand]:
    """Every volbench command line ``path`` shows."""
    lines = path.read_text(encoding="utf-8").splitlines()
    name = path.relative_to(ROOT).as_posix()
    found = []
    for number, text in [*fenced_lines(lines), *inline_lines(lines)]:
        args = command_args(text)
        if args is not None:
            found.append(DocCommand(f"{name}:{number}", text, args))
    return found


def rejection(args: tuple[str, ...]) -> str | None:
    """Why the CLI's parser refuses ``volbench ARGS --help`` (None: it accepts it)."""
    result = CliRunner().invoke(cli, [*args, "--help"], prog_name="volbench")
    if result.exit_code == 0 and result.exception is None:
        return None
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        return f"{type(result.exception).__name__}: {result.exception}"
    return f"exit {result.exit_code}: {result.output.strip().splitlines()[-1:]}"


def value_rejection(args: tuple[str, ...]) -> str | None:
    """Why click refuses the values of ``volbench ARGS`` (None: it takes them, or only
    a required parameter or an existing file is missing; the names are
    :func:`rejection`'s to check)."""
    if "--help" in args or "-h" in args or "--version" in args:
        return None
    command: click.Command = cli
    path = ["volbench"]
    rest = [PLACEHOLDER_VALUES.get(arg, arg) for arg in args]
    while isinstance(command, click.Group) and rest:
        sub = command.get_command(click.Context(command, info_name=path[-1]), rest[0])
        if sub is None:
            return None
        command = sub
        path.append(rest.pop(0))
    if isinstance(command, click.Group):
        return None
    try:
        command.make_context(" ".join(path), rest).close()
    except click.MissingParameter:
        return None
    except click.BadParameter as exc:
        message = exc.format_message()
        return None if "does not exist" in message else message
    except click.UsageError as exc:
        return exc.format_message()
    return None


ALL = [command for path in documents() for command in doc_commands(path)]


def test_the_documentation_shows_command_lines() -> None:
    assert len(ALL) >= MINIMUM_LINES, f"only {len(ALL)} volbench command lines found"
    sources = {command.source.split(":")[0] for command in ALL}
    assert "README.md" in sources
    assert any(source.startswith("docs/") for source in sources)


@pytest.mark.parametrize("command", ALL, ids=[command.source for command in ALL])
def test_documented_command_parses(command: DocCommand) -> None:
    reason = rejection(command.args)
    assert reason is None, f"{command.source}: `{command.text}` is refused: {reason}"


@pytest.mark.parametrize("command", ALL, ids=[command.source for command in ALL])
def test_documented_values_convert(command: DocCommand) -> None:
    reason = value_rejection(command.args)
    assert reason is None, f"{command.source}: `{command.text}`: {reason}"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("volbench run quick --target /dev/vdb --no-such-option 3", "No such option"),
        ("volbench run quikc --target /dev/vdb", "No such command"),
        ("volbench spec expect aws-gp3 --sise 500", "No such option"),
        (".venv/bin/volbench runs [--lable vendor=aliyun]", "No such option"),
    ],
)
def test_a_wrong_line_is_refused(line: str, message: str) -> None:
    """The check can fail: a misspelt option or command, as a page could show it."""
    args = command_args(line)
    assert args is not None
    reason = rejection(args)
    assert reason is not None
    assert reason.startswith("exit 2")
    assert message in CliRunner().invoke(cli, [*args, "--help"]).output


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("volbench run quick --target /dev/vdb --cache directt", "Invalid value for '--cache'"),
        ("volbench runs --status done", "Invalid value for '--status'"),
        ("volbench run sweep --iodepth 1-64 --runtime 20 seconds", "unexpected extra argument"),
    ],
)
def test_a_wrong_value_is_refused(line: str, message: str) -> None:
    """The names of these lines are right, their values are not."""
    args = command_args(line)
    assert args is not None
    assert rejection(args) is None
    reason = value_rejection(args)
    assert reason is not None
    assert message in reason


def test_the_readme_links_to_pages_that_exist() -> None:
    """mkdocs checks the site's links; the README is not part of the site."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    assert any(target.startswith("docs/") for target in targets)
    assert [t for t in targets if "://" not in t and not (ROOT / t).is_file()] == []


def test_extraction_follows_the_conventions(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "Run `volbench show latest` first.\n"
        "```sh\n"
        "$ VOLBENCH_DB=x.db .venv/bin/volbench run sweep --target /dev/vdb \\\n"
        "    --iodepth 1-64   # a comment\n"
        "volbench qos plan --tenant web:40 --format json > plan.json\n"
        "volbench export RUN... [-o FILE]\n"
        "make quick\n"
        "```\n"
        "`make test`\n",
        encoding="utf-8",
    )
    lines = page.read_text(encoding="utf-8").splitlines()
    found = sorted(
        (number, command_args(text))
        for number, text in [*fenced_lines(lines), *inline_lines(lines)]
        if command_args(text) is not None
    )
    assert found == [
        (1, ("show", "latest")),
        (3, ("run", "sweep", "--target", "/dev/vdb", "--iodepth", "1-64")),
        (5, ("qos", "plan", "--tenant", "web:40", "--format", "json")),
        (6, ("export", "RUN", "-o", "FILE")),
    ]
