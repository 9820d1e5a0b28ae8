"""Size parsing (fio-style, binary) and formatting for messages."""

from __future__ import annotations

import pytest

from volbench.errors import UsageError
from volbench.units import GiB, KiB, MiB, TiB, format_block_size, format_bytes, parse_size


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1024", 1024),
        ("0", 0),
        ("4k", 4 * KiB),
        ("4K", 4 * KiB),
        ("4kb", 4 * KiB),
        ("4KB", 4 * KiB),
        ("4KiB", 4 * KiB),
        ("4kib", 4 * KiB),
        ("512m", 512 * MiB),
        ("512MiB", 512 * MiB),
        ("1g", GiB),
        ("1G", GiB),
        ("1GB", GiB),
        ("1GiB", GiB),
        ("2t", 2 * TiB),
        ("1p", 1024 * TiB),
        ("512B", 512),
        ("512b", 512),
        (" 1 GiB ", GiB),
        ("1.5g", 3 * GiB // 2),
        ("0.5k", 512),
        (".5m", MiB // 2),
    ],
)
def test_parse_size_follows_fio_binary_multiples(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize(
    "text", ["", "abc", "1x", "-1", "1.5", "1e9", "iB", "1 iB", "1 G B", "k", "1kk", "1.2.3g", "1."]
)
def test_parse_size_rejects_non_sizes_with_one_line(text: str) -> None:
    with pytest.raises(UsageError) as excinfo:
        parse_size(text)
    message = str(excinfo.value)
    assert "\n" not in message
    assert repr(text) in message


def test_parse_size_rounds_fractions_down_to_whole_bytes() -> None:
    assert parse_size("1.0001k") == 1024  # 1024.1024 bytes
    assert parse_size("0.3k") == 307  # 307.2 bytes


@pytest.mark.parametrize(
    ("n", "expected"),
    [
        (0, "0 B"),
        (512, "512 B"),
        (1023, "1023 B"),
        (KiB, "1.0 KiB"),
        (4 * KiB, "4.0 KiB"),
        (64 * MiB, "64 MiB"),
        (200 * MiB, "200 MiB"),
        (GiB, "1.0 GiB"),
        (3 * GiB // 2, "1.5 GiB"),
        (int(9.99 * GiB), "10 GiB"),
        (TiB, "1.0 TiB"),
        (1024 * TiB, "1.0 PiB"),
        (-2 * GiB, "-2.0 GiB"),
        (1.5 * MiB, "1.5 MiB"),
    ],
)
def test_format_bytes(n: int | float, expected: str) -> None:
    assert format_bytes(n) == expected


def test_format_then_parse_round_trip_for_whole_units() -> None:
    for n in (KiB, 64 * MiB, GiB, 16 * GiB):
        assert parse_size(format_bytes(n).replace(".0", "").replace(" ", "")) == n


@pytest.mark.parametrize(
    ("n", "expected"),
    [(512, "512"), (4096, "4k"), (128 * KiB, "128k"), (1536, "1536"), (MiB, "1m"), (0, "0")],
)
def test_format_block_size_is_compact_and_parses_back(n: int, expected: str) -> None:
    assert format_block_size(n) == expected
    assert parse_size(expected) == n
