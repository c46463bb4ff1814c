"""The scheduler's FailedScheduling message, normalised: which reasons rule nodes out and how many nodes each.

A pure string classifier shared by the events, object, describe and kubelet parsers and the line signals (split
from k8s_messages.py, which keeps the other kubelet and controller messages).
"""

from __future__ import annotations

import re
from functools import lru_cache

from collectors.lazy_regex import LazyPattern

_NODES_TOTAL = LazyPattern(r"\b\d+/(\d+) nodes (?:are|is) available")
_INSUFFICIENT = LazyPattern(r"[Ii]nsufficient ([\w.\-/]+)")
_BRACED_TAINT = LazyPattern(r"taints? \{([^}]*)\}")
_BARE_TAINT = LazyPattern(r"untolerated taint|taints?\b[^.,;]{0,60}?didn'?t tolerate", re.I)
_SYSTEM_TAINTS = {
    "node.kubernetes.io/memory-pressure": "node-pressure",
    "node.kubernetes.io/disk-pressure": "node-pressure",
    "node.kubernetes.io/pid-pressure": "node-pressure",
    "node.kubernetes.io/unschedulable": "unschedulable-node",
    "node.kubernetes.io/not-ready": "node-not-ready",
    "node.kubernetes.io/unreachable": "node-not-ready",
    "node.kubernetes.io/network-unavailable": "node-not-ready",
}
_SCHEDULING_PATTERNS: list[tuple[LazyPattern, str]] = [
    # Before 1.8 the scheduler named its predicates: "1 PodToleratesNodeTaints, 3 MatchNodeSelector".
    (LazyPattern(r"didn'?t match (?:Pod's )?node (?:affinity|selector)|MatchNodeSelector", re.I), "node-affinity"),
    (LazyPattern(r"PodToleratesNodeTaints|TaintToleration"), "untolerated-taint"),
    (LazyPattern(r"\bNodeUnschedulable\b"), "unschedulable-node"),
    (LazyPattern(r"CheckNode(?:Memory|Disk|PID)Pressure|NodeUnder(?:Memory|Disk|PID)Pressure"), "node-pressure"),
    (LazyPattern(r"\bNodeNotReady\b|CheckNodeCondition"), "node-not-ready"),
    (LazyPattern(r"PodFitsHostPorts"), "host-port"),
    (LazyPattern(r"NoVolumeZoneConflict|VolumeNodeAffinityConflict"), "volume-node-affinity"),
    (LazyPattern(r"Max\w*VolumeCount"), "volume-limit"),
    (LazyPattern(r"didn'?t match pod (?:anti-)?affinity|didn'?t satisfy existing pods anti-affinity"
                 r"|MatchInterPodAffinity", re.I), "pod-affinity"),
    (LazyPattern(r"topology spread constraints", re.I), "topology-spread"),
    (LazyPattern(r"unbound (?:immediate )?PersistentVolumeClaims|persistentvolumeclaim \"[^\"]*\" not found"
                 r"|PersistentVolumeClaim is not bound", re.I), "unbound-pvc"),
    (LazyPattern(r"volume node affinity conflict", re.I), "volume-node-affinity"),
    (LazyPattern(r"exceed max volume count", re.I), "volume-limit"),
    (LazyPattern(r"Too many pods", re.I), "too-many-pods"),
    # Volcano's predicates plugin for the node's max-pods (pkg/scheduler/api/unschedule_info.go
    # NodePodNumberExceeded, v1.5 on).
    (LazyPattern(r"node\(s\) pod number exceeded", re.I), "too-many-pods"),
    (LazyPattern(r"(?:were|was|is) unschedulable", re.I), "unschedulable-node"),
    (LazyPattern(r"had condition: \[(?:Memory|Disk|PID)Pressure\]|had (?:memory|disk|pid) pressure", re.I),
     "node-pressure"),
    (LazyPattern(r"(?:were|was) not ready|had condition: \[(?:Ready|NotReady)\]", re.I), "node-not-ready"),
    (LazyPattern(r"didn'?t have free ports", re.I), "host-port"),
    (LazyPattern(r"exceeded quota|insufficient (?:unused )?quota", re.I), "quota-exceeded"),
    (LazyPattern(r"Preemption is not helpful|No preemption victims found|No victims found", re.I),
     "preemption-not-helpful"),
    # The KAI scheduler (NVIDIA/KAI-Scheduler, run:ai's before it) names the resource in its own words:
    # pkg/scheduler/api/common_info (NewInsufficientResourceError, the job fit errors), v0.2-v0.9.
    (LazyPattern(r"didn'?t have enough resources?: GPUs\b"), "insufficient-gpu"),
    (LazyPattern(r"didn'?t have enough resources?: CPU cores\b"), "insufficient-cpu"),
    (LazyPattern(r"didn'?t have enough resources?: memory\b"), "insufficient-memory"),
    # NodeName (1.19+; "hostname" before): the pod names its node, so no other node can take it.
    (LazyPattern(r"didn'?t match the requested (?:node ?name|hostname)", re.I), "node-affinity"),
    # CheckNodeCondition before 1.17: a node out of disk was a node under disk pressure.
    (LazyPattern(r"(?:were|was) out of disk space", re.I), "node-pressure"),
    # VolumeBinding: no PV to bind the claim to on these nodes, no storage capacity for it, or its PV is gone.
    (LazyPattern(r"didn'?t find available persistent volumes to bind|did not have enough free storage"
                 r"|bound to non-existent pv", re.I), "unbound-pvc"),
    (LazyPattern(r"had no available volume zone", re.I), "volume-node-affinity"),
    # VolumeRestrictions: the volume is already in use on the node by another pod (disk conflict, ReadWriteOncePod).
    (LazyPattern(r"had no available disk|ReadWriteOncePod access mode", re.I), "volume-conflict"),
]


