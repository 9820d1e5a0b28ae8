"""Reading recipe files (schema: ``RECIPES.md``): the built-in ones in ``data/`` and a
user's own (``volbench run recipe --file FILE``).

A recipe file is treated as hostile: YAML safe loading only, at most
:data:`MAX_BYTES`, no anchors or aliases, no repeated keys, nesting at most
:data:`MAX_DEPTH` deep; every field is type-checked, every text is one line unless
it is copied page text, every fio option is one the pages use with a value of its
kind (:mod:`volbench.recipes.options`), and ``filename=``/``directory=`` only ever
hold a target's placeholder. Anything else is a :class:`~volbench.errors.UsageError`
of one line naming the file and the field (``steps[2].fio.jobs[0].options[3]``).
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar, cast

import yaml

from volbench.errors import UsageError
from volbench.fio.job_text import control_problem
from volbench.recipes import options as fio_options
from volbench.recipes.model import (
    Adjustable,
    Expectation,
    Omitted,
    Option,
    Page,
    Recipe,
    Section,
    SourceBlock,
    Step,
    StepKind,
    Target,
    TargetKind,
)
from volbench.text_file import read_text

SCHEMA_VERSION = 1
MAX_BYTES = 256 << 10
"""A recipe file is at most 256 KiB (the largest built-in one is about 15 KiB)."""
MAX_DEPTH = 12
MAX_ITEMS = 200
"""At most this many steps, targets, options ... in any one list."""
MAX_TEXT = 8_000
"""At most this many characters in any one text (a copied job file included)."""

_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}\Z")
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}\Z")
_JOB = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
_KEY = re.compile(r"^[a-z][a-z0-9_-]{0,39}\Z")
_FILE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
_URL = re.compile(r"^https://[^\s<>\"']{1,500}\Z")
_DIGITS_GROUPED = re.compile(r"(?<=\d),(?=\d{3})")

T = TypeVar("T")


class _Loader(yaml.SafeLoader):
    """``yaml.SafeLoader`` refusing aliases, deep nesting and repeated keys."""

    depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise yaml.YAMLError(f"line {self._line()}: anchors and aliases are not allowed")
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise yaml.YAMLError(f"line {self._line()}: nested more than {MAX_DEPTH} deep")
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, str) and key in seen:
                line = key_node.start_mark.line + 1
                raise yaml.YAMLError(f"line {line}: the key {key!r} is given twice")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)

    def _line(self) -> int:
        event: Any = self.peek_event()  # type: ignore[no-untyped-call]
        return int(event.start_mark.line) + 1


def parse_yaml(text: str, origin: str) -> Any:
    """The YAML document of a recipe file's ``text`` (safe loading, shape limits)."""
    try:
        return yaml.load(text, Loader=_Loader)
    except (ValueError, OverflowError) as exc:  # PyYAML's int(), float(), date() of a value
        raise UsageError(_line(f"{origin}: not a valid value: {exc}")) from None
    except yaml.YAMLError as exc:
        raise UsageError(_line(f"{origin}: not valid YAML: {exc}")) from None


def _line(message: str) -> str:
    """``message`` as one line of at most 300 characters."""
    return " ".join(message.split())[:300]


