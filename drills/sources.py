"""Evidence sources as a trainee asks for them, what each costs on the drill clock, and which facts each can show.

A trainee does not ask for "artifact kind prometheus-query"; they ask for "metrics" or "the kernel log". Each
source groups the artifact kinds a person gets from one place, and costs what getting it costs during a real
incident: `kubectl describe` is a minute, a kernel log over SSH is three.
"""

from __future__ import annotations

from dataclasses import dataclass

from collectors.models import ArtifactKind
from collectors.vocabulary import VOCABULARY

# Forming and discussing a hypothesis takes time too; charging it keeps "propose everything" visible on the clock.
PROPOSAL_COST_SECONDS = 30


@dataclass(frozen=True)
class Source:
    id: str
    label: str
    kinds: tuple[ArtifactKind, ...]
    cost_seconds: int
    how: str  # what on-call would run, so the cost makes sense
    layer: str  # coarse layer, for the first hint
    aliases: tuple[str, ...] = ()


def _kinds(*names: str) -> tuple[ArtifactKind, ...]:
    """Kinds by value, skipping any this version of the evidence model does not define yet."""
    known = {k.value: k for k in ArtifactKind}
    return tuple(known[n] for n in names if n in known)


K = ArtifactKind
SOURCES: tuple[Source, ...] = (
    Source("alerts", "alerts", (K.ALERTMANAGER, K.ALERT_TEXT), 30, "open the alert in Alertmanager or chat",
           "telemetry", ("alert", "alertmanager", "page")),
    Source("pod-status", "pod status", (K.DESCRIBE_POD, K.POD, K.POD_TABLE), 60,
           "kubectl describe pod / get pods (-o json)",
           "workload", ("pod", "pods", "describe-pod", "describe pod", "status")),
    Source("events", "events", (K.EVENTS,), 45, "kubectl get events", "workload", ("event",)),
    Source("objects", "cluster objects", (K.K8S_OBJECT, K.DESCRIBE_SERVICE, K.HPA, K.ENDPOINTS_TABLE), 60,
           "kubectl get job/hpa/resourcequota/networkpolicy/podgroup -o yaml, kubectl describe service, "
           "kubectl get endpoints", "workload",
           ("object", "k8s-objects", "k8s-object", "cluster-objects", "cluster objects", "manifests")),
    Source("node", "node", (K.DESCRIBE_NODE, K.NODE, K.NODE_TABLE), 60, "kubectl describe node / get nodes", "node",
           ("nodes", "describe-node", "describe node")),
    Source("app-logs", "app logs", (K.CONTAINER_LOG, K.ACCESS_LOG), 60, "kubectl logs (and --previous)", "application",
           ("logs", "app", "container-log", "container logs", "app log", "application logs")),
    Source("nccl-log", "NCCL log", (K.NCCL_LOG,), 120, "kubectl logs of every rank with NCCL_DEBUG=INFO",
           "application", ("nccl", "nccl logs", "nccl log", "rank logs")),
    # Copying every rank's dump off the nodes (or from where the pods wrote them) takes a few minutes.
    Source("flight-recorder", "Flight Recorder dumps", (K.FLIGHT_RECORDER,), 180,
           "each rank's nccl_trace_rank_<r> (TORCH_NCCL_DUMP_ON_TIMEOUT=1)", "application",
           ("flight recorder", "fr", "dumps", "nccl trace", "fr trace")),
    # NVML snapshots from the node agent are GPU telemetry like DCGM's, read in about the same time.
    Source("metrics", "metrics (Prometheus, DCGM)",
           _kinds("prometheus-query", "prometheus-metrics", "nvml", "nvidia-smi"), 90,
           "PromQL queries, exporter scrapes (dcgm-exporter, node-exporter), NVML", "telemetry",
           ("prometheus", "dcgm", "promql", "metric", "grafana", "nvml", "nvidia-smi")),
    Source("cgroup", "cgroup stats", (K.CPU_STAT, K.TOP), 120,
           "kubectl exec ... cat /sys/fs/cgroup/cpu.stat (or top)", "node",
           ("cpu.stat", "cpu-stat", "cgroups", "cpu stat")),
    Source("kubelet-log", "kubelet log", (K.KUBELET_LOG,), 180, "journalctl -u kubelet on the node (SSH)", "node",
           ("kubelet", "kubelet log")),
    Source("kernel-log", "kernel log", (K.KERNEL_LOG,), 180, "dmesg / journalctl -k on the node (SSH)", "node",
           ("kernel", "dmesg", "kmsg", "journalctl", "kernel log")),
    # Text with no structured kind: what someone pasted into the channel (a quoted message, notes, a fragment).
    Source("notes", "pasted notes", (K.TEXT,), 30, "read what was pasted in the channel", "telemetry",
           ("paste", "pasted", "text", "chat")),
    Source("conntrack", "conntrack", (K.CONNTRACK_STATS,), 180, "conntrack -S on the node (SSH)", "node",
           ("conntrack-stats", "nf_conntrack", "conntrack stats")),
    Source("net-links", "network interfaces", (K.NET_LINKS,), 120, "ip -d link on the node (SSH, or the node agent)",
           "node", ("ip link", "ifconfig", "mtu", "interfaces", "net links")),
    Source("shm", "/dev/shm usage", (K.DF,), 60, "kubectl exec ... -- df -h /dev/shm (or the node agent)", "pod",
           ("df", "shm", "dev/shm", "shared memory")),
)
BY_ID: dict[str, Source] = {s.id: s for s in SOURCES}
_BY_KIND: dict[ArtifactKind, str] = {kind: s.id for s in SOURCES for kind in s.kinds}
_BY_NAME: dict[str, str] = {name: s.id for s in SOURCES for name in (s.id, s.label.lower(), *s.aliases)}

LAYERS = {
    "workload": "the workload layer (pod, events, controller objects)",
    "node": "the node layer (node object, kubelet, kernel, cgroups)",
    "telemetry": "the telemetry layer (alerts, Prometheus, DCGM)",
    "application": "the application layer (container and rank logs)",
}


def source_of_kind(kind: ArtifactKind | str) -> str:
    """Every artifact kind belongs to exactly one source (tests hold this over ArtifactKind)."""
    return _BY_KIND[ArtifactKind(kind)]


def resolve_source(text: str) -> Source | None:
    """A source from what a trainee typed: its id, label or a common alias, case and spacing forgiven."""
    key = " ".join(text.strip().lower().split())
    found = _BY_NAME.get(key) or _BY_NAME.get(key.replace(" ", "-")) or _BY_NAME.get(key.replace("-", " "))
    return BY_ID[found] if found else None


def label(source_id: str) -> str:
    return BY_ID[source_id].label if source_id in BY_ID else source_id


def sources_for_fact(name: str) -> tuple[str, ...]:
    """The sources that can show a fact, most direct first: from the kinds of evidence that produce it
    (collectors/vocab/producers.yaml), each mapped to the source a trainee asks for."""
    spec = VOCABULARY.get(name)
    if spec is None:
        return ()
    # Pasted notes are what someone happened to write in the channel, not a source a trainee can ask for.
    return tuple(dict.fromkeys(s for kind in spec.kinds if (s := source_of_kind(kind)) != "notes"))
