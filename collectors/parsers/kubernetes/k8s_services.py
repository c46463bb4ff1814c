"""Service, Endpoints, EndpointSlice and PersistentVolumeClaim objects into service and volume facts.

Handlers for the object parser (k8s_objects), kept apart because they answer other questions: does a
Service have anything behind it, and is a claim a pod needs on its way out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from collectors.k8s_values import as_dict, as_list, as_str
from collectors.parsers.kubernetes.k8s_common import DedupSink, subject_of
from collectors.port_conventions import off_convention

# loc.at of the object parser: the line of a path of keys (or (key, value) pairs) inside the object.
At = Callable[..., int]


def _subject(kind: str, d: dict[str, Any]) -> str | None:
    meta = as_dict(d.get("metadata"))
    name = as_str(meta.get("name"))
    return subject_of(kind, name, as_str(meta.get("namespace"))) if name else None


def service(sink: DedupSink, d: dict[str, Any], at: At) -> None:
    spec = as_dict(d.get("spec"))
    if as_str(spec.get("type")) == "ExternalName":
        return  # a DNS alias: it has no selector and no endpoints by design
    subject = _subject("service", d)
    selector = {str(k): as_str(v) for k, v in as_dict(spec.get("selector")).items()}
    line = at("spec", "selector") if "selector" in spec else at("spec")
    sink.add("service.has_selector", bool(selector), line, subject=subject)
    if selector:
        sink.add("service.selector", ",".join(f"{k}={v}" for k, v in sorted(selector.items())), line,
                 subject=subject)
    # targetPort defaults to port; a name or a number, joined with the pods' ports (collectors/joins.py).
    targets = [as_str(p.get("targetPort", p.get("port"))) for p in map(as_dict, as_list(spec.get("ports")))]
    if targets := [t for t in targets if t]:
        sink.add("service.target_ports", list(dict.fromkeys(targets)), at("spec", "ports"), subject=subject)
    off = [as_str(p.get("targetPort")) for p in map(as_dict, as_list(spec.get("ports")))
           if off_convention(as_str(p.get("name")), as_str(p.get("port")), as_str(p.get("targetPort")))]
    if off:
        sink.add("service.target_ports_off_convention", list(dict.fromkeys(off)), at("spec", "ports"),
                 subject=subject)


def pod_shape(sink: DedupSink, meta: dict[str, Any], spec: dict[str, Any], at: At, subject: str | None,
              *prefix: str) -> None:
    """A pod's (or a pod template's) labels and declared container ports, as `k=v` and `number/name`."""
    labels = [f"{k}={as_str(v)}" for k, v in sorted(as_dict(meta.get("labels")).items())]
    if labels:
        sink.add("pod.labels", labels, at(*prefix, "metadata", "labels"), subject=subject)
    ports = [f"{as_str(p.get('containerPort'))}/{as_str(p.get('name')) or '-'}"
             for c in map(as_dict, as_list(spec.get("containers")))
             for p in map(as_dict, as_list(c.get("ports"))) if as_str(p.get("containerPort"))]
    if spec.get("containers"):
        # Read even when empty: containers that declare no port are a fact a named targetPort can be judged on.
        sink.add("pod.container_ports", list(dict.fromkeys(ports)),
                 at(*prefix, "spec", "containers", "ports") if ports else at(*prefix, "spec", "containers"),
                 subject=subject)


def endpoints(sink: DedupSink, d: dict[str, Any], at: At) -> None:
    """core/v1 Endpoints: addresses are ready, notReadyAddresses are not; no subsets means nothing behind it."""
    subsets = [as_dict(s) for s in as_list(d.get("subsets"))]
    ready = sum(len(as_list(s.get("addresses"))) for s in subsets)
    not_ready = sum(len(as_list(s.get("notReadyAddresses"))) for s in subsets)
    line = at("subsets") if "subsets" in d else at("metadata", "name")
    subject = _subject("endpoints", d)
    sink.add("endpoints.ready", ready, line, subject=subject)
    sink.add("endpoints.not_ready", not_ready, line, subject=subject)


def endpoint_slice(sink: DedupSink, d: dict[str, Any], at: At) -> None:
    """discovery.k8s.io/v1: an endpoint without conditions.ready counts as ready, as kube-proxy treats it."""
    items = [as_dict(e) for e in as_list(d.get("endpoints"))]
    ready = sum(1 for e in items if as_dict(e.get("conditions")).get("ready") is not False)
    line = at("endpoints") if "endpoints" in d else at("metadata", "name")
    subject = _subject("endpointslice", d)
    sink.add("endpoints.ready", ready, line, subject=subject)
    sink.add("endpoints.not_ready", len(items) - ready, line, subject=subject)


def claim(sink: DedupSink, d: dict[str, Any], at: At) -> None:
    """A claim with a deletionTimestamp is Terminating: kubernetes.io/pvc-protection holds it while in use."""
    meta = as_dict(d.get("metadata"))
    deleting = bool(as_str(meta.get("deletionTimestamp")))
    line = at("metadata", "deletionTimestamp") if deleting else at("metadata", "name")
    sink.add("pvc.terminating", deleting, line, subject=_subject("persistentvolumeclaim", d))
