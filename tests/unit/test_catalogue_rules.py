"""Who must source what (issue 25): a user's product needs only what defines it, the
built-in catalogue keeps quoting every figure; and the promise a run records in its
labels (``run ... --product --product-size --provisioned-iops``)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml
from recorded import FIO_FIXTURES

from volbench.errors import UsageError
from volbench.model import TargetInfo
from volbench.plans.imported.importing import import_file
from volbench.report.check_sheets import CheckRequest, check_sheet
from volbench.report.spec_sheets import product_sheet
from volbench.specs import catalogue, run_promise, user_catalogue, validation
from volbench.specs.expectation import expect
from volbench.store.repository import Store

MINIMAL: dict[str, Any] = {
    "id": "my-array",
    "vendor": "Our lab",
    "name": "Array A, thin LUN",
    "size_unit": "GiB",
    "capacity": {"min": 1, "max": 10000},
    "editions": [
        {
            "from": "2024-01-01",
            "iops": {"expr": "min(100 * size, 50000)"},
            "throughput": {"expr": "iops * 16 / 1024", "unit": "MiB/s"},
        }
    ],
}
"""The issue's minimal private-array entry: nothing but what defines the product."""


@pytest.fixture(autouse=True)
def _no_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(user_catalogue.ENV, raising=False)


def _file(tmp_path: Path, *products: dict[str, Any], **top: Any) -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump({**top, "products": list(products)}), encoding="utf-8")
    return path


def _copy(product: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(product))  # type: ignore[no-any-return]


def test_a_minimal_user_product_is_accepted_and_sourced_to_its_file(tmp_path: Path) -> None:
    path = _file(tmp_path, MINIMAL)
    cat = catalogue.load((str(path),))
    product = cat.find("my-array")
    mine = f"the user's catalogue, {path}"
    edition = product.edition()
    assert edition.label == "2024-01-01"  # named by its date
    assert edition.iops is not None and edition.throughput is not None
    for figure in (edition.iops, edition.throughput):
        assert (figure.status, figure.sources, figure.quote) == ("U", (mine,), "")
    assert product.sources == (mine,) and product.capacity_quote == ""
    assert cat.sources[mine] == mine
    e = expect(product, 100)
    assert (e.iops, e.throughput_value, e.throughput_unit) == (10_000, 156.25, "MiB/s")
    sheet = product_sheet(product, cat.sources)
    assert {row["sources"] for row in sheet.rows} == {mine}
    assert "sizes 1-10000 GiB" in sheet.notes and mine in sheet.notes  # no "()", said once


def test_a_user_may_still_source_a_figure_and_must_name_known_sources(tmp_path: Path) -> None:
    sourced = _copy(MINIMAL)
    sourced["editions"][0]["iops"] |= {"quote": "100 IOPS per GiB", "st": "V", "src": ["LAB1"]}
    sourced["editions"][0]["label"] = "firmware 7"
    cat = catalogue.load((str(_file(tmp_path, sourced, sources={"LAB1": "lab sheet"})),))
    edition = cat.find("my-array").edition()
    assert edition.label == "firmware 7"
    assert edition.iops is not None and edition.iops.sources == ("LAB1",)
    unknown = _copy(MINIMAL)
    unknown["editions"][0]["iops"]["src"] = ["NOPE"]
    with pytest.raises(UsageError, match=r"iops\.src\[0\]: unknown source 'NOPE'"):
        catalogue.load((str(_file(tmp_path, unknown)),))
    status = _copy(MINIMAL)
    status["capacity"]["st"] = "X"
    with pytest.raises(UsageError, match=r"capacity\.st: must be one of V, VM, S, R, D, U"):
        catalogue.load((str(_file(tmp_path, status)),))


def _built_in() -> dict[str, Any]:
    text = resources.files("volbench.specs").joinpath("catalogue.json").read_text("utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: p["capacity"].pop("quote"), "capacity: missing field 'quote'"),
        (lambda p: p["capacity"].pop("src"), "capacity: missing field 'src'"),
        (lambda p: p["editions"][0].pop("label"), "editions[0]: missing field 'label'"),
        (lambda p: p["editions"][0]["iops"].pop("st"), "editions[0].iops: missing field 'st'"),
        (lambda p: p["capacity"].update(st="U"), "capacity.st: must be one of V, VM, S, R, D,"),
        (lambda p: p["prices"][0].pop("quote"), "prices[0]: missing field 'quote'"),
    ],
)
def test_the_built_in_catalogue_keeps_its_strict_rules(change: Any, message: str) -> None:
    document = _built_in()
    product = next(p for p in document["products"] if p["id"] == "aws-gp3")
    place = validation.Place("built-in: ")
    validation.product(_copy(product), place, document["sources"])  # as it is: sourced
    changed = _copy(product)
    change(changed)
    with pytest.raises(UsageError) as caught:
        validation.product(changed, place, document["sources"])
    assert message in str(caught.value)
    # the same entry in a user's file: the missing provenance is the user's own
    validation.product(_copy(changed), place, document["sources"], "the user's catalogue, F")


