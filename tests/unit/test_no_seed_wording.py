"""Users never meet "seed 000"-style references: they do not have those files. Help texts,
the README, the catalogue's labels, the notes of sheets and built report pages name the
post (title, publisher, date) or the vendor page instead."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import click

from volbench.cli.main import cli
from volbench.report.formats import render_document
from volbench.report.qos_sheets import predict_sheet
from volbench.report.spec_charts import curve_document
from volbench.report.spec_sheets import curve_sheet, expectation_sheet, product_sheet
from volbench.specs import catalogue
from volbench.specs.expectation import expect

SEED = re.compile(r"\bseeds?\b", re.IGNORECASE)  # not plotly.js's "seedPseudoRandom"
ROOT = Path(__file__).parents[2]
INTERNAL = {"seed-", "../shared/seeds", "f'seed-{seed.name[:3]}'"}
"""String literals that are internal provenance keys or paths, never shown."""


def _helps(command: click.Command, name: str) -> list[tuple[str, str]]:
    ctx = click.Context(command, info_name=name)
    found = [(name, command.get_help(ctx))]
    if isinstance(command, click.Group):
        for sub in command.list_commands(ctx):
            child = command.get_command(ctx, sub)
            assert child is not None, sub
            found += _helps(child, f"{name} {sub}")
    return found


def test_no_help_text_names_a_seed() -> None:
    helps = _helps(cli, "volbench")
    assert len(helps) > 30
    assert [name for name, text in helps if SEED.search(text)] == []


def test_the_readme_names_posts_not_seeds() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert SEED.findall(text) == []
    assert "200MB测试数据告诉你云存储性能有多强" in text  # the post, by its title


def test_no_string_shown_by_the_code_names_a_seed() -> None:
    """Every string literal of src/ except docstrings (bare string statements; the help
    texts among them are checked above)."""
    found = []
    for path in sorted((ROOT / "src" / "volbench").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant | ast.JoinedStr) and id(node) not in docstrings:
                value = node.value if isinstance(node, ast.Constant) else ast.unparse(node)
                if SEED.search(str(value)) and value not in INTERNAL:
                    found.append(f"{path.name}:{node.lineno}: {value}")
    assert found == []


def test_catalogue_labels_and_sources_name_the_post_or_page() -> None:
    cat = catalogue.built_in()
    shown = list(cat.sources.values())
    for product in cat.products:
        shown += [product.name, product.capacity_quote, product.io_quote, product.rw_quote]
        for edition in product.editions:
            shown.append(edition.label)
            if edition.latency is not None:
                shown.append(edition.latency.text)
    assert [s for s in shown if SEED.search(s)] == []
    assert "codingpy.com" in cat.sources["B0"] and "Dec 2016" in cat.sources["B0"]


def test_built_pages_and_sheets_name_no_seed() -> None:
    cat = catalogue.built_in()
    old = expect(cat.find("tencent-cloud-ssd"), 500, "2016-12-31")
    sheets = [
        expectation_sheet(old),
        product_sheet(cat.find("tencent-cloud-ssd"), cat.sources),
        curve_sheet([old]),
    ]
    for sheet in sheets:
        assert not SEED.search(" ".join((sheet.title, *sheet.notes, str(sheet.document))))
    page = render_document(curve_document(sheets[2], ["tencent-cloud-ssd"]), "page.html")
    assert SEED.findall(page.decode("utf-8")) == []
    from volbench.analysis.qos import Rates, Tenant, make_plan

    plan = make_plan(Rates.both(4000, 0), Rates(), [Tenant("a", 100)], 0.9)
    prediction = predict_sheet(plan, {})
    assert not SEED.search(" ".join((*prediction.notes, str(prediction.document))))
