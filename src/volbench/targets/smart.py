"""A drive's temperature and health before and after a test, where it offers them.

Read with smartmontools (``smartctl --json -a DEV``) or, for NVMe, nvme-cli
(``nvme smart-log -o json DEV`` with ``nvme id-ctrl -o json DEV`` for its thresholds).
Devices without SMART (loop, zram, device-mapper: sysfs puts them under
``/sys/devices/virtual``), a missing tool, a tool that fails or prints something
else all give None, never an error: temperature is evidence, not a requirement.

Formats (fixtures in tests/fixtures/smart, with their sources in its README):

- smartctl's JSON (smartmontools 7.0+): ``temperature.current`` in Celsius;
  thresholds in ``temperature.op_limit_max`` (ATA SCT "Specified Max Operating
  Temperature", NVMe "Warning Comp. Temp. Threshold", smartctl 7.5+) and
  ``temperature.critical_limit_max`` (NVMe "Critical Comp. Temp. Threshold") or
  ``limit_max`` (ATA SCT) or ``drive_trip`` (SCSI); NVMe also in
  ``nvme_composite_temperature_threshold``. Older smartctl gives no NVMe thresholds:
  they are then asked of nvme-cli's ``id-ctrl``. ``smartctl.exit_status`` bits 0-1 mean
  the command or the device open failed (smartctl(8), "RETURN VALUES").
- nvme-cli's JSON: ``temperature``, ``wctemp`` and ``cctemp`` in Kelvin (the NVMe
  SMART / Health log and Identify Controller fields), Celsius = K - 273 as nvme-cli
  and smartctl print it; 0 = not reported. Counters print as numbers, or as strings
  in some nvme-cli 2.x versions; ``critical_warning`` is an object with ``-v``.
  ``thm_temp1_trans_count`` / ``thm_temp2_trans_count`` count the drive's host
  controlled thermal management transitions (NVMe 1.3+): the drive slowed itself.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SYS = Path("/sys")
KELVIN = 273
TIMEOUT_S = 30.0


@dataclass(frozen=True)
class DriveTemperatures:
    """The drive's temperature (°C) before and after the test, its thresholds, and
    the thermal-management transitions it counted in between (NVMe)."""

    before_c: float | None
    after_c: float | None
    warning_c: float | None = None
    critical_c: float | None = None
    throttle_events: int | None = None


Runner = Callable[[Sequence[str]], str | None]
"""Runs a command; its stdout, or None when it could not run."""


@dataclass(frozen=True)
class DriveHealth:
    """What one reading said. Temperatures in Celsius; ``warning_c``/``critical_c``
    are the drive's own thresholds (where it reports them); the NVMe counters
    (minutes above the thresholds, thermal transitions) are None for other drives."""

    tool: str
    temperature_c: float | None
    warning_c: float | None = None
    critical_c: float | None = None
    passed: bool | None = None
    critical_warning: int | None = None
    media_errors: int | None = None
    percent_used: int | None = None
    warning_temp_minutes: int | None = None
    critical_temp_minutes: int | None = None
    thermal_transitions: int | None = None
    model: str | None = None

    @property
    def throttle_from_c(self) -> float | None:
        """Where the drive's thermal throttling range starts: its warning threshold,
        else its critical one; None when it reports neither."""
        return self.warning_c if self.warning_c is not None else self.critical_c


def _load(text: str) -> dict[str, Any] | None:
    try:
        data = json.loads(text)
    except (ValueError, TypeError):
        return None
    return data if isinstance(data, dict) else None


def _get(data: Any, *keys: str) -> Any:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data


def _number(value: Any) -> float | None:
    """A JSON number, or a numeric string (some nvme-cli versions); else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _int(value: Any) -> int | None:
    number = _number(value)
    return int(number) if number is not None else None


def _first(*values: float | None) -> float | None:
    return next((v for v in values if v is not None), None)


def parse_smartctl(text: str) -> DriveHealth | None:
    """``smartctl --json -a DEV`` output; None when smartctl could not read the
    device (exit status bits 0-1) or it reported neither temperature nor health."""
    data = _load(text)
    if data is None or (_int(_get(data, "smartctl", "exit_status")) or 0) & 3:
        return None
    temp = _get(data, "temperature") or {}
    nvme = _get(data, "nvme_smart_health_information_log") or {}
    passed = _get(data, "smart_status", "passed")
    current = _number(_get(temp, "current"))
    if current is None and not isinstance(passed, bool):
        return None
    model = _get(data, "model_name")
    return DriveHealth(
        tool="smartctl",
        temperature_c=current,
        warning_c=_first(
            _number(_get(temp, "op_limit_max")),
            _number(_get(data, "nvme_composite_temperature_threshold", "warning")),
            _number(_get(data, "ata_sct_status", "temperature", "op_limit_max")),
        ),
        critical_c=_first(
            _number(_get(temp, "critical_limit_max")),
            _number(_get(data, "nvme_composite_temperature_threshold", "critical")),
            _number(_get(temp, "limit_max")),
            _number(_get(temp, "drive_trip")),
        ),
        passed=passed if isinstance(passed, bool) else None,
        critical_warning=_int(_get(nvme, "critical_warning")),
        media_errors=_int(_get(nvme, "media_errors")),
        percent_used=_int(_get(nvme, "percentage_used")),
        warning_temp_minutes=_int(_get(nvme, "warning_temp_time")),
        critical_temp_minutes=_int(_get(nvme, "critical_comp_time")),
        model=model if isinstance(model, str) else None,
    )


