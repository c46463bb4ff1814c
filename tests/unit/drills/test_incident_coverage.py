"""Issue #29 point 4: every hypothesis that can lead a report has a recorded incident where it leads.

A hypothesis is exempt only when its playbook says why it can never lead (`never_leads:`), so a new hypothesis
without an incident, or an incident removed, fails here instead of leaving the gap open silently.
"""

from __future__ import annotations

from functools import cache

from collectors.yaml_safe import load_file
from drills.recorded.incident import incident_dirs
from playbooks.loader import load_playbooks


@cache
def _hypotheses() -> dict[str, bool]:
    """Every bundled hypothesis as playbook/hypothesis, with whether it declares that it never leads."""
    return {f"{pb.spec.id}/{h.id}": h.never_leads is not None for pb in load_playbooks() for h, _ in pb.spec.walk()}


@cache
def _ground_truths() -> dict[str, list[str]]:
    """playbook/hypothesis -> the incidents whose ground truth it is (read from incident.yaml alone: fast)."""
    out: dict[str, list[str]] = {}
    for folder in incident_dirs():
        truth = load_file(folder / "incident.yaml").get("ground_truth") or {}
        if truth:
            out.setdefault(f"{truth['playbook']}/{truth['hypothesis']}", []).append(folder.name)
    return out


def test_every_hypothesis_that_can_lead_has_an_incident() -> None:
    missing = sorted(h for h, never in _hypotheses().items() if not never and h not in _ground_truths())
    assert not missing, f"{len(missing)} hypotheses that can lead have no recorded incident: " + ", ".join(missing)


def test_a_hypothesis_marked_never_leads_is_no_incident_s_ground_truth() -> None:
    # An incident where it leads would prove the mark wrong: one of the two must go.
    contradicted = {h: ids for h, ids in _ground_truths().items() if _hypotheses().get(h)}
    assert contradicted == {}


def test_every_ground_truth_names_a_bundled_hypothesis() -> None:
    unknown = {h: ids for h, ids in _ground_truths().items() if h not in _hypotheses()}
    assert unknown == {}


def test_the_marked_hypotheses_are_the_known_pointers_and_consequence() -> None:
    # Adding a mark is a decision for docs/incidents.md too; this list changes with it.
    assert sorted(h for h, never in _hypotheses().items() if never) == [
        "error-rate/gpu-node-fault", "gpu-xid/device-plugin-unaware", "oom-killed/kubelet-eviction"]
