"""A Service compared with the pods and NetworkPolicies pasted beside it (one `kubectl get -o yaml|json` paste).

Three questions seed 001:319-345 asks of an unreachable Service, answered only when both sides are in the paste:
does its selector match the pods' labels, is each targetPort (a number or a port name) a port some selected
container declares, and does a NetworkPolicy select those pods and restrict who may reach them. A port a
container does not declare can still be listened on (containerPort is informational), so a numeric targetPort
is judged only against pods that declare ports; a named one must be declared, or the endpoints controller
leaves the pod out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from collectors.k8s_values import as_dict, as_int, as_list, as_str
from collectors.parsers.k8s_common import DedupSink, subject_of
from collectors.parsers.k8s_object_text import Loc


@dataclass
class Seen:
    """The Services, Pods and NetworkPolicies of one paste, with where each is."""

    services: list[tuple[dict[str, Any], Loc]] = field(default_factory=list)
    pods: list[tuple[dict[str, Any], Loc]] = field(default_factory=list)
    policies: list[tuple[dict[str, Any], Loc]] = field(default_factory=list)

    def add(self, kind: str, data: dict[str, Any], loc: Loc) -> None:
        target = {"Service": self.services, "Pod": self.pods, "NetworkPolicy": self.policies}.get(kind)
        if target is not None:
            target.append((data, loc))


def _meta(d: dict[str, Any]) -> tuple[str, str, dict[str, str]]:
    meta = as_dict(d.get("metadata"))
    labels = {str(k): as_str(v) for k, v in as_dict(meta.get("labels")).items()}
    return as_str(meta.get("name")), as_str(meta.get("namespace")), labels


def _same_namespace(a: str, b: str) -> bool:
    # A paste often drops the namespace (kubectl -n x get ... -o yaml keeps it; hand-edited YAML may not).
    return not a or not b or a == b


def _matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def emit(sink: DedupSink, seen: Seen) -> None:
    """Facts for each Service that has pods (and policies) beside it."""
    for service, sloc in seen.services:
        spec = as_dict(service.get("spec"))
        if as_str(spec.get("type")) == "ExternalName":
            continue
        selector = {str(k): as_str(v) for k, v in as_dict(spec.get("selector")).items()}
        name, namespace, _ = _meta(service)
        if not selector or not seen.pods:
            continue
        subject = subject_of("service", name, namespace) if name else None
        pods = [(p, loc) for p, loc in seen.pods if _same_namespace(namespace, _meta(p)[1])]
        if not pods:
            continue
        selected = [(p, loc) for p, loc in pods if _matches(selector, _meta(p)[2])]
        sel_line = sloc.at("spec", "selector")
        first_pod = pods[0][1].at("metadata", "labels") if not selected else selected[0][1].at("metadata", "labels")
        sink.add("service.selector_matches_pods", bool(selected), min(sel_line, first_pod),
                 max(sel_line, first_pod), subject=subject)
        if selected:
            _target_ports(sink, spec, sloc, selected, subject)
        _policies(sink, seen.policies, namespace, selector, [_meta(p)[2] for p, _ in selected], subject)


def _declared(pods: list[tuple[dict[str, Any], Loc]]) -> tuple[set[int], set[str], int]:
    """Container port numbers and names the pods declare, and the line of the first declaration."""
    numbers: set[int] = set()
    names: set[str] = set()
    line = 0
    for pod, loc in pods:
        for container in as_list(as_dict(pod.get("spec")).get("containers")):
            for port in as_list(as_dict(container).get("ports")):
                p = as_dict(port)
                if (number := as_int(p.get("containerPort"))) is not None:
                    numbers.add(number)
                    line = line or loc.at("spec", "containers", "ports")
                if as_str(p.get("name")):
                    names.add(as_str(p.get("name")))
    return numbers, names, line


def _target_ports(sink: DedupSink, spec: dict[str, Any], sloc: Loc, pods: list[tuple[dict[str, Any], Loc]],
                  subject: str | None) -> None:
    numbers, names, declared_line = _declared(pods)
    judged: list[bool] = []
    for port in map(as_dict, as_list(spec.get("ports"))):
        target = port.get("targetPort", port.get("port"))  # targetPort defaults to port
        number = as_int(target)
        if number is None and as_str(target):
            judged.append(as_str(target) in names)
        elif number is not None and numbers:
            judged.append(number in numbers)
    if not judged:
        return
    ports_line = sloc.at("spec", "ports", "targetPort") if "targetPort" in str(spec.get("ports")) \
        else sloc.at("spec", "ports")
    end = max(ports_line, declared_line) if declared_line else ports_line
    sink.add("service.target_port_declared", all(judged), min(ports_line, end), end, subject=subject)


def _policies(sink: DedupSink, policies: list[tuple[dict[str, Any], Loc]], namespace: str,
              selector: dict[str, str], backend_labels: list[dict[str, str]], subject: str | None) -> None:
    """Does a policy select the Service's pods and restrict their ingress (no rule admitting every client)?"""
    judged: list[tuple[bool, int]] = []
    for policy, loc in policies:
        if not _same_namespace(namespace, _meta(policy)[1]):
            continue
        spec = as_dict(policy.get("spec"))
        pod_selector = as_dict(spec.get("podSelector"))
        match = {str(k): as_str(v) for k, v in as_dict(pod_selector.get("matchLabels")).items()}
        if pod_selector.get("matchExpressions"):
            continue  # set-based selectors are not judged here: unknown rather than guessed
        # An empty podSelector selects every pod; else it must match a backend, or be implied by the selector.
        selects = not match or any(_matches(match, labels) for labels in backend_labels) or _matches(match, selector)
        types = [as_str(t) for t in as_list(spec.get("policyTypes"))] or ["Ingress"]
        restricts = "Ingress" in types and not any(rule == {} for rule in as_list(spec.get("ingress")))
        judged.append((selects and restricts, loc.at("spec", "podSelector")))
    if judged:
        hits = [line for hit, line in judged if hit]
        line = hits[0] if hits else judged[0][1]
        sink.add("netpol.selects_backends", bool(hits), line, subject=subject)
