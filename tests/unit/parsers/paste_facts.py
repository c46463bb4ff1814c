"""Facts of a pasted text, as the parser tests compare them (shared so each test file does not carry its own copy)."""

from __future__ import annotations

from pathlib import Path

import yaml

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact
from collectors.paste import artifacts_from_text

# Real pastes (each with its thread) that the first-sight family tests and their neighbours read.
FIRST_SIGHT_PASTES: dict[str, str] = {p["id"]: p["text"] for p in yaml.safe_load(
    (Path(__file__).parent / "first_sight_pastes.yaml").read_text(encoding="utf-8"))}


def joined_facts(text: str) -> dict[str, object]:
    """Each fact's value from the text read as one artifact; list facts read from several lines or signals are
    joined, as the report's are."""
    out: dict[str, object] = {}
    for f in parse_artifact(Artifact(id="p", kind=ArtifactKind.TEXT, content=text)).facts:
        before = out.get(f.name)
        if isinstance(before, list) and isinstance(f.value, list):
            out[f.name] = before + [v for v in f.value if v not in before]
        else:
            out[f.name] = f.value
    return out


def first_facts(text: str) -> dict[str, object]:
    """Each fact's first value, the text split into artifacts as a paste is."""
    out: dict[str, object] = {}
    for a in artifacts_from_text(text, "paste"):
        for f in parse_artifact(a).facts:
            out.setdefault(f.name, f.value)
    return out