def _celsius(kelvin: Any) -> float | None:
    value = _number(kelvin)
    return value - KELVIN if value else None


def parse_nvme_id_ctrl(text: str) -> tuple[float | None, float | None]:
    """(warning, critical) composite temperature thresholds in Celsius from
    ``nvme id-ctrl -o json`` output (``wctemp``, ``cctemp``); None where not given."""
    data = _load(text) or {}
    return _celsius(data.get("wctemp")), _celsius(data.get("cctemp"))


def parse_nvme_smart_log(text: str, id_ctrl: str | None = None) -> DriveHealth | None:
    """``nvme smart-log -o json DEV`` output (thresholds from ``id_ctrl``, the output
    of ``nvme id-ctrl -o json DEV``, when given); None when it is not a smart log."""
    data = _load(text)
    if data is None or "temperature" not in data:
        return None
    warning = _get(data, "critical_warning")
    critical_warning = _int(_get(warning, "value") if isinstance(warning, dict) else warning)
    transitions = [_int(data.get(k)) for k in ("thm_temp1_trans_count", "thm_temp2_trans_count")]
    known = [t for t in transitions if t is not None]
    warning_c, critical_c = parse_nvme_id_ctrl(id_ctrl) if id_ctrl else (None, None)
    return DriveHealth(
        tool="nvme-cli",
        temperature_c=_celsius(data.get("temperature")),
        warning_c=warning_c,
        critical_c=critical_c,
        passed=critical_warning == 0 if critical_warning is not None else None,
        critical_warning=critical_warning,
        media_errors=_int(data.get("media_errors")),
        percent_used=_int(data.get("percent_used")),
        warning_temp_minutes=_int(data.get("warning_temp_time")),
        critical_temp_minutes=_int(data.get("critical_comp_time")),
        thermal_transitions=sum(known) if known else None,
    )


def has_smart(device: str, sys_root: Path = SYS) -> bool:
    """False for devices the kernel calls virtual (loop, zram, ram, dm, md, nbd):
    they have no SMART, and no tool is run for them."""
    entry = os.path.realpath(sys_root / "class" / "block" / device)
    return os.path.exists(entry) and "/devices/virtual/" not in entry


def run_command(command: Sequence[str]) -> str | None:
    """``command``'s stdout whatever its exit status (smartctl sets status bits for a
    failing drive and still prints); None when it is not installed or cannot run."""
    if shutil.which(command[0]) is None:
        return None
    try:
        done = subprocess.run(
            list(command), capture_output=True, text=True, timeout=TIMEOUT_S, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout


def read_health(
    device: str, *, run: Runner = run_command, sys_root: Path = SYS
) -> DriveHealth | None:
    """The health of ``device`` (a sysfs block device name such as ``nvme0n1``) by
    smartctl, else (NVMe) nvme-cli; None for a device without SMART or no tool."""
    if not has_smart(device, sys_root):
        return None
    path = f"/dev/{device}"
    found = parse_smartctl(run(["smartctl", "--json", "-a", path]) or "")
    if not device.startswith("nvme") or (found and found.throttle_from_c is not None):
        return found
    ctrl = run(["nvme", "id-ctrl", "-o", "json", path])
    if found is None:
        log = run(["nvme", "smart-log", "-o", "json", path])
        return parse_nvme_smart_log(log, ctrl) if log else None
    warning_c, critical_c = parse_nvme_id_ctrl(ctrl or "")
    return dataclasses.replace(found, warning_c=warning_c, critical_c=critical_c)


def temperatures(before: DriveHealth | None, after: DriveHealth | None) -> DriveTemperatures | None:
    """The verdict's view of two readings around a test (None when neither has a
    temperature): thresholds from whichever reading has them, and the thermal
    transitions the drive counted in between (None unless both readings have them)."""
    if (before is None or before.temperature_c is None) and (
        after is None or after.temperature_c is None
    ):
        return None
    readings = [r for r in (after, before) if r is not None]
    events = None
    if before and after and None not in (before.thermal_transitions, after.thermal_transitions):
        events = (after.thermal_transitions or 0) - (before.thermal_transitions or 0)
    return DriveTemperatures(
        before_c=before.temperature_c if before else None,
        after_c=after.temperature_c if after else None,
        warning_c=_first(*(r.warning_c for r in readings)),
        critical_c=_first(*(r.critical_c for r in readings)),
        throttle_events=events,
    )