def test_the_minimal_entry_is_refused_by_the_built_in_rules() -> None:
    with pytest.raises(UsageError, match="capacity: missing field 'quote'"):
        validation.product(_copy(MINIMAL), validation.Place("built-in: "), {})


def test_a_run_records_its_promise_as_labels() -> None:
    labels = run_promise.promise_labels(
        (("vendor", "aws"),), "aws-gp3", 500, {"provisioned_iops": 6000.0}
    )
    assert dict(labels) == {
        "vendor": "aws",
        "product": "aws-gp3",
        "size_gib": "500",
        "provisioned_iops": "6000",
    }
    big = run_promise.promise_labels((), None, 0.5, {"provisioned_iops": 1e6})
    assert big == (("size_gib", "0.5"), ("provisioned_iops", "1000000"))  # not 1e+06
    same = run_promise.promise_labels((("product", "aws-gp3"),), "aws-gp3", None, {})
    assert same == (("product", "aws-gp3"),)
    with pytest.raises(UsageError, match="--product-size 500 and --label size_gib=400 differ"):
        run_promise.promise_labels((("size_gib", "400"),), None, 500, {})
    with pytest.raises(UsageError, match="--provisioned-iops 6000 and --label provisioned_iops"):
        run_promise.promise_labels(
            (("provisioned_iops", "3000"),), None, None, {"provisioned_iops": 6000}
        )


def test_the_promise_is_settled_before_the_run() -> None:
    cat = catalogue.load
    volume = TargetInfo("/dev/nvme1n1", "block", 500 << 30)
    found = run_promise.settled((("product", "aws-gp3"),), cat, volume)
    assert found["size_gib"] == "500"  # the block device is the whole volume
    in_gb = run_promise.settled((("product", "ucloud-rssd"),), cat, volume)
    assert in_gb["size_gib"] == "536.871"  # a GB product: 500 GiB = 536.871 GB
    assert run_promise.settled((("vendor", "x"),), cat, None) == {"vendor": "x"}

    def unread() -> catalogue.Catalogue:
        raise AssertionError("the catalogue is read only for a product")

    assert run_promise.settled((("size_gib", "500"),), unread, None) == {"size_gib": "500"}
    assert run_promise.settled((("product", "aws-gp3"),), cat, None) == {"product": "aws-gp3"}
    scratch = TargetInfo("scratch.img", "file", 1 << 30)
    with pytest.raises(UsageError, match="give the volume's size for aws-gp3: --product-size N"):
        run_promise.settled((("product", "aws-gp3"),), cat, scratch)
    with pytest.raises(UsageError, match="unknown product 'aws-gp33': did you mean aws-gp3"):
        run_promise.settled((("product", "aws-gp33"), ("size_gib", "500")), cat, None)
    over = (("product", "aws-io1"), ("size_gib", "100"), ("provisioned_iops", "60000"))
    with pytest.raises(UsageError, match="--provisioned-iops 60,000 IOPS is above the most"):
        run_promise.settled(over, cat, None)
    with pytest.raises(UsageError, match="label provisioned_iops='lots' is not a number"):
        run_promise.settled(
            (("product", "aws-io1"), ("size_gib", "100"), ("provisioned_iops", "lots")), cat, None
        )


def test_check_reads_the_provisioned_labels(tmp_path: Path) -> None:
    labels = {"product": "aws-io1", "size_gib": "200", "provisioned_iops": "2000"}
    with Store.open(str(tmp_path / "s.db")) as store:
        import_file(store, FIO_FIXTURES / "quick/round-000.json", labels)
        run = store.get_run("latest")
    cat = catalogue.load()
    sheet = check_sheet(run, cat, CheckRequest(None, None))
    assert {row["expected"] for row in sheet.rows} == {2000}
    given = check_sheet(run, cat, CheckRequest(None, None, provisioned={"provisioned_iops": 1000}))
    assert {row["expected"] for row in given.rows} == {1000}  # the option over the label


def test_a_command_s_catalogue_files_reach_every_load(tmp_path: Path) -> None:
    path = _file(tmp_path, MINIMAL)
    with pytest.raises(UsageError, match="unknown product 'my-array'"):
        catalogue.load().find("my-array")
    with catalogue.using((str(path),)):
        assert catalogue.load().find("my-array").origin == str(path)
        assert catalogue.given_files() == (str(path),)
    assert catalogue.given_files() == ()
