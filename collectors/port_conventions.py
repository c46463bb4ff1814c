"""Service port names that name a protocol served on one port by convention (collectors/catalogs/port_names.yaml).

A Service port named `redis` on 6379 whose targetPort is 9121 sends redis clients to another container port: the
server listens on 6379 unless configured otherwise. Only a hint (the app may be configured so), read as such."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from collectors.yaml_safe import load_file

_CATALOG = Path(__file__).resolve().parent / "catalogs" / "port_names.yaml"


@cache
def conventions() -> dict[str, int]:
    """Port name (lower case) to its conventional port."""
    raw = load_file(_CATALOG)
    return {str(name).lower(): int(entry["port"]) for entry in raw["conventions"] for name in entry["names"]}


def off_convention(name: str, port: str, target: str) -> bool:
    """The port is named for a protocol and served on its conventional number, but its targetPort is another
    number (a named targetPort is the joins' to judge)."""
    usual = conventions().get(name.strip().lower())
    if usual is None or not port.isdigit() or not target.isdigit():
        return False
    return int(port) == usual and int(target) != usual
