"""The answer key of a drill: which evidence separates the ground truth from its rivals, and the ideal path.

"Separates" is judged by the playbooks themselves. A set of sources separates the ground truth when, over just
those artifacts (the ground truth's playbook always evaluated):

- the ground truth leads the report;
- it holds as firmly as the whole recording makes it hold (`confirmed` when the recording confirms it), so
  evidence that merely fits it (OOMKilled fits a container limit and a node-wide OOM alike) is not enough;
- every rival in its playbook that is not its ancestor or descendant sits in a strictly lower status band
  (within a band the playbook's prior orders hypotheses, and a prior is not evidence);
- nothing the incident lists under `must_not_confirm` is confirmed.

The ideal path is the cheapest of the smallest separating sets. The discriminating sources are every source
on some smallest separating set.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from drills.errors import DrillError
from drills.hypotheses import HypothesisRef, lineage
from drills.recorded.evidence import IncidentEvidence
from drills.recorded.incident import GroundTruth, Incident
from drills.recorded.replay import contradictions
from drills.sources import BY_ID
from playbooks.report import Report, Status

_BAND: dict[Status, int] = {"confirmed": 3, "likely": 2, "unknown": 1, "ruled-out": 0}
# Subsets tried before giving up on a small path; recorded incidents have at most a dozen sources.
_MAX_SUBSETS = 400


@dataclass(frozen=True)
class AnswerKey:
    truth: HypothesisRef
    lineage: frozenset[str]  # keys compatible with the truth (its ancestors and descendants)
    ideal_path: tuple[str, ...]  # source ids, in trainee-facing order
    par_seconds: int
    minimal_sets: tuple[tuple[str, ...], ...]
    discriminating: frozenset[str]
    suitable: bool  # all the recorded evidence separates the truth; False marks an incident unfit for drilling

    @property
    def truth_key(self) -> str:
        return self.truth.key


def ground_truth(incident: Incident) -> GroundTruth:
    """A drill needs to know the real cause; a fresh recording has none until someone writes it down."""
    truth = incident.meta.ground_truth
    if truth is None:
        raise DrillError(f"{incident.meta.id} has no ground_truth yet, so it cannot be drilled; "
                         f"add ground_truth to its incident.yaml")
    return truth


def truth_report(evidence: IncidentEvidence, sources: Iterable[str]) -> Report:
    return evidence.report(sources, force=[ground_truth(evidence.incident).playbook])


def separates(evidence: IncidentEvidence, sources: Iterable[str]) -> bool:
    """Whether these sources' evidence makes the ground truth stand out from its rivals (see the module doc)."""
    truth = ground_truth(evidence.incident)
    report = truth_report(evidence, sources)
    full = _full_status(evidence)
    # A rival the whole recording holds as firmly as the truth (two faults in one recording: a GPU off the bus
    # and a too-small /dev/shm) cannot be told apart by any evidence, so it neither blocks separation nor
    # counts against the trainee who revealed the evidence for it.
    inseparable = _co_held(evidence)
    lead = report.leading()
    if lead is None:
        return False
    lead_key = f"{lead[0].playbook}/{lead[1].id}"
    if lead_key != f"{truth.playbook}/{truth.hypothesis}" and lead_key not in inseparable:
        return False
    finding = next((f for f in report.findings if f.playbook == truth.playbook), None)
    held = next((h for h in finding.hypotheses if h.id == truth.hypothesis), None) if finding else None
    if finding is None or held is None or held.status != full:
        return False
    refs = evidence.refs
    related = lineage(refs, f"{truth.playbook}/{truth.hypothesis}")
    for h in finding.hypotheses:
        rival = f"{finding.playbook}/{h.id}"
        if rival not in related and rival not in inseparable and _BAND[h.status] >= _BAND[held.status]:
            return False
    return not [c for c in contradictions(evidence.incident, report) if c not in inseparable]


def _full_report(evidence: IncidentEvidence) -> Report:
    cached = evidence.memo.get("full_truth_report")
    if isinstance(cached, Report):
        return cached
    report = truth_report(evidence, evidence.available_sources())
    evidence.memo["full_truth_report"] = report
    return report


def _full_status(evidence: IncidentEvidence) -> Status:
    """The ground truth's status over the whole recording: what a trainee's evidence has to reach."""
    truth = ground_truth(evidence.incident)
    for finding in _full_report(evidence).findings:
        if finding.playbook == truth.playbook:
            for h in finding.hypotheses:
                if h.id == truth.hypothesis and h.status in ("confirmed", "likely"):
                    return h.status
    return "confirmed"  # the recording itself does not hold the truth up: nothing separates it (unsuitable)


def _co_held(evidence: IncidentEvidence) -> frozenset[str]:
    """Hypotheses outside the truth's lineage that the whole recording holds in the truth's band or above,
    unless the incident names them as ones a correct triage must not confirm."""
    truth = ground_truth(evidence.incident)
    full = _full_status(evidence)
    if full not in ("confirmed", "likely"):
        return frozenset()
    related = lineage(evidence.refs, f"{truth.playbook}/{truth.hypothesis}")
    banned = set(evidence.incident.meta.must_not_confirm)
    return frozenset(f"{f.playbook}/{h.id}" for f in _full_report(evidence).findings for h in f.hypotheses
                     if _BAND[h.status] >= _BAND[full] and f"{f.playbook}/{h.id}" not in related
                     and f"{f.playbook}/{h.id}" not in banned)


def answer_key(evidence: IncidentEvidence) -> AnswerKey:
    cached = evidence.memo.get("answer_key")
    if isinstance(cached, AnswerKey):
        return cached
    key = _compute(evidence)
    evidence.memo["answer_key"] = key
    return key


def _cost(sources: Iterable[str]) -> int:
    return sum(BY_ID[s].cost_seconds for s in sources)


def _compute(evidence: IncidentEvidence) -> AnswerKey:
    truth = ground_truth(evidence.incident)
    refs = evidence.refs
    truth_key = f"{truth.playbook}/{truth.hypothesis}"
    if truth_key not in refs:
        raise DrillError(f"{evidence.incident.meta.id}: ground truth {truth_key} is not a hypothesis of the playbooks")
    available = evidence.available_sources()
    minimal: list[tuple[str, ...]] = []
    tried = 0
    for size in range(1, len(available) + 1):
        for combo in itertools.combinations(available, size):
            tried += 1
            if separates(evidence, combo):
                minimal.append(combo)
        if minimal or tried > _MAX_SUBSETS:
            break
    # Suitable means a trainee who reads everything recorded can tell the truth apart; tests hold it for every
    # bundled incident.
    suitable = separates(evidence, available)
    if not minimal:
        # No small separating set: the whole recording is the path (and an unsuitable incident is flagged).
        minimal = [tuple(available)]
    order = {s: i for i, s in enumerate(available)}
    ideal = min(minimal, key=lambda combo: (_cost(combo), [order[s] for s in combo]))
    return AnswerKey(
        truth=refs[truth_key],
        lineage=lineage(refs, truth_key),
        ideal_path=ideal,
        par_seconds=_cost(ideal),
        minimal_sets=tuple(minimal),
        # When nothing separates the truth, no source is discriminating: the debrief must not call a step
        # discriminating that the score says could not have been.
        discriminating=frozenset(s for combo in minimal for s in combo) if suitable else frozenset(),
        suitable=suitable,
    )
