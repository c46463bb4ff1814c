"""Kubernetes objects as JSON or YAML: one object, a List, `kubectl get -o json|yaml`, multi-document YAML,
concatenated JSON (`jq .items[]`) or JSON lines. Dispatches on each object's `kind`.

Reading the documents and finding lines is k8s_object_text; each kind's facts are in k8s_pod_object,
k8s_node_object and k8s_other_objects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from collectors.k8s_values import as_dict, as_list
from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.kubernetes import k8s_services, node_spread
from collectors.parsers.kubernetes.k8s_common import (
    DedupSink,
)
from collectors.parsers.kubernetes.k8s_event_facts import EventFacts
from collectors.parsers.kubernetes.k8s_node_object import node
from collectors.parsers.kubernetes.k8s_object_context import Ctx
from collectors.parsers.kubernetes.k8s_object_text import Loc, ObjectText, items_of, load_docs
from collectors.parsers.kubernetes.k8s_other_objects import (
    cilium_policy,
    event,
    event_list,
    hpa,
    job,
    netpol,
    netpol_list,
    netpol_totals,
    quota,
)
from collectors.parsers.kubernetes.k8s_pod_object import pod
from collectors.parsers.kubernetes.k8s_pod_templates import is_pod_spec, templates
from collectors.parsers.kubernetes.k8s_policy_egress import CILIUM_RULE_KEYS, K8S_RULE_KEYS
from collectors.text import normalise

_JSON_KIND = LazyPattern(r""""kind"\s*:\s*"[A-Za-z]+""")
_YAML_KIND = LazyPattern(r"(?m)^(?:- |  )?kind:\s*[A-Za-z]+")  # "  kind:" in a bare list of objects
_YAML_API = LazyPattern(r"(?m)^[ \t]*(?:- )?apiVersion:")


_FRAGMENT_KEY = LazyPattern(
    r"""(?m)^[ \t]*(?:- )?["']?(containerStatuses|initContainerStatuses|lastState|restartCount|exitCode|phase|"""
    r"""qosClass|involvedObject|podIP|hostIP|startTime|containerID|imageID|lastProbeTime|lastTransitionTime|"""
    r"""lastHeartbeatTime|"""
    r"""allocatable|capacity|nodeInfo|daemonEndpoints|containers|volumeMounts|emptyDir|containerPort)"""
    r"""["']?[ \t]*:""")


# The keys of a policy's rules, quoted (JSON, a Python repr of a rendered value) or at a line's start (YAML).
_RULE_KEY = LazyPattern(r"""(?m)(?:^[ \t]*(?:- )?|["'])(toEndpoints|toEntities|toFQDNs|toCIDR|toCIDRSet|toServices|"""
                        r"""toPorts|endpointSelector|podSelector|policyTypes|egress|namespaceSelector)["']?[ \t]*:""")


def sniff(text: str) -> int:
    """0-100 confidence that the text is Kubernetes objects as JSON or YAML (or a piece of one)."""
    head = text[:50_000]
    if len(set(_RULE_KEY.findall(head))) >= 2 and not _JSON_KIND.search(head) and not _YAML_KIND.search(head):
        return 60  # a policy's rules without the policy: a rendered `egress:` value, a spec
    if len(set(_FRAGMENT_KEY.findall(head))) >= 2 and not _JSON_KIND.search(head) and not _YAML_KIND.search(head):
        return 60  # a kindless piece of an object: a `status:` block, one containerStatus, an Event
    first = head.lstrip()[:1]
    if first in ("{", "["):
        if _JSON_KIND.search(head) and '"apiVersion"' in head:
            return 90
        return 50 if '"metadata"' in head and _JSON_KIND.search(head) else 0
    if _YAML_KIND.search(head) and _YAML_API.search(head):
        return 90
    return 0


def parse(artifact: Artifact) -> ParseResult:
    """Facts from every object in the artifact."""
    text = normalise(artifact.content)
    sink = DedupSink(artifact, text.split("\n"))
    _parse(sink, text)
    return sink.done()


