"""The one pipeline: artifacts -> parsers -> facts -> playbooks -> report."""

from __future__ import annotations

from collections.abc import Iterable

from collectors.factset import FactSet
from collectors.models import Artifact
from collectors.parsers.registry import parse_artifact
from collectors.paste import nothing_recognised
from playbooks.cel_expr import activation
from playbooks.engine import evaluate, template_variables, triggered
from playbooks.loader import CompiledPlaybook, load_playbooks
from playbooks.report import ArtifactRef, Finding, Missing, Report, Target

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
    # Ties keep playbook order, so the leading hypothesis is deterministic.
    findings.sort(key=lambda f: -max((h.score for h in f.hypotheses if h.status != "ruled-out"), default=0.0))
    return findings


def analyse(artifacts: list[Artifact], target: Target | None = None, missing: list[Missing] | None = None,
            playbooks: list[CompiledPlaybook] | None = None, symptoms: list[str] | None = None) -> Report:
    """Build a report from artifacts; `symptoms` forces playbooks to run whatever their triggers say."""
    target = target or Target()
    playbooks = default_playbooks() if playbooks is None else playbooks
    facts = FactSet()
    problems: list[str] = []
    missing = list(missing or [])
    for artifact in artifacts:
        if artifact.unavailable is not None:
            missing.append(Missing(source=f"{artifact.kind}:{artifact.subject or artifact.id}",
                                   reason=artifact.unavailable))
            continue
        result = parse_artifact(artifact)
        for fact in result.facts:
            facts.add(fact)
        problems.extend(f"{artifact.id}: {p}" for p in result.problems)
    findings = conclude(facts, target, playbooks, symptoms)
    notes = [] if facts.names() or not artifacts else [nothing_recognised()]
    return Report(
        target=target,
        symptoms=[f.playbook for f in findings],
        findings=findings,
        facts=facts.values(),
        artifacts=[ArtifactRef(id=a.id, kind=str(a.kind), source=a.source, unavailable=a.unavailable,
                               subject=a.subject, command=a.command, captured_at=a.captured_at)
                   for a in artifacts],
        missing=missing,
        problems=problems,
        notes=notes,
    )
