"""Every bundled incident is fit for drilling: its evidence separates the truth, through a small ideal path."""

from __future__ import annotations

import pytest

from drills.key import answer_key, separates
from drills.recorded.evidence import IncidentEvidence
from drills.recorded.incident import incident_dirs, load_incident


@pytest.mark.parametrize("folder", incident_dirs(), ids=lambda p: p.name)
def test_incident_is_drillable(folder: object) -> None:
    evidence = IncidentEvidence(load_incident(folder))  # type: ignore[arg-type]
    key = answer_key(evidence)
    assert key.suitable, "the whole recording does not separate the ground truth from its rivals"
    assert key.ideal_path and separates(evidence, key.ideal_path)
    assert not separates(evidence, [])
    for source in key.ideal_path:  # minimal: every source on the path is needed
        assert not separates(evidence, [s for s in key.ideal_path if s != source]), source
    assert set(key.ideal_path) <= key.discriminating
    assert all(len(combo) == len(key.ideal_path) for combo in key.minimal_sets)
    assert key.truth.key in key.lineage


def test_the_key_of_a_known_incident() -> None:
    evidence = IncidentEvidence(load_incident(incident_dirs()[0].parent / "oom-node-global-burstable-victim"))
    key = answer_key(evidence)
    # The kernel log confirms the node-wide OOM and, from the same kill record, that its victim was the QoS pick:
    # the refinement leads (ranking rule 7), so it is the truth, and its parent is in its lineage.
    assert key.truth_key == "oom-killed/qos-victim"
    assert key.ideal_path == ("kernel-log",) and key.par_seconds == 180
    assert key.lineage == {"oom-killed/node-oom", "oom-killed/qos-victim"}
    assert not separates(evidence, ["pod-status"])  # OOMKilled alone does not say whose memory ran out
