"""What an Alertmanager alert is about: the triage target and the playbooks its name points to."""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel, Field

from collectors.catalogs.alert_map import symptom_for
from collectors.models import Target
from collectors.parsers.alertmanager import node_from, target_value
from collectors.validate import InvalidInput, namespace, object_name

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


class AlertTarget(BaseModel):
    target: Target
    symptoms: list[str] = Field(default_factory=list)
    alertname: str = ""


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


def target_for(labels: Mapping[str, str]) -> AlertTarget:
    """The target an alert's labels describe. Label values are validated: an alert is untrusted input."""
    ns_hit = target_value("pod.namespace", labels)
    try:
        ns = namespace(ns_hit[1]) if ns_hit else None
    except InvalidInput:
        ns = None
    pod_hit = target_value("pod.name", labels)
    pod = _valid(pod_hit[1]) if pod_hit else None
    if pod and _EXPORTER_POD.search(pod):
        pod, ns = None, None  # the exporter's pod and namespace; the node labels say what the alert is about
    node_hit = target_value("node.name", labels)
    node = _valid(node_from(*node_hit)) if node_hit else None
    service = _workload(labels) or (f"pod/{pod}" if pod else None) or (f"node/{node}" if node else None)
    alertname = labels.get("alertname", "")
    symptom = symptom_for(alertname, labels) if alertname else None
    return AlertTarget(target=Target(namespace=ns or "default", service=service, pod=pod, node=node),
                       symptoms=[symptom] if symptom else [], alertname=alertname)
