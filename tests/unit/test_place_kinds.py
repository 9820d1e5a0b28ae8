"""The table of place kinds: each ``--hosts`` spelling has one kind, the kinds that
open something are reached after the others' addresses are known, and no module
outside ``volbench/places`` tests a place's spelling."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import volbench
from volbench.errors import UsageError
from volbench.fio.client import HostAddress
from volbench.model import Place
from volbench.places import table
from volbench.places.lab import LAB
from volbench.places.server import SERVER
from volbench.places.ssh import SSH
from volbench.targets import cgroup
from volbench.targets.cgroup import Written

SPELLING = re.compile(
    r"""is_lab\(|is_ssh\(|startswith\(\s*["'](lab|ssh)://|["'](lab|ssh)://["']\s+in\b"""
)


def test_each_spelling_has_one_kind() -> None:
    assert table.kind_of("ssh://root@h") is SSH and table.kind_of(" SSH://h") is SSH
    assert table.kind_of("lab://g1") is LAB and table.kind_of("LAB://g1:/dev/vda") is LAB
    assert table.kind_of("10.0.0.5:8766") is SERVER and table.kind_of("/data/x") is SERVER
    assert table.host_name("LAB://G1") == "lab://g1"
    assert table.split_place("ssh://u@h:22:/dev/vdb") == ("ssh://u@h:22", ":/", "dev/vdb")
    assert table.split_place("10.0.0.5:/x") == ("10.0.0.5", ":/", "x")
    assert table.default_targets(["lab://a", "lab://b"]) == ["/dev/vda"]
    assert table.default_targets(["lab://a", "ssh://h"]) == []
    assert not table.can_purge([Place("ssh://h", "/dev/vdb")])


class Opening:
    """A kind that opens a way to its hosts, as ssh does: it records what it was told."""

    name = "opening"
    scheme = "open://"
    told: list[Sequence[str]]

    def __init__(self) -> None:
        self.told = []

    def owns(self, spec: str) -> bool:
        return spec.startswith(self.scheme)

    def address(self, host: str) -> HostAddress | None:
        return None

    @contextlib.contextmanager
    def reach(self, hosts: Sequence[str], taken: Sequence[str]) -> Iterator[list[HostAddress]]:
        self.told.append(list(taken))
        yield [HostAddress(f"127.0.0.{101 + n}", 9000, name=h) for n, h in enumerate(hosts)]


def test_kinds_that_open_a_way_are_told_the_other_hosts_addresses(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    opening = Opening()
    monkeypatch.setattr(table, "KINDS", (opening, *table.KINDS))
    hosts = ["open://a", "127.0.0.101:8765", "open://b"]
    with table.connected(hosts) as addresses:
        assert [str(a) for a in addresses] == ["open://a", "127.0.0.101", "open://b"]
    assert opening.told == [["127.0.0.101"]]


def test_no_module_outside_the_place_kinds_tests_a_places_spelling() -> None:
    source = Path(volbench.__file__).parent
    found = [
        f"{path.relative_to(source)}:{n}"
        for path in source.rglob("*.py")
        if path.parent.name != "places"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if SPELLING.search(line)
    ]
    assert found == []


class Limiting:
    """A kind that holds its places to limits: it records what is held, and when."""

    name = "limiting"
    scheme = "limit://"

    def __init__(self) -> None:
        self.held: list[str] = []

    def owns(self, spec: str) -> bool:
        return spec.startswith(self.scheme)

    @contextlib.contextmanager
    def limit(self, place: Place, limits: cgroup.Limits, plan: str) -> Iterator[list[Written]]:
        self.held.append(f"{place.label} {limits.read_iops}")
        try:
            yield [Written(limits.tenant, f"{place.label} riops", str(limits.read_iops))]
        finally:
            self.held.remove(f"{place.label} {limits.read_iops}")


def _limits(tenant: str, iops: int) -> cgroup.Limits:
    return cgroup.Limits(tenant, iops, 0, 0, 0, 500, 100, f"pabc-{tenant}")


def test_places_are_held_to_their_limits_by_their_kind_and_given_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kind = Limiting()
    monkeypatch.setattr(table, "KINDS", (kind, *table.KINDS))
    places = [Place("limit://a", "/x"), Place("limit://b", "/y")]
    with table.limited(places, [_limits("a", 100), _limits("b", 200)], "abc") as written:
        assert kind.held == ["limit://a:/x 100", "limit://b:/y 200"]
        assert [(w.tenant, w.value) for w in written] == [("a", "100"), ("b", "200")]
    assert kind.held == []
    # a kind that cannot limit refuses in one line; what was held already is given back
    refused = [Place("limit://a", "/x"), Place("10.0.0.5", "/dev/vdb")]
    with (
        pytest.raises(UsageError, match=r"cannot hold 10.0.0.5 to a QoS plan's limits"),
        table.limited(refused, [_limits("a", 100), _limits("b", 200)], "abc"),
    ):
        pass
    assert kind.held == []
    for host in ("ssh://h", "lab://g1"):
        with pytest.raises(UsageError, match=f"cannot hold {host} to"):
            table.kind_of(host).limit(Place(host, "/dev/vdb"), _limits("a", 1), "abc")
