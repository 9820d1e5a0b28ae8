"""The options a PTS test declares for itself, as data.

A test's own options are one frozen dataclass, a subclass of :class:`OwnOptions`,
whose every field is declared with :func:`option`: the key it is stored under in
a run's settings (and the command's ``--KEY``), its bounds or its parser, its
help text and the PTS test it comes from. The test names the record as its
:attr:`~volbench.plans.pts.test.PtsTest.own`; the ``pts`` command's options are
made from these declarations, and the values reach the test as its record
(:meth:`volbench.plans.pts.options.PtsOptions.of`). Several tests may share one
record (the IOPS matrix is also the Latency test's).
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:  # options imports the catalog, which imports the tests
    from volbench.plans.pts.options import PtsOptions

DECLARED = "volbench.pts.option"
"""The key of a field's metadata that holds its :class:`Declared`."""


@dataclass(frozen=True)
class Declared:
    """One option of a test: stored as ``key`` (the command takes ``--KEY`` with
    dashes); an integer between ``low`` and ``high``, or the value ``parse`` makes
    of the text typed (UsageError when wrong; None: no value given). ``shown`` is
    what the help says of the default."""

    key: str
    help: str
    source: str
    low: int | None = None
    high: int | None = None
    parse: Callable[[str], Any] | None = None
    shown: str | None = None

    @property
    def flag(self) -> str:
        return "--" + self.key.replace("_", "-")


def option(default: Any, declared: Declared) -> Any:
    """A field of an :class:`OwnOptions` record: its ``default`` and declaration."""
    return dataclasses.field(default=default, metadata={DECLARED: declared})


class OwnOptions:
    """A test's own options (subclasses are frozen dataclasses of :func:`option`
    fields, each with a default). ``tests`` below are the names of the run's tests
    that read this record; by default nothing is refused, fitted or reported."""

    TITLE: ClassVar[str] = ""
    """The heading of its options in ``volbench pts --help``."""

    def check(self, options: PtsOptions, tests: tuple[str, ...]) -> None:
        """UsageError when these values leave one of ``tests`` nothing to run."""

    def fitted(self, options: PtsOptions, tests: tuple[str, ...], where: str) -> OwnOptions:
        """These values for a target of ``options.logical_block_bytes`` (``where``
        names it in a UsageError for what cannot be fitted)."""
        return self

    def reasons(self, options: PtsOptions, tests: tuple[str, ...]) -> tuple[str, ...]:
        """Why these values make ``tests`` non-compliant with PTS (empty: they do not)."""
        return ()


def declarations(kind: type[OwnOptions]) -> tuple[tuple[str, Declared], ...]:
    """(field name, declaration) of each field of ``kind``, in order."""
    if not dataclasses.is_dataclass(kind):
        raise TypeError(f"{kind.__name__} is not a dataclass of declared options")
    found = []
    for field in dataclasses.fields(kind):
        declared = field.metadata.get(DECLARED)
        if not isinstance(declared, Declared):
            raise TypeError(f"{kind.__name__}.{field.name} is not declared with option()")
        found.append((field.name, declared))
    return tuple(found)


def field_types(kind: type[OwnOptions]) -> dict[str, Any]:
    """The type of each field of ``kind`` (what a stored value must be)."""
    return typing.get_type_hints(kind)


def stored(record: OwnOptions) -> dict[str, Any]:
    """``record``'s values by stored key."""
    return {d.key: getattr(record, name) for name, d in declarations(type(record))}


def given(kind: type[OwnOptions], values: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of ``kind`` among ``values`` (by stored key), by field name."""
    return {name: values[d.key] for name, d in declarations(kind) if d.key in values}
