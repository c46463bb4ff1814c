"""Facts from the other objects triage reads: Events, ResourceQuotas, training jobs and gangs, NetworkPolicies,
HorizontalPodAutoscalers.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from collectors.k8s_values import as_dict, as_int, as_list, as_str, quantity
from collectors.parsers.kubernetes.k8s_common import (
    subject_of,
)
from collectors.parsers.kubernetes.k8s_event_rows import EventRecord
from collectors.parsers.kubernetes.k8s_object_context import Ctx, identity
from collectors.parsers.kubernetes.k8s_object_text import Loc
from collectors.parsers.kubernetes.k8s_pod_object import group_key
from collectors.parsers.kubernetes.k8s_policy_egress import dns_blocked, egress_rules


def event(ctx: Ctx, d: dict[str, Any], loc: Loc) -> None:
    reason = as_str(d.get("reason"))
    message = as_str(d.get("message")) or as_str(d.get("note"))  # core/v1 or events.k8s.io/v1
    obj = as_dict(d.get("involvedObject")) or as_dict(d.get("regarding"))
    kind, name = as_str(obj.get("kind")).lower(), as_str(obj.get("name"))
    ns = as_str(obj.get("namespace")) or as_str(as_dict(d.get("metadata")).get("namespace"))

    def lines() -> tuple[int, int]:
        # Only events that yield a new fact need a line; most are repeats, so this runs rarely.
        start = loc.at(("reason", reason)) if reason else loc.item_line()
        end = loc.at("message" if "message" in d else "note") if message else start
        return min(start, end), max(start, end)

    ev = EventRecord(as_str(d.get("type")), reason, message, 0, 0, kind, name, ns, locate=lines)
    subject = None
    if name:
        subject = subject_of("node", name) if kind == "node" else subject_of(kind or "object", name, ns)
    ctx.events.feed(ev, subject)


def event_list(ctx: Ctx, d: dict[str, Any], loc: Loc) -> None:
    """An EventList with no items: events were read and there are none."""
    if not d.get("items"):
        ctx.events.none_seen(loc.item_line())


# ---- ResourceQuota, jobs, NetworkPolicy, HPA -----------------------------------------------------------


def quota(ctx: Ctx, d: dict[str, Any], loc: Loc) -> None:
    _, _, subject = identity(d, "resourcequota")
    status = as_dict(d.get("status"))
    hard = as_dict(status.get("hard")) or as_dict(as_dict(d.get("spec")).get("hard"))
    used = as_dict(status.get("used"))
    at_limit: list[str] = []
    usage: list[tuple[float, str, str]] = []  # (used / hard, resource, "R: U of H (P%) in <subject>")
    compared = False
    for resource, limit in hard.items():
        h, u = quantity(limit), quantity(used.get(resource))
        if h is None or u is None:
            continue
        compared = True
        # A zero quota forbids a resource outright; that is policy, not exhaustion.
        if h > 0 and u >= h:
            at_limit.append(str(resource))
        if h > 0:
            # As `kubectl describe resourcequota` prints them (Used, Hard), with the share used; floored, so a
            # quota short of its limit never reads 100%.
            ratio = float(u / h)
            usage.append((ratio, str(resource), f"{resource}: {as_str(used.get(resource))} of {as_str(limit)} "
                                                f"({int(ratio * 100)}%) in {subject}"))
    if not compared:
        return
    line = loc.at("status", "used", at_limit[0]) if at_limit else loc.at("status", "used")
    ctx.sink.add("quota.exceeded", bool(at_limit), line, subject=subject)
    ctx.sink.add("quota.resources_at_limit", at_limit, line, subject=subject)
    if usage:
        usage.sort(key=lambda item: (-item[0], item[1]))
        fullest = loc.at("status", "used", usage[0][1])
        ctx.sink.add("quota.usage", [text for _, _, text in usage], fullest, subject=subject)
        ctx.sink.add("quota.used_ratio", round(usage[0][0], 3), fullest, subject=subject)


def _templates(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Pod templates of a batch Job, Kubeflow job, Volcano Job or JobSet."""
    found: list[object] = [spec.get("template")]
    for key in ("pytorchReplicaSpecs", "mpiReplicaSpecs", "tfReplicaSpecs", "xgbReplicaSpecs", "paddleReplicaSpecs"):
        found += [as_dict(rs).get("template") for rs in as_dict(spec.get(key)).values()]
    found += [as_dict(task).get("template") for task in as_list(spec.get("tasks"))]  # Volcano
    found += [as_dict(as_dict(as_dict(rj).get("template")).get("spec")).get("template")
              for rj in as_list(spec.get("replicatedJobs"))]  # JobSet
    return [t for t in found if isinstance(t, dict)]


