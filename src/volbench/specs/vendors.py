"""Vendor names as users type them: ``aliyun`` for Alibaba Cloud, ``qcloud`` for Tencent.

A product matches a vendor text when the text (any case, spaces and dashes
ignored) is the start of its id before a dash (``aliyun`` for
``aliyun-essd-pl1``), part of its vendor name (``tencent`` in ``Tencent
Cloud``), or one of the common names below for that vendor.
"""

from __future__ import annotations

ALIASES: dict[str, tuple[str, ...]] = {
    "AWS": ("amazon", "aws", "ebs", "amazon web services"),
    "Microsoft Azure": ("azure", "microsoft", "msft"),
    "Google Cloud": ("gcp", "google", "gce", "google cloud platform"),
    "Alibaba Cloud": ("aliyun", "alibaba", "alicloud", "阿里云"),
    "Tencent Cloud": ("qcloud", "tencent", "tencentcloud", "腾讯云"),
    "UCloud": ("ucloud", "ucloudstack", "优刻得"),
    "Huawei Cloud": ("huawei", "huaweicloud", "hwcloud", "华为云"),
    "Baidu AI Cloud": ("baidu", "bce", "baiducloud", "百度智能云"),
    "Kingsoft Cloud": ("ksyun", "kingsoft", "金山云"),
    "China Telecom eSurfing Cloud (ctyun)": ("ctyun", "esurfing", "china telecom", "天翼云"),
}
"""Common names of each catalogued vendor (keys are the catalogue's vendor names)."""


def _plain(text: str) -> str:
    return "".join(text.lower().replace("-", " ").split())


def matches(text: str, product_id: str, vendor: str) -> bool:
    """Whether ``text`` names the vendor of ``product_id`` (see the module doc)."""
    wanted = _plain(text)
    if not wanted:
        return False
    if product_id.lower().split("-", 1)[0] == wanted or wanted in _plain(vendor):
        return True
    return any(_plain(alias) == wanted for alias in ALIASES.get(vendor, ()))


def known(vendor_names: list[str]) -> str:
    """The vendors and their common names, for an error message."""
    parts = []
    for name in sorted(set(vendor_names)):
        aliases = ALIASES.get(name, ())
        parts.append(f"{name} ({', '.join(aliases)})" if aliases else name)
    return "; ".join(parts)
