"""Host metadata: parsing of /proc and /etc/os-release, and collection on this machine."""

from __future__ import annotations

from volbench.targets.host import (
    collect_host,
    parse_cpu_model,
    parse_mem_total,
    parse_os_release,
)


def test_parse_cpu_model() -> None:
    x86 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n"
    assert parse_cpu_model(x86) == "AMD EPYC 7B13"
    arm = "processor\t: 0\nBogoMIPS\t: 50.00\n\nModel\t: Raspberry Pi 4 Model B\n"
    assert parse_cpu_model(arm) == "Raspberry Pi 4 Model B"
    assert parse_cpu_model("")  # falls back to platform data, never empty


def test_parse_mem_total() -> None:
    assert parse_mem_total("MemTotal:       24684084 kB\nMemFree: 1 kB\n") == 24684084 * 1024
    assert parse_mem_total("") == 0


def test_parse_os_release() -> None:
    text = 'NAME="Debian GNU/Linux"\nVERSION="12 (bookworm)"\nPRETTY_NAME="Debian GNU/Linux 12"\n'
    assert parse_os_release(text) == "Debian GNU/Linux 12"
    assert parse_os_release("NAME='Foo'\nVERSION=1\n") == "Foo 1"


def test_collect_host() -> None:
    host = collect_host("fio-3.33")
    assert host.fio_version == "fio-3.33"
    assert host.hostname
    assert host.cpu_count >= 1
    assert host.cpu_model
    assert host.memory_bytes > 0
    assert host.kernel
    assert host.os
