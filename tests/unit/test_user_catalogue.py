"""The user's own products: a YAML file in the built-in schema, checked field by field,
listed with its origin, usable like any product, replacing a built-in one only on request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from volbench.errors import UsageError
from volbench.specs import catalogue, user_catalogue
from volbench.specs.expectation import expect
from volbench.specs.price import cost

PRIVATE = {
    "sources": {"NE1": "NetEase cloud doc 'instance storage QoS test' (undated)"},
    "source_dates": {"NE1": "2015-06-01"},
    "products": [
        {
            "id": "private-instance-ssd",
            "vendor": "Our private cloud",
            "name": "Instance storage, QoS by size",
            "size_unit": "GiB",
            "capacity": {"min": 10, "max": 2000, "quote": "10-2000 GiB", "st": "V", "src": ["NE1"]},
            "rw_limits": "separate",
            "latency": {"max_ms": 2, "text": "under 2 ms", "st": "S", "src": ["NE1"]},
            "editions": [
                {
                    "from": "2015-06-01",
                    "label": "QoS v1",
                    "iops": {
                        "expr": "min(30 * size, 20000) + 0 * provisioned_iops",
                        "default": {"provisioned_iops": 0},
                        "quote": "30 IOPS per GiB",
                        "st": "V",
                        "src": ["NE1"],
                    },
                    "throughput": {
                        "tiers": [[100, 50], [2000, 400]],
                        "unit": "MB/s",
                        "quote": "tiers",
                        "st": "V",
                        "src": ["NE1"],
                    },
                    "burst": {
                        "iops": 30000,
                        "max_minutes": 10,
                        "quote": "burst",
                        "st": "S",
                        "src": ["NE1"],
                    },
                    "limits": [
                        {
                            "variable": "provisioned_iops",
                            "max": "10 * size",
                            "quote": "q",
                            "st": "V",
                            "src": ["NE1"],
                        },
                    ],
                }
            ],
            "prices": [
                {
                    "value": 0.5,
                    "currency": "CNY",
                    "per": "GB-month",
                    "quote": "0.5",
                    "st": "R",
                    "src": ["NE1"],
                },
            ],
        }
    ],
}


@pytest.fixture(autouse=True)
def _no_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv(user_catalogue.ENV, raising=False)


def _write(path: Path, document: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
    return path


def _copy() -> dict[str, Any]:
    return yaml.safe_load(yaml.safe_dump(PRIVATE))  # type: ignore[no-any-return]


def test_a_valid_file_adds_a_product_usable_everywhere(tmp_path: Path) -> None:
    path = _write(tmp_path / "private.yaml", PRIVATE)
    cat = catalogue.load((str(path),))
    product = cat.find("private-instance-ssd")
    assert product.origin == str(path)
    assert cat.find("aws-gp3").origin == "built-in"
    e = expect(product, 200)
    assert (e.iops, e.throughput_value, e.burst_iops, e.burst_seconds) == (6000, 400, 30000, 600)
    assert e.latency is not None and e.latency.from_date == "2015-06-01"
    (bill,) = cost(product, 200, 1.0)
    assert (bill.amount, bill.currency) == (100, "CNY")
    with pytest.raises(UsageError, match=r"most allowed at 200 GiB, 10 \* size = 2,000"):
        expect(product, 200, None, {"provisioned_iops": 2001})
    assert cat.sources["NE1"].startswith("NetEase") and cat.of_vendor("private")


def test_config_folder_and_environment_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "config" / "volbench" / "catalogue.d" / "a.yaml", PRIVATE)
    assert catalogue.load().find("private-instance-ssd").origin.endswith("a.yaml")
    other = _copy()
    other["products"][0]["id"] = "private-two"
    other["products"][0]["api_name"] = "two"
    env_file = _write(tmp_path / "env.yaml", other)
    monkeypatch.setenv(user_catalogue.ENV, str(env_file))
    assert {"private-instance-ssd", "private-two"} <= {p.id for p in catalogue.load().products}
    monkeypatch.setenv(user_catalogue.ENV, str(tmp_path / "missing.yaml"))
    with pytest.raises(UsageError, match=r"no catalogue file .*missing\.yaml"):
        catalogue.load()


def test_a_built_in_product_is_replaced_only_on_request(tmp_path: Path) -> None:
    clash = _copy()
    clash["products"][0]["id"] = "aws-gp3"
    path = _write(tmp_path / "clash.yaml", clash)
    with pytest.raises(UsageError) as caught:
        catalogue.load((str(path),))
    assert str(caught.value) == (
        f"{path}: product aws-gp3: id: aws-gp3 is already in the built-in catalogue;"
        " add 'override: true' to replace it"
    )
    clash["products"][0]["override"] = True
    path = _write(tmp_path / "override.yaml", clash)
    cat = catalogue.load((str(path),))
    gp3 = cat.find("aws-gp3")
    assert gp3.origin == str(path) and gp3.vendor == "Our private cloud"
    assert [p.id for p in cat.products].count("aws-gp3") == 1
    alias = _copy()
    alias["products"][0]["api_name"] = "GP3"  # gp3 is the built-in's api_name
    with pytest.raises(UsageError, match="aws-gp3 is already in the built-in catalogue"):
        catalogue.load((str(_write(tmp_path / "alias.yaml", alias)),))


def _set(document: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    node: Any = document["products"][0]
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    if value is _DELETE:
        del node[int(last) if last.isdigit() else last]
    else:
        node[int(last) if last.isdigit() else last] = value


_DELETE = object()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("id", "Bad Id!", "id: 'Bad Id!' must be lower-case"),
        ("vendor", 42, "vendor: must be text, not int"),
        ("name", _DELETE, "missing field 'name'"),
        ("size_unit", "TB", "size_unit: must be one of GiB, GB"),
        ("capacity.min", "ten", "capacity.min: must be a number"),
        ("capacity.max", 5, "capacity.max: is below min 10"),
        ("capacity.src.0", "NOPE", "capacity.src[0]: unknown source 'NOPE'"),
        ("capacity.st", "X", "capacity.st: must be one of V, VM, S, R, D"),
        ("rw_limits", "both", "rw_limits: must be one of combined, separate, unknown"),
        ("latency.max_ms", -1, "latency.max_ms: must be positive"),
        ("editions", [], "editions: needs at least one dated edition"),
        ("editions.0.from", "June 2015", "editions[0].from: must be a date YYYY-MM-DD"),
        ("editions.0.label", ["x"], "editions[0].label: must be text, not list"),
        ("editions.0.iops.expr", "__import__('os').system('id')", "editions[0].iops.expr:"),
        ("editions.0.iops.expr", "size ** 2", "Pow is not allowed"),
        ("editions.0.iops.expr", "nope * size", "names 'nope'"),
        ("editions.0.iops.expr", "iops * 2", "names 'iops'"),  # only throughput formulas
        ("editions.0.iops.expr", "1 + " * 200 + "1", "longer than 300 characters"),
        ("editions.0.iops.tiers", [[1, 2]], "editions[0].iops: give either expr or tiers"),
        ("editions.0.throughput.tiers.0", [100], "editions[0].throughput.tiers[0]: must be"),
        ("editions.0.throughput.unit", "GB/s", "throughput.unit: must be one of MB/s, MiB/s"),
        ("editions.0.burst.max_minutes", float("nan"), "burst.max_minutes: must be a number"),
        ("editions.0.limits.0.variable", "iops", "limits[0].variable: must be one of size"),
        ("editions.0.limits.0.max", "provisioned_iops * 2", "names 'provisioned_iops'"),
        ("editions.0.colour", "blue", "editions[0]: unknown field 'colour'"),
        ("prices.0.per", "TB-year", "prices[0].per: must be one of GB-month"),
        ("prices.0.value", True, "prices[0].value: must be a number, not True"),
        ("override", "yes", "override: must be true or false"),
        ("capacity.min", 10**400, "capacity.min: must be a number up to 1e+15"),
        ("prices.0.value", 1e300, "prices[0].value: must be a number up to 1e+15"),
        ("editions.0.iops.expr", "1e999 * size", "only numbers up to 1e+15"),
        ("editions.0.iops.expr", "size\x00", "editions[0].iops.expr:"),
    ],
)
def test_each_invalid_field_is_one_line_naming_file_product_and_field(
    tmp_path: Path, field: str, value: Any, message: str
) -> None:
    document = _copy()
    _set(document, field, value)
    path = _write(tmp_path / "bad.yaml", document)
    with pytest.raises(UsageError) as caught:
        catalogue.load((str(path),))
    line = str(caught.value)
    assert "\n" not in line and line.startswith(f"{path}: ")
    assert message in line, line
    if field != "id":
        assert "product private-instance-ssd: " in line


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: &x [1]\nb: *x\n", "anchors and aliases"),
        ("products: " + "[" * 40 + "]" * 40 + "\n", "nested more than 16 deep"),
        ("products: !!python/object/apply:os.system ['id']\n", "not valid YAML"),
        ("products: [\n", "not valid YAML"),
        ("- just\n- a list\n", "document: must be a mapping, not list"),
        ("products: []\nextra: 1\n", "unknown field 'extra'"),
        ("products: []\nsources: {A1: other}\n", "A1 is already a source"),
        ("products: []\nsources: 5\n", "sources: must be a mapping, not int"),
        ("products: " + "9" * 5000 + "\n", "not a valid value: Exceeds the limit"),
        ("products: []\nsource_dates: {A: 2001-13-45}\n", "not a valid value: month"),
        ("products: [.inf]\n", "products[0]: must be a mapping, not float"),
    ],
)
def test_hostile_or_broken_files_are_refused_in_one_line(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "hostile.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        catalogue.load((str(path),))
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_formula_overflowing_is_one_line(tmp_path: Path) -> None:
    """Regression (issue 22): a formula of allowed numbers giving infinity at a size."""
    document = _copy()
    huge = " * ".join(["1e15"] * 21)
    _set(document, "editions.0.iops.expr", f"{huge} * size")
    _set(document, "editions.0.iops.default", {})
    path = _write(tmp_path / "huge.yaml", document)
    product = catalogue.load((str(path),)).find("private-instance-ssd")
    with pytest.raises(UsageError, match="gives no finite number"):
        expect(product, 1000, None, {})


def test_a_file_too_large_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("products: []\n" + "#" * user_catalogue.MAX_BYTES, encoding="utf-8")
    with pytest.raises(UsageError, match="larger than 1 MiB"):
        catalogue.load((str(path),))


def test_the_built_in_catalogue_passes_the_same_checks() -> None:
    import json
    from importlib import resources

    from volbench.specs import validation

    text = resources.files("volbench.specs").joinpath("catalogue.json").read_text("utf-8")
    document = json.loads(text)
    for index, product in enumerate(document["products"]):
        validation.product(
            product, validation.Place(f"built-in: products[{index}] "), document["sources"]
        )