def _parse(sink: DedupSink, text: str) -> None:
    problems: list[str] = []
    docs = load_docs(text, problems)
    for doc in docs:
        doc.data = rule_list(doc.data)
    for p in problems:
        sink.problem(p)
    tx = ObjectText(text)
    ctx = Ctx(sink, tx, EventFacts(sink))
    for item in items_of(tx, docs):
        kind, data = (item.kind, item.data) if item.kind else _fragment(item.data)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(ctx, data, Loc(tx, item))
        if kind and kind != "Pod":
            # Whatever the kind (a Deployment, a PyTorchJob, an InferenceService), its pod templates say what its
            # pods will request, mount and listen on.
            templates(ctx, data, Loc(tx, item))
    ctx.dist.flush(sink)
    node_spread.emit(sink, ctx.placements)
    ctx.events.finish()
    netpol_totals(ctx)


# Keys that say what a kindless piece of an object is: people paste `status:` or one containerStatus, not the Pod.
_POD_STATUS_KEYS = {"containerStatuses", "initContainerStatuses", "phase", "qosClass", "podIP", "hostIP", "startTime"}
_CONTAINER_STATUS_KEYS = {"lastState", "restartCount", "containerID", "imageID"}
_EVENT_KEYS = {"involvedObject", "reason", "message"}
# A container state's `terminated` block alone (`yq '.status.containerStatuses[0].lastState.terminated'`): the
# fields of ContainerStateTerminated (kubernetes/api core/v1 types.go, every release): exitCode, signal, reason,
# message, startedAt, finishedAt, containerID. An exit code with the times it ran between says what it is.
_TERMINATED_KEYS = {"exitCode", "signal", "reason", "message", "startedAt", "finishedAt", "containerID"}


# A Node's status (`kubectl get node -o yaml`, cut to its status): what it can hold and what it offers.
_NODE_STATUS_KEYS = {"allocatable", "capacity", "nodeInfo", "daemonEndpoints"}


# A NodeCondition (kubernetes/api core/v1 types.go, 1.0-1.31): only a node's conditions carry a heartbeat time (a
# pod's have lastProbeTime), so one pasted alone, or a `conditions:` list of them, is a Node's status.
_NODE_CONDITION_KEYS = {"type", "status", "lastHeartbeatTime"}


