"""The upstream wordings catalog (collectors/catalogs/k8s_wordings.yaml), rendered with its sample values."""

from __future__ import annotations

from pathlib import Path
from string import Template
from typing import Any

from collectors.yaml_safe import safe_load

CATALOG = Path(__file__).resolve().parents[3] / "collectors" / "catalogs" / "k8s_wordings.yaml"
WORDINGS: list[dict[str, Any]] = safe_load(CATALOG.read_text(encoding="utf-8"))


def rendered(entry: dict[str, Any]) -> str:
    """The message as the program prints it, with the entry's sample values filled in."""
    return Template(entry["template"]).substitute({k: str(v) for k, v in entry["values"].items()})
