"""The NVSwitch SXid catalog: which switch unit an SXid code's thousand names (collectors/catalogs/sxid.yaml)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from collectors.yaml_safe import load_file

_CATALOG = Path(__file__).parent / "sxid.yaml"


@cache
def units() -> dict[int, str]:
    """Thousand block (10 for 10000-10999) -> unit name."""
    data = load_file(_CATALOG)
    return {int(block): str(entry["unit"]) for block, entry in data["units"].items()}


def unit_of(code: int) -> str | None:
    """The switch unit an SXid code belongs to, or None when the code is outside every documented block."""
    return units().get(code // 1000)
