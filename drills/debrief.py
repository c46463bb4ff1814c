"""The debrief after a declaration: the tree, the ideal path, what each piece of evidence meant, references.

Everything comes from a replay of the whole recording through the playbooks (the ground truth's playbook, and
the declared one, always evaluated), so the debrief explains the answer with the same rules the bot triages by.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, Field

from collectors.factset import format_value
from drills.hypotheses import HypothesisRef
from drills.key import AnswerKey, ground_truth
from drills.recorded.evidence import IncidentEvidence
from drills.scoring import Score
from drills.sources import BY_ID, label, source_of_kind
from drills.verdict import decisive, decisive_facts
from playbooks.report import HypothesisResult, Report


class DrillSession(Protocol):
    """What a debrief reads of a finished drill (drills.session.DrillSession has it; this module does not import
    that one, which builds debriefs)."""

    @property
    def declared(self) -> str | None: ...
    @property
    def score(self) -> Score | None: ...
    @property
    def revealed_sources(self) -> list[str]: ...
    @property
    def revealed_artifacts(self) -> list[str]: ...
    @property
    def clock_seconds(self) -> int: ...
    def proposed_hypotheses(self) -> set[str]: ...

_MEANINGS_PER_ARTIFACT = 8
_VERB = {"confirmed": "shows", "likely": "supports", "ruled-out": "rules out"}


class TreeNode(BaseModel):
    id: str
    depth: int
    status: str  # a hypothesis status, or "not explored" when its parent did not hold
    claim: str
    truth: bool = False
    declared: bool = False
    proposed: bool = False


class PathStep(BaseModel):
    source: str
    label: str
    cost_seconds: int
    revealed: bool
    discriminating: bool
    shows: list[str] = Field(default_factory=list)  # what it says about the ground truth: "fact = value"


class EvidenceMeaning(BaseModel):
    artifact: str
    source: str
    revealed: bool
    unavailable: str | None = None
    meanings: list[str] = Field(default_factory=list)


class Debrief(BaseModel):
    incident_id: str
    title: str
    difficulty: str
    truth: str
    truth_claim: str
    explanation: str
    declared: str
    outcome: Literal["right", "right branch", "wrong"]
    declared_note: str  # what all the evidence says about the declared hypothesis
    score: Score
    playbook: str
    tree: list[TreeNode]
    ideal_path: list[PathStep]
    your_path: list[PathStep]
    par_seconds: int
    clock_seconds: int
    evidence: list[EvidenceMeaning]
    references: list[str]


def build_debrief(session: DrillSession, evidence: IncidentEvidence, key: AnswerKey) -> Debrief:
    if session.declared is None or session.score is None:
        raise ValueError("a debrief needs a declared, scored session")
    meta = evidence.incident.meta
    refs = evidence.refs
    declared = refs[session.declared]
    everything = evidence.available_sources()
    full = evidence.report(everything, force=[key.truth.playbook, declared.playbook])
    outcome: Literal["right", "right branch", "wrong"] = (
        "right" if declared.key == key.truth_key else "right branch" if declared.key in key.lineage else "wrong")
    facts_for_truth = _truth_facts_by_source(full, evidence, key)
    return Debrief(
        incident_id=meta.id,
        title=meta.title,
        difficulty=meta.difficulty,
        truth=key.truth_key,
        truth_claim=_claim(full, evidence, key.truth.playbook, key.truth.id),
        explanation=ground_truth(evidence.incident).explanation,
        declared=declared.key,
        outcome=outcome,
        declared_note=_declared_note(full, declared),
        score=session.score,
        playbook=key.truth.playbook,
        tree=_tree(full, evidence, key, session),
        ideal_path=[_step(s, session, key, facts_for_truth) for s in key.ideal_path],
        your_path=[_step(s, session, key, facts_for_truth) for s in session.revealed_sources],
        par_seconds=key.par_seconds,
        clock_seconds=session.clock_seconds,
        evidence=_meanings(full, evidence, key, declared.playbook, session),
        references=_references(key, meta.source),
    )


def _declared_note(report: Report, declared: HypothesisRef) -> str:
    """What the whole recording says about the declared hypothesis."""
    result = _result(report, declared.playbook, declared.id)
    if result is None:
        parent = f"{declared.playbook}/{declared.parent}" if declared.parent else "its parent"
        return f"Never reached: it refines {parent}, which the recording does not support."
    because = "; ".join(decisive(declared, result))
    if result.status == "confirmed":
        return f"The recording confirms it: {because}."
    if result.status == "likely":
        return f"The recording supports it without proving it: {because}."
    if result.status == "ruled-out":
        return f"The recording rules it out: {because}."
    return "The recording neither supports nor rules it out."


def _claim(report: Report, evidence: IncidentEvidence, playbook: str, hypothesis: str) -> str:
    result = _result(report, playbook, hypothesis)
    if result is not None:
        return result.claim
    node = evidence.refs[f"{playbook}/{hypothesis}"].node
    return evidence.render_claim(node.spec.claim, evidence.available_sources())


def _tree(report: Report, evidence: IncidentEvidence, key: AnswerKey, session: DrillSession) -> list[TreeNode]:
    finding = next(f for f in report.findings if f.playbook == key.truth.playbook)
    status = {h.id: h.status for h in finding.hypotheses}
    proposed = session.proposed_hypotheses()
    nodes = []
    for ref in evidence.refs.values():
        if ref.playbook != key.truth.playbook:
            continue
        nodes.append(TreeNode(id=ref.id, depth=ref.depth, status=status.get(ref.id, "not explored"),
                              claim=_claim(report, evidence, ref.playbook, ref.id), truth=ref.key == key.truth_key,
                              declared=ref.key == session.declared, proposed=ref.key in proposed))
    return nodes


def _truth_facts_by_source(report: Report, evidence: IncidentEvidence, key: AnswerKey) -> dict[str, list[str]]:
    """For each source, the decisive facts it contributed to the ground truth's status, with their values."""
    kinds = {a.id: source_of_kind(a.kind) for a in evidence.incident.artifacts}
    out: dict[str, list[str]] = {}
    result = _result(report, key.truth.playbook, key.truth.id)
    if result is None:
        return out
    names = decisive_facts(key.truth, result.status)
    for e in result.evidence:
        if e.fact in names:
            line = f"{e.fact} = {format_value(report.facts.get(e.fact, e.value))}"
            shown = out.setdefault(kinds.get(e.artifact, ""), [])
            if line not in shown:
                shown.append(line)
    return out


