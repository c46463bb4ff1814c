"""Facts of a pasted text, as the parser tests compare them (shared so each test file does not carry its own copy)."""

from __future__ import annotations

from pathlib import Path

import yaml

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact
from collectors.parsers.text.stated import read_stated
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


def split_joined_facts(text: str) -> dict[str, object]:
    """Each fact's first value, the text split into artifacts as a paste is; list facts of several artifacts
    joined."""
    out: dict[str, object] = {}
    for a in artifacts_from_text(text, "paste"):
        for f in parse_artifact(a).facts:
            before = out.get(f.name)
            if isinstance(before, list) and isinstance(f.value, list):
                out[f.name] = before + [v for v in f.value if v not in before]
            else:
                out.setdefault(f.name, f.value)
    return out


def first_facts(text: str) -> dict[str, object]:
    """Each fact's first value, the text split into artifacts as a paste is."""
    out: dict[str, object] = {}
    for a in artifacts_from_text(text, "paste"):
        for f in parse_artifact(a).facts:
            out.setdefault(f.name, f.value)
    return out


def stated_facts(text: str) -> dict[str, object]:
    """What the sentence reader alone finds in a text: the symptoms named, as a set under "symptoms"; a GPU-Util
    figure said several times is its lowest, as the playbook sees it; any other fact its (last) value."""
    out: dict[str, object] = {}
    for fact in read_stated(Artifact(id="p", kind=ArtifactKind.TEXT, source="paste", content=text)).facts:
        if fact.name == "evidence.symptoms" and isinstance(fact.value, list):
            out.setdefault("symptoms", set()).update(fact.value)  # type: ignore[union-attr]
        elif fact.name == "gpu.job_util_percent":
            out[fact.name] = min(float(fact.value), float(out.get(fact.name, 100.0)))  # type: ignore[arg-type]
        else:
            out[fact.name] = fact.value
    return out


def said_facts(text: str) -> dict[str, object]:
    """What the sentence reader alone finds in a text, each fact with its last value (no joining)."""
    return {f.name: f.value for f in read_stated(Artifact(id="p", kind=ArtifactKind.TEXT, content=text)).facts}