def job(ctx: Ctx, d: dict[str, Any], loc: Loc) -> None:
    kind = as_str(d.get("kind"))
    _, _, subject = identity(d, kind or "job")
    spec = as_dict(d.get("spec"))
    policy = as_dict(as_dict(spec.get("runPolicy")).get("schedulingPolicy")) or as_dict(spec.get("schedulingPolicy"))
    minimum, min_key = _min_members(spec, policy)
    evidence = _gang_evidence(kind, d, spec, policy, min_key)
    line = loc.at("spec", evidence) if evidence in ("minMember", "minAvailable", "schedulingPolicy",
                                                     "schedulerName") else loc.at(evidence or "name")
    ctx.sink.add("gang.configured", bool(evidence), line, subject=subject)
    if minimum is not None:
        ctx.sink.add("gang.min_available", minimum, loc.at("spec", min_key), subject=subject)


def _min_members(spec: dict[str, Any], policy: dict[str, Any]) -> tuple[int | None, str]:
    """PodGroup minMember, Volcano Job minAvailable, or a Kubeflow schedulingPolicy minAvailable."""
    for source, key in ((spec, "minMember"), (spec, "minAvailable"), (policy, "minAvailable")):
        if (value := as_int(source.get(key))) is not None:
            return value, key
    return None, ""


def _gang_evidence(kind: str, d: dict[str, Any], spec: dict[str, Any], policy: dict[str, Any], min_key: str) -> str:
    """The key that shows gang scheduling, or "" when the spec has none."""
    if min_key:
        return min_key
    if policy:
        return "schedulingPolicy"
    if kind in ("PodGroup", "Workload"):
        return "kind"
    if key := group_key(as_dict(d.get("metadata"))):
        return key
    for template in _templates(spec):
        if as_str(as_dict(template.get("spec")).get("schedulerName")) == "volcano":
            return "schedulerName"
        if key := group_key(as_dict(template.get("metadata"))):
            return key
    return ""


def netpol(ctx: Ctx, d: dict[str, Any], loc: Loc) -> None:
    spec = as_dict(d.get("spec"))
    types = [as_str(t) for t in as_list(spec.get("policyTypes"))]
    if not types:
        types = ["Ingress"] + (["Egress"] if "egress" in spec else [])
    # A direction is restricted unless one of its rules is empty (`{}` allows everything).
    restricts = any(not any(rule == {} for rule in as_list(spec.get(t.lower()))) for t in types)
    ctx.netpols.append((restricts, loc.at("metadata", "name")))
    # Which pods a policy closes to clients it does not name: joined with a Service's pods (collectors/joins.py).
    selector = as_dict(spec.get("podSelector"))
    if "Ingress" in types and not any(rule == {} for rule in as_list(spec.get("ingress"))) \
            and not selector.get("matchExpressions"):  # set-based selectors are left unjudged, not guessed
        labels = ",".join(f"{k}={as_str(v)}" for k, v in sorted(as_dict(selector.get("matchLabels")).items()))
        _, _, subject = identity(d, "networkpolicy")
        ctx.sink.add("netpol.ingress_selectors", [labels or "*"], loc.at("spec", "podSelector"), subject=subject)
    _dns_egress(ctx, d, loc, [spec], cilium=False)


def _dns_egress(ctx: Ctx, d: dict[str, Any], loc: Loc, specs: list[dict[str, Any]], cilium: bool) -> None:
    """Whether a policy that restricts egress lets DNS out; netpol_totals judges the policies together."""
    sections = [rules for spec in specs if (rules := egress_rules(spec, cilium)) is not None]
    if not sections:
        return
    # Cilium ORs the rule sets of one policy: any rule allowing DNS is enough.
    allows = not all(dns_blocked(rules) for rules in sections)
    _, ns, subject = identity(d, as_str(d.get("kind")) or "networkpolicy")
    ctx.egress.append((ns, allows, loc.at("egress"), subject))


