"""Spotting the node agent's NVML snapshot in a paste, apart from its parser (collectors/parsers/gpu/nvml.py)."""

from __future__ import annotations

import re

SCHEMA_PREFIX = "triagebot.nvml/"  # the snapshot's schema field: collectors/agent/nvml.py writes it


def sniff(text: str) -> int:
    """0-100 confidence that the text is an NVML snapshot."""
    head = text[:4000].lstrip()
    if not head.startswith("{"):
        return 0
    if re.search(r'"schema"\s*:\s*"' + re.escape(SCHEMA_PREFIX), head):
        return 95
    if '"available"' in head and ('"pci_bus_id"' in head or "NVML" in head) and '"devices"' in head:
        return 80
    if re.search(r'"available"\s*:\s*false', head) and "NVML" in head:
        return 70
    return 0
