"""Which parser reads which kind of artifact."""

from __future__ import annotations

from collections.abc import Callable

from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers import (
    alert_text,
    alertmanager,
    conntrack,
    container_log,
    cpu_stat,
    describe_node,
    describe_pod,
    events,
    k8s_objects,
    kernel,
    kubelet,
    nccl,
    nvml,
    prometheus_api,
    prometheus_text,
)

Parser = Callable[[Artifact], ParseResult]

PARSERS: dict[ArtifactKind, Parser] = {
    ArtifactKind.DESCRIBE_POD: describe_pod.parse,
    ArtifactKind.DESCRIBE_NODE: describe_node.parse,
    ArtifactKind.POD: k8s_objects.parse,
    ArtifactKind.NODE: k8s_objects.parse,
    ArtifactKind.K8S_OBJECT: k8s_objects.parse,
    ArtifactKind.EVENTS: events.parse,
    ArtifactKind.KUBELET_LOG: kubelet.parse,
    ArtifactKind.KERNEL_LOG: kernel.parse,
    ArtifactKind.CONTAINER_LOG: container_log.parse,
    ArtifactKind.CONNTRACK_STATS: conntrack.parse,
    ArtifactKind.CPU_STAT: cpu_stat.parse,
    ArtifactKind.NCCL_LOG: nccl.parse,
    ArtifactKind.PROMETHEUS_METRICS: prometheus_text.parse,
    ArtifactKind.PROMETHEUS_QUERY: prometheus_api.parse,
    ArtifactKind.ALERTMANAGER: alertmanager.parse,
    ArtifactKind.ALERT_TEXT: alert_text.parse,
    ArtifactKind.NVML: nvml.parse,
}

# Sniffers score how much a text looks like each kind (0-100). Object JSON/YAML is one sniffer for
# three kinds; the parser dispatches on the object's own `kind`.
Sniffer = Callable[[str], int]

SNIFFERS: dict[ArtifactKind, Sniffer] = {
    ArtifactKind.DESCRIBE_POD: describe_pod.sniff,
    ArtifactKind.DESCRIBE_NODE: describe_node.sniff,
    ArtifactKind.K8S_OBJECT: k8s_objects.sniff,
    ArtifactKind.EVENTS: events.sniff,
    ArtifactKind.KUBELET_LOG: kubelet.sniff,
    ArtifactKind.KERNEL_LOG: kernel.sniff,
    ArtifactKind.CONTAINER_LOG: container_log.sniff,
    ArtifactKind.CONNTRACK_STATS: conntrack.sniff,
    ArtifactKind.CPU_STAT: cpu_stat.sniff,
    ArtifactKind.NCCL_LOG: nccl.sniff,
    ArtifactKind.PROMETHEUS_METRICS: prometheus_text.sniff,
    ArtifactKind.PROMETHEUS_QUERY: prometheus_api.sniff,
    ArtifactKind.ALERTMANAGER: alertmanager.sniff,
    ArtifactKind.ALERT_TEXT: alert_text.sniff,
    ArtifactKind.NVML: nvml.sniff,
}

# Line-oriented logs can be interleaved in one paste; each line is claimed by at most one kind.
LINE_CLAIMS: list[tuple[ArtifactKind, Callable[[str], bool]]] = [
    (ArtifactKind.KERNEL_LOG, kernel.claims_line),
    (ArtifactKind.KUBELET_LOG, kubelet.claims_line),
    (ArtifactKind.NCCL_LOG, nccl.claims_line),
    (ArtifactKind.CONTAINER_LOG, container_log.claims_line),
]


def parse_artifact(artifact: Artifact) -> ParseResult:
    """Parse one artifact. Parsers do not raise; this guard only keeps a bug from failing a triage."""
    parser = PARSERS.get(artifact.kind)
    if parser is None:
        return ParseResult(problems=[f"no parser for kind {artifact.kind}"])
    try:
        return parser(artifact)
    except Exception as err:
        return ParseResult(problems=[f"parser for {artifact.kind} failed: {type(err).__name__}: {err}"])
