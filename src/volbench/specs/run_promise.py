"""The promise a run is checked against, kept as the run's labels.

``volbench run ... --product P --product-size N --provisioned-iops I`` records
``product=P``, ``size_gib=N`` and ``provisioned_iops=I`` (the labels ``volbench
check``, ``show`` and ``report`` read: the size is in the product's own unit, GiB or
GB, whatever the label's name says, as ``check --size``). The provisioned labels
are named after the catalogue's formula variables (CATALOGUE.md). Before a run
starts the promise is settled: the product exists (the built-in catalogue and the
user's), the size is known (given, else the capacity of a block-device target: a
whole volume), and the vendor's formulas give a figure at that size with those
provisioned values (a size or value the vendor does not offer is refused then, not
after the run).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from volbench.errors import UsageError
from volbench.model import TargetInfo
from volbench.specs.catalogue import Catalogue, Product
from volbench.specs.expectation import expect

PRODUCT = "product"
SIZE = "size_gib"
SIZE_LABELS = (SIZE, "size")
"""The labels a size is read from, in order (``size`` is the older name)."""
PROVISIONED = ("provisioned_iops", "provisioned_mb_s", "extra_performance")
"""Labels of the provisioned values, named as the catalogue's formula variables."""
MAX_AMOUNT = 1e12
"""The largest size or provisioned value a label may hold (as ``check`` takes)."""


def _text(value: float) -> str:
    """A label's text of an amount: ``500``, ``1000000``, ``536.871``."""
    return str(int(value)) if value == int(value) else repr(value)


def promise_labels(
    labels: Sequence[tuple[str, str]],
    product: str | None,
    size: float | None,
    provisioned: Mapping[str, float],
) -> tuple[tuple[str, str], ...]:
    """``labels`` with the product, size and provisioned values given as options; a
    label given twice with two values is one line saying which to keep."""
    given = {PRODUCT: product, SIZE: None if size is None else _text(size)}
    given |= {key: _text(value) for key, value in provisioned.items()}
    found = dict(labels)
    for key, value in given.items():
        if value is None:
            continue
        if key in found and found[key] != value:
            option = "--product" if key == PRODUCT else f"--{key.replace('_', '-')}"
            option = "--product-size" if key == SIZE else option
            raise UsageError(
                f"{option} {value} and --label {key}={found[key]} differ: give one of them"
            )
        found[key] = value
    return tuple(found.items())


def _amount(labels: Mapping[str, str], key: str) -> float | None:
    if key not in labels:
        return None
    try:
        value = float(labels[key])
    except ValueError:
        value = math.nan
    if not 0 < value <= MAX_AMOUNT:
        raise UsageError(
            f"label {key}={labels[key][:40]!r} is not a number above 0, at most {MAX_AMOUNT:g}"
        )
    return value


def provisioned(labels: Mapping[str, str]) -> dict[str, float]:
    """The provisioned values a run's labels record (``provisioned_iops=6000``)."""
    found = {key: _amount(labels, key) for key in PROVISIONED}
    return {key: value for key, value in found.items() if value is not None}


def labelled_size(labels: Mapping[str, str]) -> float | None:
    """The volume's size a run's labels record (``size_gib``, else ``size``)."""
    for key in SIZE_LABELS:
        size = _amount(labels, key)
        if size is not None:
            return size
    return None


def capacity_size(product: Product, target: TargetInfo) -> float:
    """The size of a block-device target in ``product``'s unit (GiB or GB): the whole
    volume; a file's size says nothing of the volume it is on."""
    if target.kind != "block" or not target.capacity_bytes:
        raise UsageError(
            f"give the volume's size for {product.id}: --product-size N (in"
            f" {product.size_unit}), or measure the volume's block device"
        )
    unit = 1 << 30 if product.size_unit == "GiB" else 10**9
    return round(target.capacity_bytes / unit, 3)


def settled(
    labels: Sequence[tuple[str, str]],
    catalogue: Callable[[], Catalogue],
    target: TargetInfo | None,
) -> dict[str, str]:
    """The labels to store with a run on ``target``: when they name a product, with its
    size (:func:`capacity_size` when not given), checked against the catalogue (read
    only then, ``catalogue()``: 0.05 s of CPU with its YAML): an unknown product, a
    size or provisioned value the vendor does not offer is one line (a
    :class:`UsageError`) before anything runs. ``target`` None: before the target is
    prepared, what can be checked without it."""
    found = dict(labels)
    name = found.get(PRODUCT)
    if name is None:
        return found
    product = catalogue().find(name)
    size = labelled_size(found)
    if size is None:
        if target is None:
            return found
        size = capacity_size(product, target)
        found[SIZE] = _text(size)
    expect(product, size, None, provisioned(found))
    return found
