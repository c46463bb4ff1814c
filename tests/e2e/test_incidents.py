"""Every recorded incident replays to its ground truth, and nothing contradicting it is confirmed."""

from __future__ import annotations

from pathlib import Path

import pytest

from drills.recorded.incident import incident_dirs, load_incident
from drills.recorded.replay import contradictions, replay
from playbooks.loader import load_playbooks

INCIDENTS = incident_dirs()
PLAYBOOKS = {pb.spec.id: pb for pb in load_playbooks()}


def test_enough_incidents_per_playbook() -> None:
    counts: dict[str, int] = {}
    for folder in INCIDENTS:
        truth = load_incident(folder).meta.ground_truth
        assert truth is not None, f"{folder.name}: a bundled incident needs its ground truth"
        playbook = truth.playbook
        counts[playbook] = counts.get(playbook, 0) + 1
    for playbook in ("oom-killed", "pending", "latency", "nccl-hang"):
        assert counts.get(playbook, 0) >= 3, counts
    for playbook in ("gpu-xid", "crash-loop", "image-pull", "evicted"):
        assert counts.get(playbook, 0) >= 1, counts
    for playbook in ("gpu-underutilized", "container-creating", "service-unreachable", "node-not-ready",
                     "error-rate"):
        assert counts.get(playbook, 0) >= 2, counts
    assert len(INCIDENTS) >= 45


@pytest.mark.parametrize("folder", INCIDENTS, ids=[p.name for p in INCIDENTS])
def test_incident_replays_to_ground_truth(folder: Path) -> None:
    incident = load_incident(folder)
    meta = incident.meta
    assert meta.id == folder.name
    truth = meta.ground_truth
    assert truth is not None
    assert truth.playbook in PLAYBOOKS
    assert truth.hypothesis in {h.id for h, _ in PLAYBOOKS[truth.playbook].spec.walk()}
    report = replay(incident)
    lead = report.leading()
    assert lead is not None, f"no hypothesis holds; facts: {report.facts}"
    assert (lead[0].playbook, lead[1].id) == (truth.playbook, truth.hypothesis), [
        (f.playbook, h.id, h.status, h.score) for f in report.findings for h in f.hypotheses][:8]
    assert lead[1].status in ("confirmed", "likely")
    assert lead[1].because, "the leading verdict cites no evidence"
    assert contradictions(incident, report) == []
    assert not [p for p in report.problems if "internal:" in p or "failed:" in p]


@pytest.mark.parametrize("folder", INCIDENTS, ids=[p.name for p in INCIDENTS])
def test_citations_point_at_real_lines(folder: Path) -> None:
    incident = load_incident(folder)
    report = replay(incident)
    contents = {a.id: a.content.split("\n") for a in incident.artifacts}
    for finding in report.findings:
        for h in finding.hypotheses:
            for ev in h.evidence:
                assert ev.artifact in contents
                if ev.lines:
                    last = int(ev.lines.split("-")[-1])
                    assert 1 <= last <= len(contents[ev.artifact]), (ev, len(contents[ev.artifact]))
