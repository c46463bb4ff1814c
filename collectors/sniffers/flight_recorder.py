"""Spotting a PyTorch Flight Recorder dump in its JSON form, apart from its parser (collectors/parsers/gpu/
flight_recorder.py)."""

from __future__ import annotations


def sniff(text: str) -> int:
    """A Flight Recorder dump in its JSON form, or a bundle of them, pasted or read from a file."""
    head = text[:200_000].lstrip()
    if head[:1] == "{" and '"entries"' in head and '"pg_status"' in head and '"collective_seq_id"' in head:
        return 95
    return 0
