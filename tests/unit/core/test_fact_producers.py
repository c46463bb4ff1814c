"""The vocabulary says which kinds of evidence produce each fact (collectors/vocab/producers.yaml); every parser
fixture, recorded incident and real-world paste is read to hold it to that."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from collectors.models import ArtifactKind
from collectors.parsers.registry import parse_artifact
from collectors.paste import artifacts_from_text
from collectors.vocabulary import VOCABULARY
from drills.recorded.incident import incident_dirs, load_incident
from drills.sources import sources_for_fact

TESTS = Path(__file__).resolve().parents[2]


def _observed() -> dict[str, set[str]]:
    seen: dict[str, set[str]] = defaultdict(set)
    artifacts = []
    for path in sorted((TESTS / "fixtures" / "parsers").rglob("*")):
        if path.is_file() and path.stat().st_size < 2_000_000:
            text = path.read_bytes().decode("utf-8", errors="replace")
            if text.strip():
                artifacts += artifacts_from_text(text, path.name, source="file")
    for path in sorted((TESTS / "realworld").rglob("evidence.txt")):
        artifacts += artifacts_from_text(path.read_bytes().decode("utf-8", errors="replace"), path.parent.name)
    for folder in incident_dirs():
        artifacts += [a for a in load_incident(folder).artifacts if a.unavailable is None]
    for artifact in artifacts:
        for fact in parse_artifact(artifact).facts:
            seen[fact.name].add(str(artifact.kind))
    return seen


def test_every_fact_names_real_kinds_that_produce_it() -> None:
    kinds = {str(k) for k in ArtifactKind}
    assert all(spec.kinds for spec in VOCABULARY.values()), [n for n, s in VOCABULARY.items() if not s.kinds]
    assert all(set(spec.kinds) <= kinds for spec in VOCABULARY.values())


def test_every_fact_read_from_the_evidence_comes_from_a_declared_kind() -> None:
    undeclared = {name: sorted(found - set(VOCABULARY[name].kinds)) for name, found in _observed().items()
                  if found - set(VOCABULARY[name].kinds)}
    assert undeclared == {}, "add these kinds to collectors/vocab/producers.yaml"


def test_drill_sources_come_from_the_producers() -> None:
    assert sources_for_fact("xid.codes")[0] == "kernel-log"
    assert "pod-status" in sources_for_fact("container.last_terminated.reason")
    assert sources_for_fact("no.such.fact") == ()