def scheduling_reasons(message: str) -> list[str]:
    """Normalised reasons in a FailedScheduling message, in the order the message gives them."""
    return list(_scheduling_reasons(message))


@lru_cache(maxsize=4096)
def _scheduling_reasons(message: str) -> tuple[str, ...]:
    # Cached: a busy cluster repeats the same scheduler message thousands of times.
    found: list[tuple[int, str]] = []
    for m in _INSUFFICIENT.finditer(message):
        found.append((m.start(), _insufficient(m.group(1).rstrip("."))))
    for m in _BRACED_TAINT.finditer(message):
        # A system taint names the node's state as well; it is still a taint the pod does not tolerate.
        key = m.group(1).split(":", 1)[0].split("=", 1)[0].strip()
        if key in _SYSTEM_TAINTS:
            found.append((m.start(), _SYSTEM_TAINTS[key]))
        found.append((m.start(), "untolerated-taint"))
    residue = _BRACED_TAINT.sub(lambda m: " " * len(m.group(0)), message)
    for m in _BARE_TAINT.finditer(residue):
        found.append((m.start(), "untolerated-taint"))
    for rx, reason in _SCHEDULING_PATTERNS:
        if hit := rx.search(message):
            found.append((hit.start(), reason))
    return tuple(dict.fromkeys(reason for _, reason in sorted(found)))


def _insufficient(resource: str) -> str:
    if resource == "cpu":
        return "insufficient-cpu"
    if resource == "memory":
        return "insufficient-memory"
    if resource == "pods":
        return "too-many-pods"
    # GPU counts, not GPU memory or shares sold by scheduler extenders (aliyun.com/gpu-mem). Kubernetes 1.3-1.9
    # named its own GPU resource alpha.kubernetes.io/nvidia-gpu (pkg/api/types.go ResourceNvidiaGPU, dropped in 1.10).
    # Other vendors' device plugins count whole GPUs too: amd.com/gpu (ROCm/k8s-device-plugin) ends in /gpu; Intel's
    # names the kernel driver (intel/intel-device-plugins-for-kubernetes cmd/gpu_plugin: gpu.intel.com/i915, 0.17
    # on, and gpu.intel.com/xe, 0.30 on), its millicores and memory.max being shares, not GPUs.
    low = resource.lower()
    if (low.endswith(("/gpu", "/nvidia-gpu")) or "/mig-" in resource or resource.endswith("gpu-count")
            or low in ("gpu.intel.com/i915", "gpu.intel.com/xe")):
        return "insufficient-gpu"
    return "insufficient-other"


# The FitError lists "<count> <reason>" pairs after "N/M nodes are available:" (1.8 and later); before 1.8 the
# predicate summary put the count after the name: "Insufficient cpu (3), PodToleratesNodeTaints (1)".
_COUNTED_FROM = LazyPattern(r"nodes? (?:are|is) available: |match all of the (?:following )?predicates:+ ?"
                            r"|fit failure summary on nodes ?: ?")
# 1.2-1.4 gave one line per node instead: "fit failure on node (node-1): Insufficient cpu".
_PER_NODE = LazyPattern(r"fit failure on node \([^)]*\): ?([^\n]*?)(?= fit failure on node \(|\n|$)")
_COUNT_FIRST = LazyPattern(r"(?:^|, )(\d+) ")
_COUNT_AFTER = LazyPattern(r"\s*(.+) \((\d+)\)\.?\s*")
# A reason list is short; a pasted "message" can be a 10 MB line. Counting reads no further than this.
_MAX_COUNTED = 8192
# The preemption summary (1.23+) repeats the node count for its own verdicts; it says nothing about filters.
_PREEMPTION_PART = LazyPattern(r"\.? ?preemption: ")


