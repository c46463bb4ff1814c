"""Spotting kubelet log lines in a paste (journal lines and the kubelet's own klog source files), apart from its
parser (collectors/parsers/node/kubelet.py)."""

from __future__ import annotations

from collectors.lazy_regex import LazyPattern
from collectors.text import normalise

_KLOG = LazyPattern(r"[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ ([\w.\-]+\.go):\d+\] ")
JOURNAL = LazyPattern(
    r"(?:<\d+>)?(?:[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)?|\d{4}-\d\d-\d\d[T ]\S+) "
    r"(\S+) kubelet(?:\[\d+\])?: ")
# Source files only the kubelet logs from; generic names (manager.go, server.go) would claim other daemons.
_KUBELET_FILES = frozenset({
    "eviction_manager.go", "prober.go", "prober_manager.go", "worker.go", "kubelet.go", "kubelet_pods.go",
    "kubelet_node_status.go", "kubelet_volumes.go", "kubelet_network.go", "kubelet_getters.go",
    "kuberuntime_manager.go", "kuberuntime_container.go", "kuberuntime_image.go", "kuberuntime_sandbox.go",
    "kuberuntime_gc.go", "pod_workers.go", "remote_image.go", "remote_runtime.go", "oom_watcher.go",
    "oom_watcher_linux.go", "predicate.go", "setters.go", "generic.go", "evented.go", "image_gc_manager.go",
    "container_gc.go", "status_manager.go", "volume_manager.go", "reconciler_common.go", "pod_container_deletor.go",
    "container_manager_linux.go", "qos_container_manager_linux.go", "cri_stats_provider.go", "kubelet_pods_linux.go",
    "nodeshutdown_manager_linux.go", "pod_startup_latency_tracker.go", "helpers_linux.go", "topology_manager.go",
    # Volume operations run in the kubelet (pkg/volume/util/nestedpendingoperations, operationexecutor, csi) and
    # the image manager and dockershim sandbox log under their own files.
    "nestedpendingoperations.go", "operation_generator.go", "image_manager.go", "csi_attacher.go", "csi_mounter.go",
    "docker_sandbox.go",
})


def claims_line(line: str) -> bool:
    """Whether one line of a mixed paste belongs to a kubelet log."""
    head = line[:200]
    if "kubelet" in head and JOURNAL.match(line):
        return True
    m = _KLOG.search(head)
    return m is not None and m.group(1) in _KUBELET_FILES


def sniff(text: str) -> int:
    """0-100 confidence that the text is a kubelet log."""
    lines = [ln for ln in normalise(text[:200_000]).split("\n")[:500] if ln.strip()]
    if not lines:
        return 0
    claimed = sum(1 for ln in lines if claims_line(ln))
    return min(round(95 * claimed / len(lines)), 95)
