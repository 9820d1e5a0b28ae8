"""The limits a guest's disk is given: hand-set figures, or what a catalogue product
promises at the disk's size (``lab up NAME --product P --size N``), through the same
:func:`volbench.specs.expectation.expect` as ``volbench check``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from volbench.errors import UsageError
from volbench.lab import io_max
from volbench.lab.throttle import HandLimits, Limits, from_expectation, from_hand
from volbench.specs import catalogue
from volbench.specs.expectation import expect


def promised_limits(
    product: str,
    disk_bytes: int,
    provisioned: Mapping[str, float],
    files: tuple[str, ...] = (),
) -> Limits:
    """The limits of catalogue ``product`` (built-in, or the user's ``files``) at the
    size of a ``disk_bytes`` disk in the product's unit (GiB or GB), with its
    provisioned values: :func:`~volbench.lab.throttle.from_expectation` of the
    catalogue's promise today."""
    with catalogue.using(files):
        found = catalogue.load().find(product)
    unit = 1 << 30 if found.size_unit == "GiB" else 10**9
    return from_expectation(expect(found, round(disk_bytes / unit, 3), None, provisioned))


@dataclass(frozen=True)
class LimitChoice:
    """What the user asked the disk to be limited as: hand-set figures, or a
    ``product`` with its provisioned values (``provisioned_iops`` ...) from the
    catalogue and the user's ``catalogue_files``."""

    hand: HandLimits = field(default_factory=HandLimits)
    product: str | None = None
    provisioned: Mapping[str, float] = field(default_factory=dict)
    catalogue_files: tuple[str, ...] = ()

    def limits(self, disk_bytes: int) -> Limits:
        """The limits for a disk of ``disk_bytes``; UsageError for a product with
        hand-set figures, or figures QEMU cannot combine."""
        if self.product is None:
            limits = from_hand(self.hand)
            if limits.in_guest:
                io_max.check(limits)
            return limits
        if self.hand != HandLimits():
            raise UsageError("give --product or hand-set limits (--iops-total ...), not both")
        return promised_limits(self.product, disk_bytes, self.provisioned, self.catalogue_files)
