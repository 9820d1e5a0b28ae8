"""Catalogue products the tests write as a user's own (``--catalogue FILE``)."""

from __future__ import annotations

SPLIT = """\
products:
  - id: lab-split
    vendor: {vendor}
    name: Split volume
    size_unit: GiB
    capacity: {{min: {min_size:g}, max: 1000}}
    rw_limits: separate
    editions:
      - from: 2024-01-01
        read_iops: {{expr: "{read:g}"}}
        write_iops: {{expr: "{write:g}"}}
        throughput: {{expr: "{mbps:g}", unit: MB/s}}
"""


def split_product(
    read: float, write: float, mbps: float, min_size: float = 1.0, vendor: str = "Lab"
) -> str:
    """``lab-split``: separate read and write IOPS promises (IOPS) and a MB/s one, from
    ``min_size`` GiB, as YAML."""
    return SPLIT.format(read=read, write=write, mbps=mbps, min_size=min_size, vendor=vendor)
