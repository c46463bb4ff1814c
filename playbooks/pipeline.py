"""The one pipeline: artifacts -> parsers -> facts -> playbooks -> report."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from collectors.factset import FactSet
from collectors.joins import suspect_nodes
from collectors.models import Artifact
from collectors.parsers.registry import parse_artifact
from collectors.paste import nothing_recognised
from playbooks.cel_expr import activation
from playbooks.engine import evaluate, template_variables, triggered
from playbooks.loader import CompiledHypothesis, CompiledPlaybook, load_playbooks
from playbooks.report import ArtifactRef, Finding, Missing, Report, Target
from playbooks.scope import narrow

_DEFAULT: list[CompiledPlaybook] | None = None


def default_playbooks() -> list[CompiledPlaybook]:
    """The bundled playbooks, loaded and compiled once per process."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = load_playbooks()
    return _DEFAULT


def conclude(facts: FactSet, target: Target, playbooks: list[CompiledPlaybook],
             symptoms: Iterable[str] | None = None) -> list[Finding]:
    """Facts -> findings: every playbook that triggers (or is forced), best finding first."""
    context = activation(facts.cel_context())
    variables = template_variables(target, facts)
    forced = set(symptoms or [])
    chosen = [p for p in playbooks if p.spec.id in forced or triggered(p, context)]
    findings = [evaluate(p, facts, variables, context) for p in chosen]
    _merge_pointers(findings, {p.spec.id: p for p in chosen})
    strength = _strengths(findings)
    # Supported hypotheses rank first; ties keep playbook order, so the leading hypothesis is deterministic.
    findings.sort(key=lambda f: (-strength[f.playbook],
                                 -max((h.score for h in f.hypotheses if h.status != "ruled-out"), default=0.0)))
    return findings


def _strengths(findings: list[Finding]) -> dict[str, float]:
    """A finding's best supported score, counting the pointers that joined it from other playbooks."""
    strength = {f.playbook: max((h.score for h in f.hypotheses if h.supported), default=0.0) for f in findings}
    for f in findings:
        for h in f.hypotheses:
            if h.merged_into in strength and h.status in ("confirmed", "likely"):
                strength[h.merged_into] = max(strength[h.merged_into], h.score)
    return strength


def _merge_pointers(findings: list[Finding], chosen: dict[str, CompiledPlaybook]) -> None:
    """A hypothesis that says "this is the other playbook's cause" joins that finding when it ran too."""
    see = {(pid, h.spec.id): h.spec.see for pid, p in chosen.items() for h in _every(p.hypotheses) if h.spec.see}
    ran = {f.playbook for f in findings}
    for finding in findings:
        for h in finding.hypotheses:
            target = see.get((finding.playbook, h.id))
            if target and target in ran and target != finding.playbook and h.status != "ruled-out":
                h.merged_into = target


def _every(nodes: list[CompiledHypothesis]) -> Iterator[CompiledHypothesis]:
    for node in nodes:
        yield node
        yield from _every(node.children)


def analyse(artifacts: Iterable[Artifact], target: Target | None = None, missing: list[Missing] | None = None,
            playbooks: list[CompiledPlaybook] | None = None, symptoms: list[str] | None = None) -> Report:
    """Build a report from artifacts; `symptoms` forces playbooks to run whatever their triggers say.

    `artifacts` is read once, in order: a generator lets a caller read big files one at a time, so only one
    file's artifacts are in memory while they are parsed.
    """
    target = target or Target()
    playbooks = default_playbooks() if playbooks is None else playbooks
    facts = FactSet()
    problems: list[str] = []
    missing = list(missing or [])
    refs: list[ArtifactRef] = []
    for artifact in artifacts:
        refs.append(ArtifactRef(id=artifact.id, kind=str(artifact.kind), source=artifact.source,
                                unavailable=artifact.unavailable, subject=artifact.subject, command=artifact.command,
                                captured_at=artifact.captured_at))
        if artifact.unavailable is not None:
            missing.append(Missing(source=f"{artifact.kind}:{artifact.subject or artifact.id}",
                                   reason=artifact.unavailable))
            continue
        result = parse_artifact(artifact)
        for fact in result.facts:
            facts.add(fact)
        problems.extend(f"{artifact.id}: {p}" for p in result.problems)
    for fact in suspect_nodes(facts):  # the straggler's pod, joined to the node its Pod object names
        facts.add(fact)
    findings = conclude(facts, target, playbooks, symptoms)
    notes = [] if facts.names() or not refs else [nothing_recognised()]
    return Report(
        target=target,
        symptoms=[f.playbook for f in findings],
        findings=findings,
        facts=facts.values(),
        artifacts=refs,
        missing=missing,
        problems=problems,
        notes=notes,
        scope=narrow(facts),
    )
