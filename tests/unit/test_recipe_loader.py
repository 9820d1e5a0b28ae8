"""The recipe loader: a good file is read; each malformed kind is refused in one line
naming the file and the field (a recipe file may be hostile)."""

from __future__ import annotations

from pathlib import Path

import pytest

from volbench.errors import UsageError
from volbench.recipes import loader
from volbench.recipes.model import Option, Section

GOOD = """\
schema_version: 1
id: my-recipe
cloud: Example Cloud
summary: one random-read test
page:
  title: Benchmark a volume
  url: https://example.com/benchmark
  read: "2026-11-29"
  page_date: undated
  text_from: the page itself
targets:
  - name: device
    kind: device
    page_values: [/dev/vdb]
    what: the volume
steps:
  - id: random-read
    kind: measure
    quote: 'Run the following command:'
    source:
      - command: fio --filename=/dev/vdb --rw=randread --bs=4k --iodepth=32 --name=t
    reports: read IOPS
    expects:
      - what: read IOPS
        value: 3000
        unit: IOPS
        quote: The volume delivers 3,000 IOPS.
        condition: any size
    fio:
      global: [filename=/dev/vdb, rw=randread, bs=4k, iodepth=32]
      jobs:
        - name: t
          options: []
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_file_is_read(tmp_path: Path) -> None:
    recipe = loader.read_recipe(write(tmp_path, GOOD))
    assert recipe.id == "my-recipe"
    assert recipe.origin == str(tmp_path / "recipe.yaml")
    assert recipe.steps[0].sections == (
        Section(
            "global",
            (
                Option("filename", "/dev/vdb"),
                Option("rw", "randread"),
                Option("bs", "4k"),
                Option("iodepth", "32"),
            ),
        ),
        Section("t", ()),
    )


MALFORMED = [
    ("not YAML", GOOD.replace("targets:", "targets: [", 1), "not valid YAML"),
    ("an alias", GOOD.replace("cloud: Example Cloud", "cloud: &c Example Cloud\nx: *c"), "aliases"),
    ("a key twice", GOOD.replace("cloud: Example Cloud", "cloud: A\ncloud: B"), "given twice"),
    ("a list", "- 1\n- 2\n", "must be a mapping"),
    ("a later schema", GOOD.replace("schema_version: 1", "schema_version: 2"), "must be 1"),
    ("an unknown key", GOOD + "extra: 1\n", "unknown key 'extra'"),
    ("a missing key", GOOD.replace("cloud: Example Cloud\n", ""), "'cloud' is missing"),
    ("a bad date", GOOD.replace('"2026-11-29"', '"29/11/2026"'), "is not a date"),
    ("no https", GOOD.replace("https://example.com", "http://example.com"), "https://"),
    ("a newline", GOOD.replace("title: Benchmark a volume", 'title: "a\\nb"'), "newline"),
    ("a control char", GOOD.replace("what: the volume", 'what: "\\e[31m"'), "control"),
    (
        "an option no page uses",
        GOOD.replace("iodepth=32]", "iodepth=32, exec_prerun=rm -rf /]"),
        "'exec_prerun' is not an fio option a recipe may set",
    ),
    (
        "a path of the recipe's own",
        GOOD.replace("global: [filename=/dev/vdb", "global: [filename=/etc/passwd"),
        "never names a path of its own",
    ),
    ("a bad value", GOOD.replace("iodepth=32]", "iodepth=lots]"), "a whole number"),
    ("an external engine", GOOD.replace("bs=4k,", "ioengine=external:/x.so,"), "one of"),
    ("a comment in a value", GOOD.replace("bs=4k,", "bs=4k;x,"), "must be a size"),
    (
        "a command-line option not allowed",
        GOOD.replace("      jobs:", "      args: [output=/tmp/x]\n      jobs:"),
        "'output' is not an fio option",
    ),
    (
        "a folder option on a device",
        GOOD.replace("global: [filename=/dev/vdb", "global: [directory=/dev/vdb"),
        "needs a directory target",
    ),
    (
        "a job without a target",
        GOOD.replace("global: [filename=/dev/vdb, ", "global: ["),
        "must name its target once",
    ),
    (
        "a target no step uses",
        GOOD.replace(
            "    what: the volume\n",
            "    what: the volume\n  - name: spare\n    kind: file\n    page_values: [x]\n"
            "    what: unused\n",
        ),
        "spare is used by no step",
    ),
    (
        "a step id twice",
        GOOD.replace("steps:\n", "steps:\n" + GOOD.split("steps:\n")[1], 1),
        "'random-read' is given twice",
    ),
    (
        "a figure its quote does not state",
        GOOD.replace("3,000 IOPS", "3,500 IOPS"),
        "does not state the value 3000",
    ),
    ("nothing measured", GOOD.replace("kind: measure", "kind: prepare"), "no step measures"),
    ("a bad step kind", GOOD.replace("kind: measure", "kind: run"), "not prepare or measure"),
    ("a job named global", GOOD.replace("- name: t", "- name: global"), "is taken"),
    ("nesting", GOOD + "notes: " + "[" * 20 + "]" * 20 + "\n", "nested more than"),
    ("not text", GOOD.replace("reports: read IOPS", "reports: [1]"), "must be text"),
]


@pytest.mark.parametrize(("kind", "text", "message"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_file_is_refused_in_one_line(
    tmp_path: Path, kind: str, text: str, message: str
) -> None:
    with pytest.raises(UsageError) as error:
        loader.read_recipe(write(tmp_path, text))
    line = str(error.value)
    assert message in line, (kind, line)
    assert "\n" not in line and len(line) <= 300
    assert line.startswith(str(tmp_path / "recipe.yaml"))


def test_a_huge_or_binary_file_is_refused(tmp_path: Path) -> None:
    huge = tmp_path / "huge.yaml"
    huge.write_bytes(b"#" * (loader.MAX_BYTES + 1))
    with pytest.raises(UsageError, match="larger than"):
        loader.read_recipe(huge)
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UsageError, match="not UTF-8"):
        loader.read_recipe(binary)
