"""The host a run happens on: collected once per run and stored with it."""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path

from volbench.model import HostInfo
from volbench.targets.kernel_file import kernel_text

CPUINFO = Path("/proc/cpuinfo")
MEMINFO = Path("/proc/meminfo")
OS_RELEASE_FILES = (Path("/etc/os-release"), Path("/usr/lib/os-release"))


def parse_cpu_model(cpuinfo: str) -> str:
    """The CPU model from /proc/cpuinfo text ("model name", or what ARM and others use)."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() not in fields:
            fields[key.strip()] = value.strip()
    for key in ("model name", "Model", "Hardware", "cpu model", "cpu", "Processor"):
        if fields.get(key):
            return fields[key]
    return platform.processor() or platform.machine() or "unknown"


def parse_mem_total(meminfo: str) -> int:
    """MemTotal from /proc/meminfo text, in bytes (0 when absent)."""
    for line in meminfo.splitlines():
        if line.startswith("MemTotal:"):
            parts = line.split()
            factor = 1024 if len(parts) > 2 and parts[2].lower() == "kb" else 1
            return int(parts[1]) * factor
    return 0


def parse_os_release(text: str) -> str:
    """PRETTY_NAME (else NAME VERSION) from os-release text, unquoted."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip().strip("'\"")
    if values.get("PRETTY_NAME"):
        return values["PRETTY_NAME"]
    return " ".join(v for v in (values.get("NAME"), values.get("VERSION")) if v)


def collect_host(fio_version: str) -> HostInfo:
    """Describe this machine: hostname, CPUs, memory, kernel and OS."""
    os_name = next((parse_os_release(t) for p in OS_RELEASE_FILES if (t := kernel_text(p))), "")
    return HostInfo(
        hostname=socket.gethostname(),
        cpu_count=os.cpu_count() or 1,
        cpu_model=parse_cpu_model(kernel_text(CPUINFO) or ""),
        memory_bytes=parse_mem_total(kernel_text(MEMINFO) or ""),
        kernel=platform.release(),
        fio_version=fio_version,
        os=os_name or f"{platform.system()} {platform.release()}",
    )
