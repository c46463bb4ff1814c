"""Evidence sources as a trainee asks for them, what each costs on the drill clock, and which facts each can show.

A trainee does not ask for "artifact kind prometheus-query"; they ask for "metrics" or "the kernel log". Each
source groups the artifact kinds a person gets from one place, and costs what getting it costs during a real
incident: `kubectl describe` is a minute, a kernel log over SSH is three.
"""

from __future__ import annotations

from dataclasses import dataclass

from collectors.models import ArtifactKind

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
    Source("objects", "cluster objects", (K.K8S_OBJECT,), 60,
           "kubectl get job/hpa/resourcequota/networkpolicy/podgroup -o yaml", "workload",
           ("object", "k8s-objects", "k8s-object", "cluster-objects", "cluster objects", "manifests")),
    Source("node", "node", (K.DESCRIBE_NODE, K.NODE), 60, "kubectl describe node", "node",
           ("nodes", "describe-node", "describe node")),
    Source("app-logs", "app logs", (K.CONTAINER_LOG,), 60, "kubectl logs (and --previous)", "application",
           ("logs", "app", "container-log", "container logs", "app log", "application logs")),
    Source("nccl-log", "NCCL log", (K.NCCL_LOG,), 120, "kubectl logs of every rank with NCCL_DEBUG=INFO",
           "application", ("nccl", "nccl logs", "nccl log", "rank logs")),
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


# Which sources can show a fact, by longest matching name prefix. Several sources may carry one fact (pod status
# and events both show FailedScheduling); the first is the most direct. Kept by hand rather than learnt from
# recordings, so a fact no recording happens to carry yet still points somewhere sensible.
FACT_SOURCES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("alert.", ("alerts",)),
    ("pod.", ("pod-status",)),
    ("pods.", ("pod-status",)),
    ("container.liveness_killed", ("pod-status", "kubelet-log", "events")),
    ("container.waiting", ("pod-status", "kubelet-log")),
    ("container.restart_backoff", ("pod-status", "events", "kubelet-log")),
    ("pod.missing_refs", ("pod-status", "events", "kubelet-log")),
    ("container.", ("pod-status",)),
    ("probe.failures", ("pod-status", "events", "kubelet-log")),
    ("probe.", ("pod-status",)),
    ("scheduling.", ("pod-status", "events")),
    ("quota.", ("objects", "events")),
    ("gang.", ("objects",)),
    ("events.", ("events", "pod-status", "node")),
    ("eviction.", ("pod-status", "kubelet-log", "events")),
    ("image.", ("events", "pod-status")),
    ("volume.", ("events", "pod-status", "kubelet-log")),
    ("pvc.", ("objects", "events")),
    ("sandbox.", ("events", "pod-status", "kubelet-log")),
    ("endpoints.", ("objects",)),
    ("service.", ("objects",)),
    ("proxy.", ("node",)),
    ("kubelet.", ("kubelet-log",)),
    ("http.", ("metrics",)),
    ("rollout.", ("events",)),
    ("node.conditions", ("node", "kubelet-log")),
    ("node.not_ready_reasons", ("node", "kubelet-log", "events")),
    ("node.memory_available_ratio", ("metrics",)),
    ("node.cpu_steal_ratio", ("metrics",)),
    ("node.", ("node",)),
    ("netpol.", ("objects",)),
    ("hpa.", ("objects",)),
    ("gpu.fallen_off_bus", ("kernel-log",)),
    ("gpu.capacity_total", ("node",)),
    ("gpu.allocatable_total", ("node",)),
    ("gpu.free_total", ("node",)),
    ("gpu.max_free_per_node", ("node",)),
    ("gpu.unhealthy_count", ("node",)),
    ("gpu.visible_count", ("app-logs", "nccl-log")),
    ("gpu.", ("metrics",)),
    ("xid.codes", ("kernel-log", "metrics")),
    ("xid.primary_codes", ("kernel-log", "metrics")),
    ("xid.", ("kernel-log",)),
    ("kernel.oom_kill", ("kernel-log", "node")),  # a node's events record system OOMs
    ("kernel.oom_victims", ("kernel-log", "node")),
    ("kernel.", ("kernel-log",)),
    ("conntrack.table_full", ("kernel-log",)),
    ("conntrack.", ("conntrack", "metrics")),
    ("cpu.throttled_ratio", ("cgroup", "metrics")),
    ("cpu.busy_ratio", ("cgroup", "metrics")),
    ("cpu.iowait_ratio", ("cgroup", "metrics")),
    ("cpu.", ("cgroup",)),
    ("nccl.socket_ifname", ("nccl-log", "pod-status")),
    ("nccl.ib_hca", ("pod-status", "nccl-log")),
    ("nccl.", ("nccl-log",)),
    ("dist.joined_count", ("nccl-log",)),
    ("dist.world_sizes", ("pod-status", "nccl-log")),
    ("dist.", ("pod-status",)),
    ("cuda.", ("app-logs",)),
    ("memory.", ("metrics",)),
    ("latency.", ("metrics",)),
    ("traffic.", ("metrics",)),
    ("dns.errors", ("app-logs",)),
    ("dns.", ("metrics",)),
    ("net.", ("node",)),
    ("app.", ("app-logs",)),
)


def sources_for_fact(name: str) -> tuple[str, ...]:
    best: tuple[str, tuple[str, ...]] | None = None
    for prefix, sources in FACT_SOURCES:
        if (name == prefix or name.startswith(prefix)) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, sources)
    return best[1] if best else ()
