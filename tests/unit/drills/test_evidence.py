"""The drill's parse-once evaluator gives exactly the findings of analyse() over the same artifacts."""

from __future__ import annotations

import itertools

import pytest

from drills.recorded.evidence import IncidentEvidence, evidence_for
from drills.recorded.incident import incident_dirs, load_incident
from drills.sources import source_of_kind
from playbooks.pipeline import analyse


@pytest.mark.parametrize("folder", incident_dirs(), ids=lambda p: p.name)
def test_reports_over_any_sources_match_analyse(folder: object) -> None:
    incident = load_incident(folder)  # type: ignore[arg-type]
    evidence = IncidentEvidence(incident)
    available = evidence.available_sources()
    subsets = [(), tuple(available)] + [(s,) for s in available] + list(itertools.combinations(available, 2))[:6]
    truth = incident.meta.ground_truth
    assert truth is not None
    for subset in subsets:
        artifacts = [a for a in incident.artifacts if source_of_kind(a.kind) in subset]
        for force in ([], [truth.playbook]):
            expected = analyse(artifacts, incident.meta.target, symptoms=force)
            got = evidence.report(subset, force=force)
            assert got.findings == expected.findings, (subset, force)
            assert got.facts == expected.facts
            assert got.symptoms == expected.symptoms


def test_each_artifact_is_parsed_once_and_reports_are_reused() -> None:
    incident = load_incident(incident_dirs()[0])
    evidence = evidence_for(incident)
    first = evidence.report(evidence.available_sources())
    assert evidence.report(reversed(evidence.available_sources())) is first
    assert evidence_for(incident) is evidence
    parsed = dict(evidence._parsed)
    evidence.report(evidence.available_sources()[:1], force=["oom-killed"])
    assert all(evidence._parsed[k] is v for k, v in parsed.items())