def _result(report: Report, playbook: str, hypothesis: str) -> HypothesisResult | None:
    for finding in report.findings:
        if finding.playbook == playbook:
            return next((h for h in finding.hypotheses if h.id == hypothesis), None)
    return None


def _step(source: str, session: DrillSession, key: AnswerKey, facts: dict[str, list[str]]) -> PathStep:
    spec = BY_ID[source]
    return PathStep(source=source, label=spec.label, cost_seconds=spec.cost_seconds,
                    revealed=source in session.revealed_sources, discriminating=source in key.discriminating,
                    shows=facts.get(source, []))


def _meanings(report: Report, evidence: IncidentEvidence, key: AnswerKey, declared_playbook: str,
              session: DrillSession) -> list[EvidenceMeaning]:
    """Per artifact: which hypotheses of the truth's (and the declared) playbook its lines decide, and how."""
    books = [key.truth.playbook] + ([declared_playbook] if declared_playbook != key.truth.playbook else [])
    refs = evidence.refs
    # (artifact, lines, fact) -> the verdicts that line takes part in, e.g. "rules out oom-killed/node-oom"
    said: dict[str, dict[tuple[str, str], list[str]]] = {}
    for finding in report.findings:
        if finding.playbook not in books:
            continue
        for h in finding.hypotheses:
            verb = _VERB.get(h.status)
            names = decisive_facts(refs[f"{finding.playbook}/{h.id}"], h.status)
            for e in h.evidence:
                if verb is None or e.fact not in names:
                    continue
                where = f"line {e.lines}: " if e.lines else ""
                lines = said.setdefault(e.artifact, {}).setdefault((where, e.fact), [])
                lines.append(f"{verb} {finding.playbook}/{h.id}")
    revealed = set(session.revealed_artifacts)
    order = {a: i for i, a in enumerate(session.revealed_artifacts)}
    artifacts = sorted(evidence.incident.artifacts, key=lambda a: (a.id not in revealed, order.get(a.id, 0)))
    out = []
    for artifact in artifacts:
        meanings = [f"{where}{fact} = {format_value(report.facts.get(fact))}: {'; '.join(verdicts)}"
                    for (where, fact), verdicts in said.get(artifact.id, {}).items()]
        if artifact.unavailable is None and not meanings:
            meanings = [f"decides nothing in the {' or '.join(books)} tree: context, not discriminating"]
        shown = meanings[:_MEANINGS_PER_ARTIFACT]
        if len(meanings) > len(shown):
            shown.append(f"... and {len(meanings) - len(shown)} more")
        out.append(EvidenceMeaning(artifact=artifact.id, source=label(source_of_kind(artifact.kind)),
                                   revealed=artifact.id in revealed, unavailable=artifact.unavailable,
                                   meanings=shown))
    return out


def _references(key: AnswerKey, incident_sources: list[str]) -> list[str]:
    refs = list(key.truth.node.spec.source) + list(incident_sources)
    return list(dict.fromkeys(refs))