def _node_conditions_piece(data: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    if set(data) >= _NODE_CONDITION_KEYS:
        return "Node", {"status": {"conditions": [data]}}
    rows = as_list(data.get("conditions"))
    if rows and all(isinstance(c, dict) and set(c) >= _NODE_CONDITION_KEYS for c in rows) and len(data) == 1:
        return "Node", {"status": data}
    return None


def _pod_conditions(status: dict[str, Any]) -> bool:
    """A `status:` holding only conditions that carry a probe time: a PodCondition (kubernetes/api core/v1
    types.go), as `kubectl get pod -o yaml` shows a pod whose containers are gone (kubernetes#105467)."""
    rows = as_list(status.get("conditions"))
    return bool(rows) and all(isinstance(c, dict) and {"type", "lastProbeTime"} <= set(c) for c in rows)


def _fragment(data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The kind of a piece of an object pasted without `kind`, and the piece wrapped as that object."""
    keys = set(data)
    if node_piece := _node_conditions_piece(data):
        return node_piece
    status = data.get("status")
    if isinstance(status, dict) and len(set(status) & _NODE_STATUS_KEYS) >= 2 and "metadata" not in keys:
        return "Node", data
    if len(keys & _NODE_STATUS_KEYS) >= 2:
        return "Node", {"status": data}
    if "status" in keys and keys & {"spec", "metadata"}:
        return "Pod", data
    if isinstance(data.get("status"), dict) and set(data["status"]) & _POD_STATUS_KEYS:
        return "Pod", data
    if isinstance(status, dict) and _pod_conditions(status):
        return "Pod", data
    if len(keys & _POD_STATUS_KEYS) >= 1 and ("containerStatuses" in keys or len(keys & _POD_STATUS_KEYS) >= 2
                                            or {"reason", "message"} <= keys):
        return "Pod", {"status": data}
    if len(keys & _CONTAINER_STATUS_KEYS) >= 1 and ("state" in keys or "lastState" in keys):
        return "Pod", {"status": {"containerStatuses": [data]}}
    if keys >= _EVENT_KEYS:
        return "Event", data
    if policy := _policy_piece(data):
        return policy
    if pod := _pod_spec_piece(data):
        return pod
    if "exitCode" in keys and keys <= _TERMINATED_KEYS and keys & {"startedAt", "finishedAt"}:
        return "Pod", {"status": {"containerStatuses": [{"lastState": {"terminated": data}}]}}
    return "", data


# A policy's spec pasted alone (`kubectl get cnp x -o yaml | yq .spec`, a rendered values block): its selector and
# rule sections without the object around them.
_POLICY_SPEC_KEYS = frozenset({"podSelector", "endpointSelector", "nodeSelector", "policyTypes", "ingress", "egress",
                               "ingressDeny", "egressDeny", "description"})
RULES = "_rules"  # the key a bare list of egress rules is kept under (see rule_list)


def _policy_piece(data: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    keys = set(data)
    cilium = bool(keys & {"endpointSelector", "egressDeny", "ingressDeny"}) or _cilium_rules(data.get("egress"))
    if RULES in keys:
        rules = as_list(data[RULES])
        cilium = _cilium_rules(rules)
        return ("CiliumNetworkPolicy" if cilium else "NetworkPolicy",
                {"spec": {"egress": rules, **({} if cilium else {"policyTypes": ["Egress"]})}})
    if keys & {"egress", "egressDeny", "ingress"} and keys <= _POLICY_SPEC_KEYS:
        return ("CiliumNetworkPolicy" if cilium else "NetworkPolicy"), {"spec": data}
    return None


def _pod_spec_piece(data: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """A pod spec pasted without its object (`spec:` with containers and volumes, or the spec's own keys). Only one
    that lists its volumes is read: without them the reader would state the runtime's default /dev/shm for a spec
    that may just have been cut short."""
    spec = as_dict(data.get("spec")) if "spec" in data else data
    if is_pod_spec(spec) and "volumes" in spec:
        return "Pod", {**data, "spec": spec} if "spec" in data else {"spec": spec}
    return None


def _cilium_rules(rules: object) -> bool:
    return any(set(r) & CILIUM_RULE_KEYS for r in as_list(rules) if isinstance(r, dict))


def rule_list(data: object) -> object:
    """A bare list of egress rules (a chart's rendered `egress:` value), kept together as one policy's rules."""
    if isinstance(data, list) and data and all(
            isinstance(r, dict) and r and set(r) <= CILIUM_RULE_KEYS | K8S_RULE_KEYS for r in data):
        return {RULES: data}
    return data


Handler = Callable[[Ctx, dict[str, Any], Loc], None]

_HANDLERS: dict[str, Handler] = {
    "Pod": pod,
    "Node": node,
    "Event": event,
    "EventList": event_list,
    "ResourceQuota": quota,
    "Job": job,
    "PyTorchJob": job,
    "MPIJob": job,
    "TFJob": job,
    "JobSet": job,
    "PodGroup": job,
    "Workload": job,
    "NetworkPolicy": netpol,
    "NetworkPolicyList": netpol_list,
    "CiliumNetworkPolicy": cilium_policy,
    "CiliumClusterwideNetworkPolicy": cilium_policy,
    "HorizontalPodAutoscaler": hpa,
    "Service": lambda ctx, d, loc: k8s_services.service(ctx.sink, d, loc.at),
    "Endpoints": lambda ctx, d, loc: k8s_services.endpoints(ctx.sink, d, loc.at),
    "EndpointSlice": lambda ctx, d, loc: k8s_services.endpoint_slice(ctx.sink, d, loc.at),
    "PersistentVolumeClaim": lambda ctx, d, loc: k8s_services.claim(ctx.sink, d, loc.at),
}


PARSER = Parser(kinds=(ArtifactKind.K8S_OBJECT, ArtifactKind.POD, ArtifactKind.NODE), parse=parse, sniff=sniff)
