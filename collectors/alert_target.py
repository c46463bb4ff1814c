"""What an Alertmanager alert is about: the triage target and the playbooks its name points to."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, Field

from collectors.catalogs.alert_labels import subject_labels
from collectors.catalogs.alert_map import rule_for
from collectors.models import Target
from collectors.parsers.alerts.alert_facts import node_from, target_value
from collectors.validate import InvalidInput, namespace, object_name

# The `source` of the artifact that carries the notification which started an alert's triage (bot/runner/triage.py).
ALERT_SOURCE = "alertmanager"

# Labels that name a workload, best first. The plain `service` and `job` labels usually name the exporter
# that was scraped (kube-state-metrics, node-exporter), so they come last and exporters are skipped.
_WORKLOAD_LABELS = (("deployment", "deployment"), ("statefulset", "statefulset"), ("job_name", "job"),
                    # kube-state-metrics' HPA series: an HPA is named after the workload it scales, as a rule.
                    ("horizontalpodautoscaler", "service"),
                    ("exported_service", "service"), ("app_kubernetes_io_name", "service"), ("app", "service"),
                    ("service", "service"))
# A pod label that names the exporter Prometheus scraped (node-exporter's or dcgm-exporter's own pod), not the
# workload the alert is about: node-level alerts from these carry it, and triaging the exporter helps nobody.
_EXPORTER_POD = re.compile(r"(^|-)(node-exporter|dcgm-exporter|kube-state-metrics)(-|$)")
_EXPORTERS = ("kube-state-metrics", "node-exporter", "dcgm-exporter", "kubelet", "prometheus", "alertmanager",
              "coredns", "kube-dns", "cadvisor")


Scope = Literal["workload", "node", "namespace"]


class AlertTarget(BaseModel):
    target: Target
    symptoms: list[str] = Field(default_factory=list)
    alertname: str = ""
    # What the target is: a workload (or pod) in a namespace, a node (cluster-scoped: namespace None), or a
    # namespace as a whole; None when the labels name nothing to triage.
    scope: Scope | None = None

    @property
    def triageable(self) -> bool:
        return self.scope is not None


def _valid(value: str) -> str | None:
    try:
        return object_name(value)
    except InvalidInput:
        return None


def _workload(labels: Mapping[str, str]) -> str | None:
    for label, kind in _WORKLOAD_LABELS:
        value = _valid(labels.get(label, "").strip())
        if value and not any(value.endswith(e) for e in _EXPORTERS):
            return value if kind == "service" else f"{kind}/{value}"
    return None


def _instance_host(instance: str) -> str | None:
    """The host of a scrape address ("10.0.0.2:9100", "gpu-node-2:9100", "gpu-node-2"), when it can name a node:
    an IPv4 address or a host name. Loopback and IPv6 literals name no node."""
    host = instance.strip()
    if host.count(":") == 1:
        host = host.rsplit(":", 1)[0]
    if not host or ":" in host or host.startswith("[") or host in ("localhost", "127.0.0.1"):
        return None
    return _valid(host)


def _node(labels: Mapping[str, str]) -> tuple[str | None, str | None]:
    """The node an alert is about, from `node`, else dcgm-exporter's `Hostname` (or another node label), else the
    scrape's `instance`; and the instance when the node was read from it (its host is matched to a node's name or
    address when the triage runs)."""
    hit = target_value("node.name", labels)
    if hit is not None and hit[0] != "instance":
        return _valid(node_from(*hit)), None
    instance = labels.get("instance", "").strip()
    host = _instance_host(instance) if instance else None
    return (host, instance) if host else (None, None)


def target_for(labels: Mapping[str, str]) -> AlertTarget:
    """The target an alert's labels describe. Label values are validated: an alert is untrusted input.

    A pod or workload wins (in its namespace, "default" when the alert names none); else a node, which has no
    namespace; else, for the alerts the catalog marks namespace-scoped (ResourceQuotas), the namespace itself. For
    an alert whose rule alert_labels.yaml knows, the labels its scrape added (the exporter's pod, namespace,
    instance) are set aside first."""
    labels = subject_labels(labels)
    ns_hit = target_value("pod.namespace", labels)
    try:
        ns = namespace(ns_hit[1]) if ns_hit else None
    except InvalidInput:
        ns = None
    pod_hit = target_value("pod.name", labels)
    pod = _valid(pod_hit[1]) if pod_hit else None
    if pod and _EXPORTER_POD.search(pod):
        pod, ns = None, None  # the exporter's pod and namespace; the node labels say what the alert is about
    node, instance = _node(labels)
    alertname = labels.get("alertname", "")
    rule = rule_for(alertname, labels) if alertname else None
    symptoms = [rule.symptom] if rule is not None and rule.symptom else []
    workload = _workload(labels) or (f"pod/{pod}" if pod else None)
    if workload:
        # A workload's `instance` is whatever Prometheus scraped (kube-state-metrics, the app): not its node.
        on = node if instance is None else None
        target, scope = Target(namespace=ns or "default", service=workload, pod=pod, node=on), "workload"
    elif node:
        target, scope = Target(service=f"node/{node}", node=node, instance=instance), "node"
    elif ns and rule is not None and rule.scope == "namespace":
        target, scope = Target(namespace=ns, service=f"namespace/{ns}"), "namespace"
    else:
        target, scope = Target(namespace=ns), None
    return AlertTarget(target=target, symptoms=symptoms, alertname=alertname, scope=scope)
