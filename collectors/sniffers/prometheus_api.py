"""Spotting a Prometheus HTTP API answer in a paste, apart from its parser (collectors/parsers/metrics/
prometheus_api.py)."""

from __future__ import annotations


def sniff(text: str) -> int:
    """0-100 confidence that the text is a Prometheus API response."""
    head = text[:4000].lstrip()
    if not head.startswith(("{", "[")):
        return 0
    if '"resultType"' in head:
        return 95
    if '"errorType"' in head and '"status"' in head:
        return 90
    if '"metric"' in head and ('"value"' in head or '"values"' in head):
        return 70
    return 0
