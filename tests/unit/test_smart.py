"""Drive health parsers on recorded smartctl and nvme-cli outputs (tests/fixtures/smart,
sources in its README), the tool runner's fallbacks, and the verdict's temperatures."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from volbench.targets.smart import (
    DriveHealth,
    DriveTemperatures,
    has_smart,
    parse_nvme_id_ctrl,
    parse_nvme_smart_log,
    parse_smartctl,
    read_health,
    run_command,
    temperatures,
)

SMART = Path(__file__).resolve().parents[1] / "fixtures" / "smart"


def fixture(name: str) -> str:
    return (SMART / name).read_text()


def test_ata_ssd_with_sct_limits() -> None:
    health = parse_smartctl(fixture("smartctl-ata-samsung-860evo.json"))
    assert health == DriveHealth(
        tool="smartctl",
        temperature_c=36,
        warning_c=70,
        critical_c=70,
        passed=True,
        model="Samsung SSD 860 EVO 500GB",
    )
    assert health.throttle_from_c == 70


def test_a_failing_disk_still_reads_with_its_status_bits() -> None:
    health = parse_smartctl(fixture("smartctl-ata-failing-hitachi.json"))
    assert health is not None
    assert (health.passed, health.temperature_c, health.throttle_from_c) == (False, 25, None)
    assert (
        json.loads(fixture("smartctl-ata-failing-hitachi.json"))["smartctl"]["exit_status"] == 216
    )


def test_nvme_through_smartctl_without_thresholds() -> None:
    health = parse_smartctl(fixture("smartctl-nvme-samsung-970evo.json"))
    assert health is not None
    assert (health.temperature_c, health.passed, health.media_errors) == (35, True, 7)
    assert (health.critical_warning, health.percent_used) == (0, 3)
    assert (health.warning_temp_minutes, health.critical_temp_minutes) == (0, 0)
    assert health.throttle_from_c is None


def test_nvme_through_smartctl_75_with_thresholds() -> None:
    health = parse_smartctl(fixture("smartctl-nvme-teamgroup-mp33.json"))
    assert health is not None
    assert (health.temperature_c, health.warning_c, health.critical_c) == (54, 100, 110)
    assert health.model == "TEAM TM8FP6256G"


def test_a_loop_device_has_no_health() -> None:
    assert parse_smartctl(fixture("smartctl-loop.json")) is None


@pytest.mark.parametrize("text", ["", "not json", "[]", '{"smartctl": {"exit_status": 2}}', "{}"])
def test_anything_else_is_none(text: str) -> None:
    assert parse_smartctl(text) is None
    assert parse_nvme_smart_log(text) is None


@pytest.mark.parametrize("name", ["nvme-smart-log.json", "nvme-smart-log-strings.json"])
def test_nvme_cli_smart_log_in_kelvin_numbers_or_strings(name: str) -> None:
    health = parse_nvme_smart_log(fixture(name), fixture("nvme-id-ctrl-wdc-sn730.json"))
    assert health == DriveHealth(
        tool="nvme-cli",
        temperature_c=37,  # 310 K
        warning_c=84,  # wctemp 357 K
        critical_c=88,  # cctemp 361 K
        passed=True,
        critical_warning=0,
        media_errors=0,
        percent_used=2,
        warning_temp_minutes=0,
        critical_temp_minutes=0,
        thermal_transitions=0,
    )


def test_nvme_cli_verbose_critical_warning_and_missing_thresholds() -> None:
    log = json.loads(fixture("nvme-smart-log.json"))
    log["critical_warning"] = {"value": 2, "temp_threshold": 1}
    log["thm_temp1_trans_count"] = 3
    health = parse_nvme_smart_log(json.dumps(log))
    assert health is not None
    assert (health.critical_warning, health.passed, health.thermal_transitions) == (2, False, 3)
    assert (health.warning_c, health.critical_c) == (None, None)
    assert parse_nvme_id_ctrl('{"wctemp": 0, "cctemp": 0}') == (None, None)


def test_virtual_devices_have_no_smart() -> None:
    assert not has_smart("loop0")
    assert not has_smart("no-such-device")
    real = [
        d
        for d in os.listdir("/sys/class/block")
        if "/virtual/" not in os.path.realpath(f"/sys/class/block/{d}")
    ]
    assert all(has_smart(d) for d in real)


class Tools:
    """A stand-in for the tools: recorded outputs by command, every call kept."""

    def __init__(self, outputs: dict[str, str | None]) -> None:
        self.outputs = outputs
        self.calls: list[str] = []

    def __call__(self, command: Sequence[str]) -> str | None:
        key = " ".join(command[:2])
        self.calls.append(key)
        return self.outputs.get(key)


@pytest.fixture
def fake_sys(tmp_path: Path) -> Path:
    """A sysfs with one physical NVMe namespace, one SATA disk and a loop device."""
    for name, parent in (
        ("nvme0n1", "pci0000:00/nvme/nvme0"),
        ("sda", "pci0000:00/ata1"),
        ("loop0", "virtual"),
    ):
        device = tmp_path / "devices" / parent / "block" / name
        device.mkdir(parents=True)
        (tmp_path / "class" / "block").mkdir(parents=True, exist_ok=True)
        (tmp_path / "class" / "block" / name).symlink_to(device)
    return tmp_path


def test_read_health_asks_smartctl_first(fake_sys: Path) -> None:
    tools = Tools({"smartctl --json": fixture("smartctl-ata-samsung-860evo.json")})
    health = read_health("sda", run=tools, sys_root=fake_sys)
    assert health is not None and health.temperature_c == 36
    assert tools.calls == ["smartctl --json"]


def test_read_health_falls_back_to_nvme_cli(fake_sys: Path) -> None:
    tools = Tools(
        {
            "smartctl --json": None,  # not installed
            "nvme smart-log": fixture("nvme-smart-log.json"),
            "nvme id-ctrl": fixture("nvme-id-ctrl-wdc-sn730.json"),
        }
    )
    health = read_health("nvme0n1", run=tools, sys_root=fake_sys)
    assert health is not None and (health.tool, health.warning_c) == ("nvme-cli", 84)


def test_old_smartctl_gets_nvme_thresholds_from_id_ctrl(fake_sys: Path) -> None:
    tools = Tools(
        {
            "smartctl --json": fixture("smartctl-nvme-samsung-970evo.json"),
            "nvme id-ctrl": fixture("nvme-id-ctrl-wdc-sn730.json"),
        }
    )
    health = read_health("nvme0n1", run=tools, sys_root=fake_sys)
    assert health is not None
    assert (health.tool, health.temperature_c, health.warning_c, health.critical_c) == (
        "smartctl",
        35,
        84,
        88,
    )


def test_no_tool_is_run_for_a_loop_device_and_none_found_is_none(fake_sys: Path) -> None:
    tools = Tools({})
    assert read_health("loop0", run=tools, sys_root=fake_sys) is None
    assert tools.calls == []
    assert read_health("sda", run=tools, sys_root=fake_sys) is None
    assert read_health("nvme0n1", run=tools, sys_root=fake_sys) is None


def test_run_command_never_raises() -> None:
    assert run_command(["volbench-no-such-tool-15"]) is None
    assert run_command(["sh", "-c", "echo out; exit 3"]) == "out\n"


def test_temperatures_around_a_test() -> None:
    before = parse_nvme_smart_log(
        fixture("nvme-smart-log.json"), fixture("nvme-id-ctrl-wdc-sn730.json")
    )
    log = json.loads(fixture("nvme-smart-log.json"))
    log.update(temperature=358, thm_temp1_trans_count=4)
    after = parse_nvme_smart_log(json.dumps(log))  # thresholds only in the first reading
    assert temperatures(before, after) == DriveTemperatures(
        before_c=37, after_c=85, warning_c=84, critical_c=88, throttle_events=4
    )
    ata = parse_smartctl(fixture("smartctl-ata-samsung-860evo.json"))
    assert temperatures(ata, None) == DriveTemperatures(36, None, 70, 70, None)
    assert temperatures(None, None) is None
    assert temperatures(DriveHealth("smartctl", None), None) is None
