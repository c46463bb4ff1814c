"""Evaluating hypothesis trees against facts: status, score, citations, next checks."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from collectors.factset import FactSet
from playbooks.cel_expr import activation
from playbooks.loader import CompiledHypothesis, CompiledPlaybook
from playbooks.model import Chart, NoChart
from playbooks.report import ChartSpec, Finding, HypothesisResult, Rule, Status, Target, cited_evidence
from playbooks.templates import promql_regex, render

# Status sets the band; the playbook's prior orders hypotheses inside a band.
_BASE: dict[Status, float] = {"confirmed": 0.9, "likely": 0.6, "unknown": 0.3, "ruled-out": 0.0}
# A hypothesis whose `leads` holds takes the top of its status band (the prior term is at most 0.09), so it ranks
# above the others of its status whatever their priors, and stays inside the band.
_PRIOR_SPAN = 0.09


def template_variables(target: Target, facts: FactSet) -> dict[str, Any]:
    """What next checks may mention: the subject, preferring the target over what evidence says."""
    pod = target.pod or facts.value("pod.name")
    node = target.node or facts.value("node.name") or facts.value("pod.node") or _host_named(facts)
    return {
        "service": target.service or pod,
        "namespace": target.namespace or facts.value("pod.namespace"),
        "cluster": target.cluster,
        "pod": pod,
        "node": node,
        "node_instance": node_instance(node, target, facts) if node else None,
        "container": facts.value("container.name"),
        "facts": facts.values(),
    }


def _host_named(facts: FactSet) -> str | None:
    """The one node the evidence's own lines name, when no object does: the host of a syslog or journal prefix in
    front of the Xid lines ("Dec  2 11:38:27 worker4 kernel: NVRM: ..." names worker4) or of kubelet lines (their
    facts are about node/<host>). Two different nodes name no one node."""
    named = set(facts.value("xid.hosts") or [])
    for name in facts.names():
        merged = facts.get(name)
        named.update(f.subject[len("node/"):] for f in (merged.sources if merged else [])
                     if f.subject.startswith("node/") and len(f.subject) > len("node/"))
    return named.pop() if len(named) == 1 else None


def node_instance(node: str, target: Target, facts: FactSet) -> str:
    """A PromQL regex, already escaped, for the `instance` label of the node's exporters: kube-prometheus relabels
    it to the node's name, a plain scrape config keeps the address and port it scraped. So: the name or any address
    the evidence gives for this node (or the alert's scrape address), with or without a port."""
    merged = facts.get("node.addresses")
    addresses = [a for f in merged.sources if f.subject in ("", f"node/{node}") for a in f.value] if merged else []
    if target.instance:
        addresses.append(target.instance.rsplit(":", 1)[0] if target.instance.count(":") == 1 else target.instance)
    names = list(dict.fromkeys([node, *addresses]))
    return "(" + "|".join(promql_regex(name) for name in names) + ")(:[0-9]+)?"


def triggered(playbook: CompiledPlaybook, context: Any) -> bool:
    """The written trigger holds, or one derived from the hypotheses' discriminating facts (loader.derived_trigger)."""
    return playbook.trigger.evaluate(context) is True or any(p.evaluate(context) is True for p in playbook.derived)


def evaluate(playbook: CompiledPlaybook, facts: FactSet, variables: dict[str, Any], context: Any = None) -> Finding:
    """One playbook over the facts: every explored hypothesis, best first.

    `context` is `activation(facts.cel_context())`, passed in when several playbooks share it.
    """
    context = activation(facts.cel_context()) if context is None else context
    observed = _Observed(facts)
    results: list[HypothesisResult] = []
    order: dict[str, int] = {}

    def visit(node: CompiledHypothesis, parent: str | None) -> None:
        result = _judge(node, parent, facts, context, variables, observed)
        order[result.id] = len(order)
        results.append(result)
        if result.status in ("confirmed", "likely"):
            for child in node.children:
                visit(child, node.spec.id)

    for node in playbook.hypotheses:
        visit(node, None)
    results.sort(key=lambda r: (-r.score, order[r.id]))
    return Finding(playbook=playbook.spec.id, title=playbook.spec.title, hypotheses=results)


class _Observed:
    """The CEL context of the facts without the stated ones, built once per playbook and only when needed."""

    def __init__(self, facts: FactSet) -> None:
        self.facts = facts
        self._context: Any = None

    def holds(self, node: CompiledHypothesis, key: str) -> bool:
        if not self.facts.has_stated:
            return True
        if self._context is None:
            self._context = activation(self.facts.observed().cel_context())
        return node.predicates[key].evaluate(self._context) is True


STATED_NOTE = "stated in the paste, not observed"


def _judge(node: CompiledHypothesis, parent: str | None, facts: FactSet, context: Any,
           variables: dict[str, Any], observed: _Observed | None = None) -> HypothesisResult:
    spec = node.spec
    observed = observed or _Observed(facts)
    outcome = {key: predicate.evaluate(context) for key, predicate in node.predicates.items()}
    note = None
    # What a person wrote in words is weaker than what a program printed: a rule that holds only because of a
    # stated fact makes the hypothesis likely at most, and a stated fact never rules a hypothesis out on its own.
    if outcome.get("rule_out") is True and not observed.holds(node, "rule_out"):
        outcome["rule_out"] = None
        note = f"{STATED_NOTE}: rule_out holds only on what the paste says in words, so nothing is ruled out"
    status: Status = "unknown"
    decided_by: str | None = None
    order: tuple[tuple[str, Status], ...] = (("confirm", "confirmed"), ("rule_out", "ruled-out"), ("likely", "likely"))
    for key, verdict in order:
        if outcome.get(key) is True:
            status, decided_by = verdict, key
            break
    if status == "confirmed" and not observed.holds(node, "confirm"):
        status = "likely"
        note = f"{STATED_NOTE}: confirm holds only on what the paste says in words, so likely at most"
    elif status == "likely" and not observed.holds(node, "likely"):
        note = f"{STATED_NOTE}: likely holds only on what the paste says in words"
    if status == "confirmed" and spec.same_node and not _on_pods_node(node.predicates["confirm"].facts, facts):
        status = "likely"  # the fault is real, but nothing ties that node to this pod
        note = (f"confirm held, but its node evidence is not about the pod's node {facts.value('pod.node')}: "
                "likely at most")
    cited = list(node.predicates[decided_by].facts) if decided_by else []
    cited += [name for name in spec.cite if name not in cited]
    present = [name for name in cited if name in facts]
    # `leads` only orders hypotheses that already hold: its facts are not evidence one is missing.
    referenced = {name for key, predicate in node.predicates.items() if key != "leads" for name in predicate.facts}
    leads = status in ("confirmed", "likely") and outcome.get("leads") is True
    needs = sorted(name for name in referenced if name not in facts) if status == "unknown" else []
    return HypothesisResult(
        id=spec.id,
        status=status,
        score=round(_BASE[status] + _PRIOR_SPAN * (1.0 if leads else spec.prior), 3),
        claim=render(spec.claim, variables),
        because=[merged.cite() for name in present if (merged := facts.get(name)) is not None],
        falsified_by=render(spec.falsified_by, variables),
        next_checks=[render(check, variables) for check in spec.next_checks],
        mitigations=[render(m, variables) for m in spec.mitigations],
        parent=parent,
        evidence=cited_evidence(present, facts),
        needs=needs,
        source=list(spec.source),
        decided_by=decided_by,
        note=note,
        rule=_rule(node, decided_by),
        chart=chart_spec(spec.chart, facts),
    )


def chart_spec(chart: Chart | NoChart, facts: FactSet) -> ChartSpec | None:
    """The declaration as the report carries it: a fact-valued threshold becomes its value; `none`, no chart."""
    if isinstance(chart, NoChart):
        return None
    threshold = chart.threshold
    if chart.threshold_fact is not None:
        value = facts.value(chart.threshold_fact)
        threshold = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    return ChartSpec(metric=chart.metric, title=chart.title, unit=chart.unit, threshold=threshold,
                     threshold_label=chart.threshold_label, breach=chart.breach)


def _rule(node: CompiledHypothesis, key: str | None) -> Rule | None:
    """The predicate that decided the status, where it is written, and its CEL on one line."""
    if key is None:
        return None
    cel = " ".join(str(getattr(node.spec, key) or "").split())
    return Rule(file=node.file, line=node.lines.get(key, 0), cel=cel)


def _on_pods_node(names: Iterable[str], facts: FactSet) -> bool:
    """Every node-level fact the rule used was read about the pod's own node (true when no pod names a node)."""
    node = facts.value("pod.node")
    if not node:
        return True
    for name in names:
        merged = facts.get(name)
        if merged is None or name.startswith(("pod.", "container.")):
            continue
        if not any(f.subject == f"node/{node}" for f in merged.sources):
            return False
    return True