# A node-role taint keeps workloads off the control plane (kubeadm's node-role.kubernetes.io/master before 1.24,
# control-plane from 1.20), Rancher's etcd and controlplane roles, and OpenShift's infra nodes: a pod ruled out
# there is the cluster working as set up, not the reason it waits.
_ROLE_TAINT = LazyPattern(r"taints? \{node-role\.kubernetes\.io/(?:master|control-plane|controlplane|etcd|infra)\b")


def reason_node_counts(message: str, by_design: bool = True) -> list[tuple[str, int]]:
    """(normalised reason, nodes it rules out) from a FitError message, the most nodes first (ties keep the
    message's order). Empty when the message gives no counts. With `by_design` False, the nodes ruled out by a
    node-role taint (control plane, etcd, infra) are left out of the counts."""
    start = _COUNTED_FROM.search(message)
    if start is None:
        return _per_node_counts(message)
    body = _PREEMPTION_PART.split(message[start.end():start.end() + _MAX_COUNTED], maxsplit=1)[0]
    pairs: list[tuple[str, int]] = []
    marks = list(_COUNT_FIRST.finditer(body))
    if marks:
        for i, mark in enumerate(marks):
            end = marks[i + 1].start() if i + 1 < len(marks) else len(body)
            pairs.append((body[mark.end():end], int(mark.group(1))))
    else:
        pairs = [(after.group(1), int(after.group(2))) for part in body.split(", ")
                 if (after := _COUNT_AFTER.fullmatch(part)) is not None]
    counts: dict[str, int] = {}
    for text, count in pairs:
        if not by_design and _ROLE_TAINT.search(text):
            continue
        for reason in _counted_reasons(text):
            counts[reason] = counts.get(reason, 0) + count
    total = nodes_total(message)
    if total:
        counts = {reason: min(count, total) for reason, count in counts.items()}
    return sorted(counts.items(), key=lambda item: -item[1])


def _counted_reasons(text: str) -> list[str]:
    """The reasons one "<count> <reason>" part rules its nodes out for. A taint the node controller or the kubelet
    put on for the node's state (node.kubernetes.io/disk-pressure, unreachable, not-ready, ...) counts as that
    state alone: the nodes are out because they are under pressure or unreachable, not because of a taint someone
    chose, so the state leads (scheduling.leading_reasons) while scheduling.reasons still names the taint."""
    reasons = scheduling_reasons(text)
    taints = [m.group(1).split(":", 1)[0].split("=", 1)[0].strip() for m in _BRACED_TAINT.finditer(text)]
    if taints and all(key in _SYSTEM_TAINTS for key in taints) and not _BARE_TAINT.search(
            _BRACED_TAINT.sub(" ", text)) and not _SCHEDULING_TAINT_NAMES.search(text):
        return [reason for reason in reasons if reason != "untolerated-taint"]
    return reasons


# Before 1.8 the predicate named the taint check itself: such a part says nothing about which taint it was.
_SCHEDULING_TAINT_NAMES = LazyPattern(r"PodToleratesNodeTaints|TaintToleration")


def _per_node_counts(message: str) -> list[tuple[str, int]]:
    counts: dict[str, int] = {}
    for m in _PER_NODE.finditer(message[:_MAX_COUNTED * 8]):
        for reason in _counted_reasons(m.group(1)):
            counts[reason] = counts.get(reason, 0) + 1
    return sorted(counts.items(), key=lambda item: -item[1])


def scheduling_facts(message: str) -> list[tuple[str, object]]:
    """Every scheduling.* fact one FailedScheduling message (or PodScheduled condition) gives, by name."""
    out: list[tuple[str, object]] = []
    if (total := nodes_total(message)) is not None:
        out.append(("scheduling.nodes_total", total))
    if reasons := scheduling_reasons(message):
        out.append(("scheduling.reasons", reasons))
    if counted := reason_node_counts(message):
        out.append(("scheduling.reason_nodes", [f"{reason}={count}" for reason, count in counted]))
        # The nodes kept for the control plane or infrastructure are off limits to workloads by design; the
        # reason that leads is the one that rules out the most of the nodes the pod was meant for.
        weighed = reason_node_counts(message, by_design=False) or counted
        top = weighed[0][1]
        out.append(("scheduling.leading_reasons", [reason for reason, count in weighed if count == top]))
    return out


def nodes_total(message: str) -> int | None:
    m = _NODES_TOTAL.search(message)
    if m:
        return int(m.group(1))
    return 0 if "no nodes available to schedule pods" in message else None
