"""Reading values out of decoded Kubernetes JSON/YAML: safe access, resource quantities, the GPU resource name.

Neutral ground: the parsers and the live sources both read API objects, and neither should import the other.
Pure and tolerant: a malformed value gives None or an empty result, never an exception.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from collectors.lazy_regex import LazyPattern

GPU_RESOURCE = "nvidia.com/gpu"


# ---- ages as kubectl prints them ----------------------------------------------------------------------

# k8s.io/apimachinery/pkg/util/duration/duration.go (HumanDuration, kubectl 1.9 on; ShortHumanDuration before):
# "22s", "4m36s", "12m", "3h12m", "5d", "2d3h", "3y45d". Only the first cell of a describe row's Age ("2m (x3 over
# 12m)") is the last time the event was seen.
_AGE = LazyPattern(r"(?:(\d+)y)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")
_AGE_UNITS = (365 * 86400, 86400, 3600, 60, 1)


def age_seconds(cell: str) -> int | None:
    """Seconds ago that a kubectl Age/Last Seen cell says, or None (`<unknown>`, `<invalid>`, anything else)."""
    m = _AGE.fullmatch(cell.split(" ", 1)[0])
    if m is None or not any(m.groups()):
        return None
    return sum(int(g) * unit for g, unit in zip(m.groups(), _AGE_UNITS, strict=True) if g)


# ---- safe access to decoded JSON/YAML ----------------------------------------------------------------


def as_dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def as_str(value: object) -> str:
    """A scalar as text; YAML turns `name: 123` into an int, which is still a usable name."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return ""


def as_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,18}", value.strip()):
        return int(value.strip())
    return None


# ---- resource quantities -----------------------------------------------------------------------------

_QUANTITY = LazyPattern(
    r"([+-]?(?:\d+\.?\d*|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d{1,2}))?")
_MULTIPLIER = {
    "": Decimal(1), "n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"),
    "k": Decimal("1e3"), "M": Decimal("1e6"), "G": Decimal("1e9"), "T": Decimal("1e12"),
    "P": Decimal("1e15"), "E": Decimal("1e18"),
    "Ki": Decimal(2**10), "Mi": Decimal(2**20), "Gi": Decimal(2**30), "Ti": Decimal(2**40),
    "Pi": Decimal(2**50), "Ei": Decimal(2**60),
}


def quantity(value: object) -> Decimal | None:
    """A Kubernetes quantity (`200Gi`, `1500m`, `1e9`, `8`, or a YAML number) as an exact number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(str(value)) if math.isfinite(value) else None
    if not isinstance(value, str) or len(value) > 40:
        return None
    m = _QUANTITY.fullmatch(value.strip())
    if m is None:
        return None
    try:
        number = Decimal(m.group(1))
    except InvalidOperation:
        return None
    if m.group(3) is not None:
        return number.scaleb(int(m.group(3)))
    return number * _MULTIPLIER[m.group(2) or ""]


def quantity_int(value: object) -> int | None:
    """Whole units (bytes, devices), rounded up as Kubernetes does."""
    q = quantity(value)
    return None if q is None else math.ceil(q)


def quantity_milli(value: object) -> int | None:
    """Thousandths of a unit: CPU millicores."""
    q = quantity(value)
    return None if q is None else math.ceil(q * 1000)
