"""SSH hosts at the border: parsing, the ssh command line, the remote script, the
places of ssh:// hosts, and the agent's warning for an address beyond loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from volbench.errors import UsageError
from volbench.fio.client import HostAddress
from volbench.fio.server import exposure_warning
from volbench.fio.tunnel import SshHost, local_addresses, remote_script, ssh_command
from volbench.places.ssh import parse_ssh_host
from volbench.places.table import host_name
from volbench.plans.placement.fleet_spec import Fleet
from volbench.plans.placement.named import places_from


@pytest.mark.parametrize(
    ("text", "host"),
    [
        ("ssh://h", SshHost("h")),
        ("ssh://root@10.0.0.5", SshHost("10.0.0.5", "root")),
        ("SSH://bench_user@db-1.example.com:2222", SshHost("db-1.example.com", "bench_user", 2222)),
        ("ssh://u@[::1]:22", SshHost("[::1]", "u", 22)),
    ],
)
def test_ssh_hosts_parse(text: str, host: SshHost) -> None:
    assert parse_ssh_host(text) == host
    assert parse_ssh_host(str(parse_ssh_host(text))) == host
    assert str(parse_ssh_host(text)).startswith("ssh://")


@pytest.mark.parametrize(
    "text",
    [
        "ssh://-oProxyCommand=touch%20/tmp/x",
        "ssh://-h",
        "ssh://root@-h",
        "ssh://-l@h",
        "ssh://a b",
        "ssh://h\n-oX=y",
        "ssh://h\x00",
        "ssh://h;id",
        "ssh://h:0",
        "ssh://h:70000",
        "ssh://",
        "ssh://u@",
        "ssh://h/path",
    ],
)
def test_hostile_ssh_hosts_are_refused(text: str) -> None:
    with pytest.raises(UsageError) as refused:
        parse_ssh_host(text)
    assert "\n" not in str(refused.value).replace(repr(text), "")


def test_ssh_command_ends_options_before_the_destination() -> None:
    local = HostAddress("127.0.0.101", 40001, name="ssh://u@h:2222")
    command = ssh_command(SshHost("h", "u", 2222), local, "/tmp/volbench-fio-ab", Path("/c"))
    end = command.index("--")
    assert command[end + 1 :] == ["u@h", f"sh -c '{remote_script('/tmp/volbench-fio-ab')}'"]
    options = command[:end]
    assert options[:4] == ["ssh", "-T", "-F", "/c"]
    assert options[options.index("-p") : options.index("-p") + 2] == ["-p", "2222"]
    assert options[options.index("-L") + 1] == "127.0.0.101:40001:/tmp/volbench-fio-ab/fio.sock"
    for setting in ("BatchMode=yes", "ExitOnForwardFailure=yes", "ControlPath=none"):
        assert setting in options
    assert any(o.startswith("ServerAliveInterval=") for o in options)


def test_remote_script_passes_any_login_shell_in_single_quotes() -> None:
    script = remote_script("/tmp/volbench-fio-0123")
    assert "'" not in script and "\\" not in script
    assert script.startswith("umask 077 && mkdir /tmp/volbench-fio-0123 || exit 1;")
    assert script.endswith("exec fio --server=sock:/tmp/volbench-fio-0123/fio.sock 3<&-")
    assert "read x <&3; kill -TERM 0; rm -rf /tmp/volbench-fio-0123" in script


def test_every_tunnel_gets_its_own_loopback_address() -> None:
    assert local_addresses([], 2) == ["127.0.0.101", "127.0.0.102"]
    assert local_addresses(["127.0.0.101"], 1) == ["127.0.0.102"]
    with pytest.raises(UsageError):
        local_addresses([], 1000)


def test_places_on_ssh_hosts() -> None:
    hosts = ["ssh://root@h1", "ssh://h2:2222", "10.0.0.5:8766"]
    targets = ["ssh://root@h1:/dev/vdb", "ssh://h2:2222:/data/t.img", "10.0.0.5:8766:/dev/vdc"]
    places = places_from(targets, hosts)
    assert [p.label for p in places] == targets
    assert host_name("ssh://root@h1") == "ssh://root@h1"
    with pytest.raises(UsageError, match="ssh://h3 is not in --hosts"):
        places_from(["ssh://h3:/dev/vdb"], hosts)
    with pytest.raises(UsageError, match="given twice"):
        places_from(["/x"], ["ssh://h", "SSH://h"])


def test_a_fleet_names_ssh_hosts_by_their_ssh_address() -> None:
    places = places_from(["/x"], ["ssh://root@h1", "10.0.0.5"])
    tunnel = HostAddress("127.0.0.101", 40001, name="ssh://root@h1")
    fleet = Fleet(places, endpoints={"ssh://root@h1": tunnel})
    assert [str(h) for h in fleet.hosts()] == ["ssh://root@h1", "10.0.0.5"]
    assert fleet.hosts()[0].client_option == "--client=127.0.0.101,40001"
    with pytest.raises(Exception, match="not connected"):
        Fleet(places).hosts()


@pytest.mark.parametrize("bind", [None, "127.0.0.1", "::1", "[::1]", "localhost"])
def test_no_warning_on_the_default_loopback(bind: str | None) -> None:
    assert exposure_warning(bind, 8765) is None


@pytest.mark.parametrize("bind", ["0.0.0.0", "10.0.0.5", "::", "127.0.0.5", "host.example"])
def test_warning_for_any_other_address(bind: str) -> None:
    warning = exposure_warning(bind, 8766)
    assert warning is not None and "\n" not in warning
    assert "no authentication" in warning and f"{bind} port 8766" in warning
    assert "root" in warning and "ssh://" in warning
