"""The one pipeline: artifacts -> parsers -> facts -> playbooks -> report."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cache
from typing import Any

from collectors import rank_join
from collectors.factset import FactSet
from collectors.joins import cluster_ip_no_route, exposed_pods_ready, pod_ports, service_backends, suspect_nodes
from collectors.models import Artifact, Fact
from collectors.paste import nothing_recognised
from collectors.query_facts import parse_with_declared
from playbooks.cel_expr import activation
from playbooks.engine import evaluate, template_variables, triggered
from playbooks.layers import narrowing
from playbooks.loader import CompiledHypothesis, CompiledPlaybook, load_playbooks
from playbooks.report import ArtifactRef, Finding, Missing, Report, Target, cited_evidence
from playbooks.scope import narrow


@cache
def default_playbooks() -> list[CompiledPlaybook]:
    """The bundled playbooks, loaded and compiled once per process."""
    return load_playbooks()


def conclude(facts: FactSet, target: Target, playbooks: list[CompiledPlaybook],
             symptoms: Iterable[str] | None = None) -> list[Finding]:
    """Facts -> findings: every playbook that triggers (or is forced), best finding first."""
    context = activation(facts.cel_context())
    variables = template_variables(target, facts)
    chosen = _chosen(context, playbooks, symptoms)
    pods = [] if target.pod else _pods(facts)
    findings = [_triggered_by(evaluate(p, facts, _subject(p, pods, target, variables), context), p, facts, context)
                for p in chosen]
    _merge_pointers(findings, {p.spec.id: p for p in chosen})
    strength = _strengths(findings)
    # Supported hypotheses rank first; ties keep playbook order, so the leading hypothesis is deterministic.
    findings.sort(key=lambda f: (-strength[f.playbook],
                                 -max((h.score for h in f.hypotheses if h.status != "ruled-out"), default=0.0)))
    return findings


def _chosen(context: Any, playbooks: list[CompiledPlaybook], symptoms: Iterable[str] | None) -> list[CompiledPlaybook]:
    forced = set(symptoms or [])
    return [p for p in playbooks if p.spec.id in forced or triggered(p, context)]


def triggered_by(artifacts: list[Artifact], symptoms: Iterable[str] | None = None,
                 playbooks: list[CompiledPlaybook] | None = None) -> list[CompiledPlaybook]:
    """The playbooks the artifacts' facts trigger, and those `symptoms` force, forced first; no hypothesis is
    judged. Live triage asks this mid-collection to choose its chart series, so the engine runs once per triage."""
    playbooks = default_playbooks() if playbooks is None else playbooks
    read = [(a, parse_with_declared(a).facts) for a in artifacts if a.unavailable is None]
    rank_logs = [a for a, facts in read if rank_join.may_join(a, facts)]
    facts = joined_facts(rank_logs, [f for _, found in read for f in found], unavailable(artifacts))
    chosen = _chosen(activation(facts.cel_context()), playbooks, symptoms)
    forced = set(symptoms or [])
    return sorted(chosen, key=lambda p: p.spec.id not in forced)


def _triggered_by(finding: Finding, playbook: CompiledPlaybook, facts: FactSet, context: Any) -> Finding:
    """The finding with the trigger that started it and the evidence the trigger read (the report's trace)."""
    if playbook.trigger_rule is not None and triggered(playbook, context):
        finding.trigger = playbook.trigger_rule
        finding.trigger_evidence = cited_evidence(list(playbook.trigger.facts), facts)
    return finding


_MAX_PODS = 20


def _pods(facts: FactSet) -> list[tuple[str, str, Any]]:
    """(namespace, name, its own facts as a CEL activation) for each pod the evidence says something about, when
    it names several (a `kubectl get pods` table with a crash-looping, an image-pulling and a pending pod), or
    names one only as the object of its events."""
    own: dict[str, list[Fact]] = {}
    for name in facts.names():
        merged = facts.get(name)
        for fact in merged.sources if merged else []:
            if fact.subject.startswith("pod/") and name != "pods.names":
                own.setdefault(fact.subject, []).append(fact)
    if len(own) < 2 and (not own or "pod.name" in facts):
        return []  # one pod, already named by the evidence
    # In the order the evidence shows them, so the first pod that shows a symptom is the one its checks name.
    first = sorted(own, key=lambda subject: min((f.citation.artifact, f.citation.start) for f in own[subject]))
    out: list[tuple[str, str, Any]] = []
    for subject in first[:_MAX_PODS]:
        found = own[subject]
        namespace, _, pod = subject.removeprefix("pod/").rpartition("/")
        out.append((namespace, pod, activation(FactSet(found).cel_context())))
    return out


def _subject(playbook: CompiledPlaybook, pods: list[tuple[str, str, Any]], target: Target,
             variables: dict[str, Any]) -> dict[str, Any]:
    """The playbook's checks name the pod whose own evidence shows its symptom, not the paste's first pod."""
    for namespace, pod, own in pods:
        if triggered(playbook, own):
            return {**variables, "pod": pod, "service": target.service or pod,
                    "namespace": target.namespace or namespace or variables["namespace"]}
    return variables


def _strengths(findings: list[Finding]) -> dict[str, float]:
    """A finding's best supported score, counting the pointers that joined it from other playbooks."""
    strength = {f.playbook: max((h.score for h in f.hypotheses if h.supported), default=0.0) for f in findings}
    for f in findings:
        for h in f.hypotheses:
            if h.merged_into in strength and h.status in ("confirmed", "likely"):
                strength[h.merged_into] = max(strength[h.merged_into], h.score)
    return strength


def _merge_pointers(findings: list[Finding], chosen: dict[str, CompiledPlaybook]) -> None:
    """A hypothesis that says "this is the other playbook's cause" joins that finding when it ran too, and takes
    its refinements with it: they explain the cause the other playbook owns, so they no longer compete with it."""
    see = {(pid, h.spec.id): h.spec.see for pid, p in chosen.items() for h in _every(p.hypotheses) if h.spec.see}
    below = {(pid, h.spec.id): [d.spec.id for d in _every(h.children)]
             for pid, p in chosen.items() for h in _every(p.hypotheses) if h.spec.see}
    ran = {f.playbook for f in findings}
    for finding in findings:
        joined: dict[str, str] = {}
        for h in finding.hypotheses:
            target = see.get((finding.playbook, h.id))
            if target and target in ran and target != finding.playbook and h.status != "ruled-out":
                joined.update({hid: target for hid in [h.id, *below[(finding.playbook, h.id)]]})
        for h in finding.hypotheses:
            if h.id in joined and h.status != "ruled-out":
                h.merged_into = joined[h.id]


def _every(nodes: list[CompiledHypothesis]) -> Iterator[CompiledHypothesis]:
    for node in nodes:
        yield node
        yield from _every(node.children)


ALSO_ON_NODE = "also on this node"


def alert_leads(findings: list[Finding], leads: Iterable[str], target: Target) -> list[Finding]:
    """In a triage an alert started, the alert's own symptom leads (issue #24, point 3).

    Its playbooks' findings come first when evidence supports them. When the alert is about a node, every other
    finding is about some other workload that happens to run there: it is shown as "also on this node" and never
    becomes the verdict, even when the alert's own playbook finds nothing.
    """
    own = set(leads)
    if not own:
        return findings
    mine = [f for f in findings if f.playbook in own]
    rest = [f for f in findings if f.playbook not in own]
    if (target.service or "").startswith("node/"):
        for finding in rest:
            finding.aside = ALSO_ON_NODE
        return mine + rest
    if any(h.supported for f in mine for h in f.hypotheses):
        return mine + rest
    return findings


def unavailable(artifacts: list[Artifact]) -> list[Missing]:
    """What a source could not give, as the report lists it."""
    return [Missing(source=f"{a.kind}:{a.subject or a.id}", reason=a.unavailable)
            for a in artifacts if a.unavailable is not None]


def joined_facts(artifacts: list[Artifact], parsed: list[Fact], missing: list[Missing]) -> FactSet:
    """The facts parsed from each artifact, with those only their combination shows. Live triage, pastes, replays
    and drills all come through here, so a drill step sees what `analyse` sees."""
    joined = rank_join.across(artifacts)  # one log per rank: the wave front needs them together
    parsed = parsed if joined is None else rank_join.replace(parsed, joined)
    if rank_join.unread_ranks(missing):
        parsed = rank_join.without_silent_suspects(parsed)
    facts = FactSet()
    for fact in parsed:
        facts.add(fact)
    for fact in suspect_nodes(facts):  # the straggler's pod, joined to the node its Pod object names
        facts.add(fact)
    for fact in service_backends(facts):  # a Service's selector and targetPort against the pods beside it
        facts.add(fact)
    for fact in pod_ports(facts):  # probe and loopback-client ports against the containers' declared ports
        facts.add(fact)
    for fact in cluster_ip_no_route(facts):  # a client's "no route" to an address a pasted Service owns
        facts.add(fact)
    for fact in exposed_pods_ready(facts):  # a Service kubectl expose made, its workload's pods shown ready
        facts.add(fact)
    return facts


def analyse(artifacts: Iterable[Artifact], target: Target | None = None, missing: list[Missing] | None = None,
            playbooks: list[CompiledPlaybook] | None = None, symptoms: list[str] | None = None,
            leads: list[str] | None = None) -> Report:
    """Build a report from artifacts; `symptoms` forces playbooks to run whatever their triggers say; `leads` (the
    symptoms of the alert that started a live triage) are the findings that lead (`alert_leads`).

    `artifacts` is read once, in order: a generator lets a caller read big files one at a time, so only one
    file's artifacts are in memory while they are parsed (and the logs that hold rank lines, for the rank join).
    """
    target = target or Target()
    playbooks = default_playbooks() if playbooks is None else playbooks
    problems: list[str] = []
    missing = list(missing or [])
    refs: list[ArtifactRef] = []
    parsed: list[Fact] = []
    rank_logs: list[Artifact] = []
    for artifact in artifacts:
        refs.append(ArtifactRef(id=artifact.id, kind=str(artifact.kind), source=artifact.source,
                                unavailable=artifact.unavailable, subject=artifact.subject, command=artifact.command,
                                captured_at=artifact.captured_at))
        if artifact.unavailable is not None:
            missing += unavailable([artifact])
            continue
        result = parse_with_declared(artifact)
        parsed += result.facts
        problems.extend(f"{artifact.id}: {p}" for p in result.problems)
        if rank_join.may_join(artifact, result.facts):
            rank_logs.append(artifact)
    facts = joined_facts(rank_logs, parsed, missing)
    findings = alert_leads(conclude(facts, target, playbooks, symptoms), leads or [], target)
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
        # The checks name the report's subject, as the lead's own next checks do.
        narrowing=narrowing(findings, template_variables(target, facts)),
    )
