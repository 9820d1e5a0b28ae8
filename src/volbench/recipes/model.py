"""The typed records of a recipe (:mod:`volbench.recipes`): frozen, checked when read
(:mod:`volbench.recipes.loader`), never changed afterwards."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

TargetKind = Literal["device", "file", "directory"]
"""What a recipe's target is: a block device (a file may stand in for one), a file
(a block device may be given instead), or a folder fio lays its files out in."""

StepKind = Literal["prepare", "measure"]
"""``prepare``: a step the page asks for before it measures (fill, initialize, warm up);
``measure``: a step whose figure is the benchmark's result."""


@dataclass(frozen=True)
class Page:
    """A page a recipe was read from, named so a reader can look it up."""

    key: str
    """``page`` for the recipe's own page, else the id steps name it by (``initialize``)."""
    title: str
    url: str
    read: str
    """The day (ISO date) its text was read for volbench."""
    page_date: str
    """The page's own date as its text or source states it, or why it has none."""
    text_from: str
    """Where the text was read: the page's source in the vendor's repository, or a copy."""


@dataclass(frozen=True)
class Target:
    """A file, device or folder the page names, which the user's target replaces."""

    name: str
    kind: TargetKind
    page_values: tuple[str, ...]
    """How the page writes it (``/dev/sdb``, ``$TEST_DIR``, ``device name``): the value of
    ``filename=`` or ``directory=`` the user's target replaces. Never used as a path."""
    what: str
    optional: bool = False
    """An optional target's steps are left out when it is not given (AWS: initializing
    a volume restored from a snapshot)."""


@dataclass(frozen=True)
class Option:
    """One fio option as fio reads it: ``key=value``, or a flag (``value`` None)."""

    key: str
    value: str | None

    @property
    def text(self) -> str:
        """The option as a job file line (``bs=4k``, ``time_based``)."""
        return self.key if self.value is None else f"{self.key}={self.value}"


@dataclass(frozen=True)
class Section:
    """A section of a job file: ``global`` or one job, its options in the page's order."""

    name: str
    options: tuple[Option, ...]


@dataclass(frozen=True)
class SourceBlock:
    """Text copied from the page: a command line (``file`` empty) or a job file (its name)."""

    text: str
    file: str = ""


@dataclass(frozen=True)
class Expectation:
    """A figure the page expects a step to reach, in the page's words."""

    what: str
    value: float
    unit: str
    quote: str
    condition: str
    at_least: bool = False
    """The page says "more than": the figure is a floor, not the result."""


@dataclass(frozen=True)
class Step:
    """One step of a recipe: a fio command (or job file) of the page, or an instruction
    the page gives no fio command for (no ``sections``)."""

    id: str
    kind: StepKind
    quote: str
    """The page's words that introduce the command."""
    source: tuple[SourceBlock, ...]
    """The command lines and job files exactly as the page gives them."""
    reports: str
    """The figure the step reports (or what it is for, for a preparation)."""
    sections: tuple[Section, ...] = ()
    """The job file fio reads for it: ``global`` first when the page sets defaults."""
    args: tuple[Option, ...] = ()
    """fio command-line options that are no job options (``--eta-newline=1``, ``--readonly``)."""
    page: str = "page"
    """The :attr:`Page.key` of the page the step comes from."""
    when: str = ""
    """When the page asks for the step (empty: always)."""
    expects: tuple[Expectation, ...] = ()

    @property
    def runs_fio(self) -> bool:
        return bool(self.sections)


@dataclass(frozen=True)
class Adjustable:
    """An option the page tells the reader to change (GCP: ``--filesize`` to the disk's size)."""

    option: str
    quote: str


@dataclass(frozen=True)
class Omitted:
    """Something the page gives that is not a step of the recipe, and why."""

    what: str
    source: str
    why: str


@dataclass(frozen=True)
class Recipe:
    """One vendor's published benchmark procedure (see :mod:`volbench.recipes`)."""

    id: str
    cloud: str
    summary: str
    page: Page
    targets: tuple[Target, ...]
    steps: tuple[Step, ...]
    sources: tuple[Page, ...] = ()
    """Other pages steps come from (AWS: "Initialize Amazon EBS volumes")."""
    adjust: tuple[Adjustable, ...] = ()
    omitted: tuple[Omitted, ...] = ()
    notes: tuple[str, ...] = ()
    origin: str = "built-in"
    """``built-in``, or the user's file the recipe was read from."""

    def page_of(self, step: Step) -> Page:
        """The page ``step`` was copied from."""
        for page in (self.page, *self.sources):
            if page.key == step.page:
                return page
        raise KeyError(step.page)  # the loader checked every step's page

    def step(self, step_id: str) -> Step:
        for step in self.steps:
            if step.id == step_id:
                return step
        raise KeyError(step_id)
