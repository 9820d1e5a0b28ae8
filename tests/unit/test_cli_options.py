"""Option parsers shared by the commands: durations and labels."""

from __future__ import annotations

import click
import pytest

from volbench.cli.options import DURATION, LABEL, parse_duration, parse_label
from volbench.errors import UsageError


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30", 30.0),
        ("30s", 30.0),
        ("500ms", 0.5),
        ("2m", 120.0),
        ("2min", 120.0),
        ("1h", 3600.0),
        ("1.5m", 90.0),
        ("0", 0.0),
        (" 10 S ", 10.0),
    ],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "s", "-1", "1d", "1.5.2", "10 sec", "ten", "1h30m"])
def test_parse_duration_rejects(text: str) -> None:
    with pytest.raises(UsageError, match="invalid duration") as error:
        parse_duration(text)
    assert "e.g. 30, 30s, 500ms, 2m or 1h" in str(error.value)


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("vendor=aliyun", ("vendor", "aliyun")),
        (" size_gib = 500 ", ("size_gib", "500")),
        ("empty=", ("empty", "")),
        ("url=a=b", ("url", "a=b")),
    ],
)
def test_parse_label(text: str, label: tuple[str, str]) -> None:
    assert parse_label(text) == label


@pytest.mark.parametrize("text", ["vendor", "=aliyun", " =x", ""])
def test_parse_label_rejects(text: str) -> None:
    with pytest.raises(UsageError, match=r"invalid label .*: use key=value"):
        parse_label(text)


def test_click_types_turn_usage_errors_into_bad_parameters() -> None:
    assert DURATION.convert("2m", None, None) == 120.0
    assert LABEL.convert("a=b", None, None) == ("a", "b")
    with pytest.raises(click.BadParameter, match="invalid duration"):
        DURATION.convert("soon", None, None)