class _Fields:
    """Reads one mapping of the document, naming where it is in every error."""

    def __init__(self, value: Any, where: str, origin: str) -> None:
        if not isinstance(value, dict):
            raise _error(origin, where, f"must be a mapping, not {_kind(value)}")
        self.value: dict[str, Any] = value
        self.where = where
        self.origin = origin

    def keys(self, required: Sequence[str], optional: Sequence[str] = ()) -> None:
        for key in self.value:
            if key not in required and key not in optional:
                allowed = ", ".join((*required, *optional))
                raise _error(self.origin, self.where, f"unknown key {key!r} (known: {allowed})")
        for key in required:
            if key not in self.value:
                raise _error(self.origin, self.where, f"{key!r} is missing")

    def at(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def text(self, key: str, *, multiline: bool = False, empty: bool = False) -> str:
        return _text(self.value.get(key, ""), self.at(key), self.origin, multiline, empty)

    def optional_text(self, key: str) -> str:
        return self.text(key, empty=True) if key in self.value else ""

    def items(self, key: str, empty: bool = True) -> list[Any]:
        value = self.value.get(key, [])
        if not isinstance(value, list):
            raise _error(self.origin, self.at(key), f"must be a list, not {_kind(value)}")
        if len(value) > MAX_ITEMS:
            raise _error(self.origin, self.at(key), f"has more than {MAX_ITEMS} items")
        if not value and not empty:
            raise _error(self.origin, self.at(key), "must not be empty")
        return value

    def each(self, key: str, empty: bool = True) -> Iterator[tuple[str, Any]]:
        for index, item in enumerate(self.items(key, empty)):
            yield f"{self.at(key)}[{index}]", item

    def pattern(self, key: str, pattern: re.Pattern[str], what: str) -> str:
        value = self.text(key)
        if not pattern.match(value):
            raise _error(self.origin, self.at(key), f"{value!r} is not {what}")
        return value

    def flag(self, key: str) -> bool:
        value = self.value.get(key, False)
        if not isinstance(value, bool):
            raise _error(self.origin, self.at(key), f"must be true or false, not {_kind(value)}")
        return value


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "empty"
    return f"{type(value).__name__} {str(value)[:40]!r}"


def _error(origin: str, where: str, problem: str) -> UsageError:
    return UsageError(_line(f"{origin}: {where}: {problem}" if where else f"{origin}: {problem}"))


def _text(value: Any, where: str, origin: str, multiline: bool, empty: bool) -> str:
    if isinstance(value, datetime.date):
        value = value.isoformat()
    if not isinstance(value, str):
        raise _error(origin, where, f"must be text, not {_kind(value)}")
    if len(value) > MAX_TEXT:
        raise _error(origin, where, f"is longer than {MAX_TEXT:,} characters")
    lines = value.split("\n") if multiline else [value]
    for line in lines:
        problem = control_problem(line.replace("\t", " "))
        if problem:
            what = "a line of it" if multiline else "it"
            raise _error(origin, where, f"{what} {problem} (one line of plain text)")
    if not value.strip() and not empty:
        raise _error(origin, where, "must not be empty")
    return value if multiline else value.strip()


def _date(fields: _Fields, key: str) -> str:
    value = fields.text(key)
    try:
        valid = re.fullmatch(r"\d{4}-\d{2}-\d{2}", value) and datetime.date.fromisoformat(value)
    except ValueError:
        valid = None
    if not valid:
        raise _error(fields.origin, fields.at(key), f"{value!r} is not a date (YYYY-MM-DD)")
    return value


def _page(value: Any, where: str, origin: str, key: str | None) -> Page:
    fields = _Fields(value, where, origin)
    required = ("title", "url", "read", "page_date", "text_from")
    fields.keys(required if key is not None else ("key", *required))
    if key is None:
        key = fields.pattern("key", _NAME, "a key (a-z, 0-9, _)")
        if key == "page":
            raise _error(origin, fields.at("key"), "'page' is the recipe's own page")
    return Page(
        key=key,
        title=fields.text("title"),
        url=fields.pattern("url", _URL, "an https:// address"),
        read=_date(fields, "read"),
        page_date=fields.text("page_date"),
        text_from=fields.text("text_from"),
    )


def _target(value: Any, where: str, origin: str) -> Target:
    fields = _Fields(value, where, origin)
    fields.keys(("name", "kind", "page_values", "what"), ("optional",))
    kind = fields.text("kind")
    if kind not in ("device", "file", "directory"):
        raise _error(origin, fields.at("kind"), f"{kind!r} is not device, file or directory")
    values = tuple(_text(v, w, origin, False, False) for w, v in fields.each("page_values", False))
    return Target(
        name=fields.pattern("name", _NAME, "a name (a-z, 0-9, _)"),
        kind=cast(TargetKind, kind),
        page_values=values,
        what=fields.text("what"),
        optional=fields.flag("optional"),
    )


def _option(value: Any, where: str, origin: str, allowed: Mapping[str, Any]) -> Option:
    text = _text(value, where, origin, False, False)
    key, sep, option_value = text.partition("=")
    option = Option(key.strip(), option_value if sep else None)
    problem = fio_options.problem(option.key, option.value, allowed)
    if problem:
        raise _error(origin, where, problem)
    return option


def _options(fields: _Fields, key: str, allowed: Mapping[str, Any]) -> tuple[Option, ...]:
    return tuple(_option(v, w, fields.origin, allowed) for w, v in fields.each(key))


def _source(value: Any, where: str, origin: str) -> SourceBlock:
    fields = _Fields(value, where, origin)
    if "command" in fields.value:
        fields.keys(("command",))
        return SourceBlock(fields.text("command", multiline=True))
    fields.keys(("file", "text"))
    return SourceBlock(
        fields.text("text", multiline=True), fields.pattern("file", _FILE, "a file name")
    )


def _expectation(value: Any, where: str, origin: str) -> Expectation:
    fields = _Fields(value, where, origin)
    fields.keys(("what", "value", "unit", "quote", "condition"), ("at_least",))
    number = fields.value["value"]
    if isinstance(number, bool) or not isinstance(number, int | float) or not number > 0:
        raise _error(origin, fields.at("value"), f"must be a positive number, not {_kind(number)}")
    quote = fields.text("quote")
    if not _states(quote, float(number)):
        raise _error(origin, fields.at("quote"), f"does not state the value {number:g}")
    return Expectation(
        what=fields.text("what"),
        value=float(number),
        unit=fields.text("unit"),
        quote=quote,
        condition=fields.text("condition"),
        at_least=fields.flag("at_least"),
    )


def _states(quote: str, value: float) -> bool:
    """Whether ``quote`` writes ``value``: ``12,800``, ``12800`` or ``100k``."""
    plain = _DIGITS_GROUPED.sub("", quote)
    forms = [f"{value:g}", f"{value:.0f}"]
    if value >= 1000 and value % 1000 == 0:
        forms.append(f"{value / 1000:g}k")
    return any(re.search(rf"(?<![\d.]){re.escape(form)}(?![\d])", plain) for form in forms)


def _sections(fields: _Fields) -> tuple[Section, ...]:
    sections: list[Section] = []
    global_options = _options(fields, "global", fio_options.JOB_OPTIONS)
    if global_options:
        sections.append(Section("global", global_options))
    names: set[str] = set()
    for where, value in fields.each("jobs", empty=False):
        job = _Fields(value, where, fields.origin)
        job.keys(("name", "options"))
        name = job.pattern("name", _JOB, "an fio job name (letters, digits, _ . -)")
        if name == "global" or name in names:
            raise _error(fields.origin, job.at("name"), f"the job name {name!r} is taken")
        names.add(name)
        sections.append(Section(name, _options(job, "options", fio_options.JOB_OPTIONS)))
    return tuple(sections)


def _step(value: Any, where: str, origin: str, pages: set[str]) -> tuple[Step, str]:
    fields = _Fields(value, where, origin)
    fields.keys(("id", "kind", "quote", "source", "reports"), ("page", "when", "expects", "fio"))
    step_id = fields.pattern("id", _ID, "a step id (a-z, 0-9, -)")
    kind = fields.text("kind")
    if kind not in ("prepare", "measure"):
        raise _error(origin, fields.at("kind"), f"{kind!r} is not prepare or measure")
    page = fields.text("page") if "page" in fields.value else "page"
    if page not in pages:
        raise _error(origin, fields.at("page"), f"no page {page!r} in the recipe's sources")
    sections: tuple[Section, ...] = ()
    args: tuple[Option, ...] = ()
    if "fio" in fields.value:
        fio = _Fields(fields.value["fio"], fields.at("fio"), origin)
        fio.keys(("jobs",), ("global", "args"))
        sections = _sections(fio)
        args = _options(fio, "args", fio_options.FIO_ARGS)
    source = tuple(_source(v, w, origin) for w, v in fields.each("source", empty=not sections))
    step = Step(
        id=step_id,
        kind=cast(StepKind, kind),
        quote=fields.text("quote"),
        source=source,
        reports=fields.text("reports"),
        sections=sections,
        args=args,
        page=page,
        when=fields.optional_text("when"),
        expects=tuple(_expectation(v, w, origin) for w, v in fields.each("expects")),
    )
    return step, fields.at("fio")


def _check_targets(recipe: Recipe, fio_at: Mapping[str, str], origin: str) -> None:
    """Every ``filename``/``directory`` value is a target's placeholder of the right kind,
    every job names exactly one, and every target is used."""
    by_value: dict[str, Target] = {}
    for target in recipe.targets:
        for value in target.page_values:
            if value in by_value:
                raise _error(origin, "targets", f"{value!r} names two targets")
            by_value[value] = target
    used: set[str] = set()
    for step in recipe.steps:
        where = fio_at[step.id]
        global_paths = [o for s in step.sections if s.name == "global" for o in s.options]
        for section in step.sections:
            paths = [o for o in section.options if o.key in fio_options.PATH_OPTIONS]
            if section.name != "global":
                paths = [o for o in global_paths if o.key in fio_options.PATH_OPTIONS] + paths
                keys = {o.key for o in paths}
                if len(keys) != 1:
                    raise _error(
                        origin,
                        where,
                        f"job {section.name!r} must name its target once, by"
                        " filename or by directory",
                    )
            for option in paths:
                named = by_value.get(option.value or "")
                if named is None:
                    raise _error(
                        origin,
                        where,
                        f"{option.text!r} is no target's page value: a recipe"
                        " never names a path of its own",
                    )
                wanted = "directory" if option.key == "directory" else "device or file"
                if (named.kind == "directory") != (option.key == "directory"):
                    raise _error(
                        origin,
                        where,
                        f"{option.text!r} needs a {wanted} target, and"
                        f" {named.name!r} is a {named.kind}",
                    )
                used.add(named.name)
    unused = [t.name for t in recipe.targets if t.name not in used]
    if unused:
        raise _error(origin, "targets", f"{', '.join(unused)} is used by no step")


def _adjustable(value: Any, where: str, origin: str) -> Adjustable:
    fields = _Fields(value, where, origin)
    fields.keys(("option", "quote"))
    option = fields.text("option")
    if option not in fio_options.JOB_OPTIONS or option in fio_options.PATH_OPTIONS:
        raise _error(origin, fields.at("option"), f"{option!r} cannot be adjusted")
    return Adjustable(option, fields.text("quote"))


def _omitted(value: Any, where: str, origin: str) -> Omitted:
    fields = _Fields(value, where, origin)
    fields.keys(("what", "source", "why"))
    return Omitted(
        fields.text("what"), fields.text("source", multiline=True, empty=True), fields.text("why")
    )


def _unique(items: Sequence[T], key: Callable[[T], str], origin: str, where: str) -> None:
    seen: set[str] = set()
    for item in items:
        name = key(item)
        if name in seen:
            raise _error(origin, where, f"{name!r} is given twice")
        seen.add(name)


def parse_recipe(document: Any, origin: str = "built-in") -> Recipe:
    """A recipe from its YAML document; ``origin`` names the file in every error."""
    fields = _Fields(document, "", origin)
    fields.keys(
        ("schema_version", "id", "cloud", "summary", "page", "targets", "steps"),
        ("sources", "adjust", "omitted", "notes"),
    )
    if fields.value["schema_version"] != SCHEMA_VERSION:
        raise _error(origin, "schema_version", f"must be {SCHEMA_VERSION}")
    page = _page(fields.value["page"], "page", origin, key="page")
    sources = tuple(_page(v, w, origin, key=None) for w, v in fields.each("sources"))
    _unique(sources, lambda p: p.key, origin, "sources")
    targets = tuple(_target(v, w, origin) for w, v in fields.each("targets", empty=False))
    _unique(targets, lambda t: t.name, origin, "targets")
    keys = {"page", *(p.key for p in sources)}
    read = [_step(v, w, origin, keys) for w, v in fields.each("steps", empty=False)]
    steps = tuple(step for step, _ in read)
    _unique(steps, lambda s: s.id, origin, "steps")
    if not any(step.kind == "measure" for step in steps):
        raise _error(origin, "steps", "no step measures anything")
    adjust = tuple(_adjustable(v, w, origin) for w, v in fields.each("adjust"))
    _unique(adjust, lambda a: a.option, origin, "adjust")
    recipe = Recipe(
        id=fields.pattern("id", _ID, "a recipe id (a-z, 0-9, -)"),
        cloud=fields.text("cloud"),
        summary=fields.text("summary"),
        page=page,
        targets=targets,
        steps=steps,
        sources=sources,
        adjust=adjust,
        omitted=tuple(_omitted(v, w, origin) for w, v in fields.each("omitted")),
        notes=tuple(_text(v, w, origin, False, False) for w, v in fields.each("notes")),
        origin=origin,
    )
    _check_targets(recipe, {step.id: at for step, at in read}, origin)
    for item in adjust:
        if not any(o.key == item.option for s in steps for sec in s.sections for o in sec.options):
            raise _error(origin, "adjust", f"no step sets {item.option!r}")
    return recipe


def read_recipe(path: Path) -> Recipe:
    """The recipe in the user's file ``path`` (one recipe a file)."""
    origin = str(path)
    return parse_recipe(parse_yaml(read_text(path, MAX_BYTES, "recipe"), origin), origin)


@cache
def built_in() -> tuple[Recipe, ...]:
    """volbench's own recipes (``data/*.yaml`` in this package), by id."""
    folder = resources.files(__package__).joinpath("data")
    recipes = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            origin = f"built-in recipe {entry.name}"
            recipe = parse_recipe(parse_yaml(entry.read_text(encoding="utf-8"), origin), origin)
            recipes.append(replace(recipe, origin="built-in"))
    return tuple(sorted(recipes, key=lambda r: r.id))


def load(files: Sequence[Path] = ()) -> tuple[Recipe, ...]:
    """The built-in recipes and those of the user's ``files``: an id given twice is a
    one-line error."""
    recipes = [*built_in(), *(read_recipe(path) for path in files)]
    seen: dict[str, str] = {}
    for recipe in recipes:
        if recipe.id in seen:
            raise UsageError(
                f"{recipe.origin}: the recipe id {recipe.id!r} is taken ({seen[recipe.id]})"
            )
        seen[recipe.id] = recipe.origin
    return tuple(recipes)


def find(recipes: Sequence[Recipe], name: str) -> Recipe:
    """The recipe whose id is ``name``; else a one-line error listing the ids."""
    for recipe in recipes:
        if recipe.id == name.strip().lower():
            return recipe
    ids = ", ".join(r.id for r in recipes)
    raise UsageError(f"no recipe {name!r}: the recipes are {ids} (volbench run recipe --list)")