def _dns_totals(ctx: Ctx) -> None:
    """netpol.dns_egress_blocked per namespace: policies add up (a pod may send what any policy selecting it
    allows), so DNS is blocked only when no restricting policy beside it lets DNS out. A policy whose own pods
    differ still counts as allowing it: the fact is stated only when no pasted policy could carry DNS."""
    for ns in dict.fromkeys(n for n, _, _, _ in ctx.egress):
        near = [e for e in ctx.egress if not ns or not e[0] or e[0] == ns]
        allowing = [e for e in near if e[1]]
        _, _, line, subject = allowing[0] if allowing else near[0]
        ctx.sink.add("netpol.dns_egress_blocked", not allowing, line, subject=subject)


def cilium_policy(ctx: Ctx, d: dict[str, Any], loc: Loc) -> None:
    """A CiliumNetworkPolicy (or the clusterwide one): `spec`, or several rule sets under `specs`."""
    specs = [as_dict(s) for s in [d.get("spec"), *as_list(d.get("specs"))] if isinstance(s, dict)]
    restricts = any(k in spec for spec in specs for k in ("ingress", "egress", "ingressDeny", "egressDeny"))
    ctx.netpols.append((restricts, loc.at("metadata", "name")))
    _dns_egress(ctx, d, loc, specs, cilium=True)


def netpol_list(ctx: Ctx, d: dict[str, Any], loc: Loc) -> None:
    if not d.get("items"):
        ctx.netpol_list_line = loc.item_line()


def netpol_totals(ctx: Ctx) -> None:
    _dns_totals(ctx)
    if ctx.netpols:
        lines = [n for _, n in ctx.netpols]
        ctx.sink.add("netpol.count", len(ctx.netpols), min(lines), max(lines))
        restricting = [n for r, n in ctx.netpols if r]
        ctx.sink.add("netpol.restricts_pods", bool(restricting), restricting[0] if restricting else lines[0])
    elif ctx.netpol_list_line:
        ctx.sink.add("netpol.count", 0, ctx.netpol_list_line)


def hpa(ctx: Ctx, d: dict[str, Any], loc: Loc) -> None:
    _, _, subject = identity(d, "horizontalpodautoscaler")
    spec, status = as_dict(d.get("spec")), as_dict(d.get("status"))
    maximum = as_int(spec.get("maxReplicas"))
    if maximum is None:
        return
    max_line = loc.at("spec", "maxReplicas")
    ctx.sink.add("hpa.max_replicas", maximum, max_line, subject=subject)
    current = as_int(status.get("currentReplicas"))
    if current is not None and current >= maximum:
        ctx.sink.add("hpa.at_max", True, loc.at("status", "currentReplicas"), subject=subject)
    elif _scaling_limited(d):
        ctx.sink.add("hpa.at_max", True, loc.at("conditions", ("type", "ScalingLimited")), subject=subject)
    elif current is not None:
        ctx.sink.add("hpa.at_max", False, loc.at("status", "currentReplicas"), subject=subject)
    if _blind(d):
        ctx.sink.add("hpa.metrics_unavailable", True, loc.at("conditions", ("type", "ScalingActive")), subject=subject)


def _blind(d: dict[str, Any]) -> bool:
    """ScalingActive=False for a reason other than scaling being switched off: the HPA cannot read its metric."""
    return any(as_str(c.get("type")) == "ScalingActive" and as_str(c.get("status")) == "False"
               and as_str(c.get("reason")) != "ScalingDisabled"
               for c in map(as_dict, as_list(as_dict(d.get("status")).get("conditions"))))


def _scaling_limited(d: dict[str, Any]) -> bool:
    """ScalingLimited=True because of the maximum (v2 conditions, or the v1 conditions annotation)."""
    conditions = as_list(as_dict(d.get("status")).get("conditions"))
    annotation = as_str(as_dict(as_dict(d.get("metadata")).get("annotations")).get(
        "autoscaling.alpha.kubernetes.io/conditions"))
    if annotation:
        with contextlib.suppress(ValueError, RecursionError):
            conditions = conditions + as_list(json.loads(annotation))
    return any(as_str(c.get("type")) == "ScalingLimited" and as_str(c.get("status")) == "True"
               and as_str(c.get("reason")) != "TooFewReplicas" for c in map(as_dict, conditions))
