"""The kinds of raw evidence, apart from the models: the command line lists them without importing pydantic."""

from __future__ import annotations

from enum import StrEnum


class ArtifactKind(StrEnum):
    """Every kind of raw evidence a parser understands."""

    DESCRIBE_POD = "describe-pod"
    DESCRIBE_NODE = "describe-node"
    DESCRIBE_SERVICE = "describe-service"
    POD = "pod"  # Pod object(s) as JSON/YAML, incl. a List
    NODE = "node"  # Node object(s) as JSON/YAML
    EVENTS = "events"  # `kubectl get events` table, -o wide, JSON/YAML, or a describe Events block
    K8S_OBJECT = "k8s-object"  # any other object: Job, PodGroup, ResourceQuota, NetworkPolicy, HPA, Service ...
    KUBELET_LOG = "kubelet-log"
    KERNEL_LOG = "kernel-log"
    CONTAINER_LOG = "container-log"
    CONNTRACK_STATS = "conntrack-stats"  # `conntrack -S` or /proc/net/stat/nf_conntrack
    CPU_STAT = "cpu-stat"  # cgroup cpu.stat, v1 or v2
    NCCL_LOG = "nccl-log"  # NCCL_DEBUG output and PyTorch distributed errors
    PROMETHEUS_METRICS = "prometheus-metrics"  # exposition text from a scrape
    PROMETHEUS_QUERY = "prometheus-query"  # HTTP API JSON result
    ALERTMANAGER = "alertmanager"  # webhook payload, version 4
    ALERT_TEXT = "alert-text"  # an alert as rendered in chat or mail
    NVML = "nvml"  # the node agent's NVML snapshot JSON (schema triagebot.nvml/v1)
    POD_TABLE = "pod-table"  # `kubectl get pods` (default, -o wide, custom columns)
    NODE_TABLE = "node-table"  # `kubectl get nodes` (default, -o wide)
    ENDPOINTS_TABLE = "endpoints-table"  # `kubectl get endpoints` (with or without its header after the command)
    NVIDIA_SMI = "nvidia-smi"  # `nvidia-smi` table or `nvidia-smi dmon` samples
    TOP = "top"  # `top` / `top -b` output
    HPA = "hpa"  # `kubectl get hpa` table (every era) or `kubectl describe hpa` text
    ACCESS_LOG = "access-log"  # request lines of ingress-nginx, Envoy/Istio, HAProxy, AWS load balancers, nginx
    FLIGHT_RECORDER = "flight-recorder"  # PyTorch Flight Recorder dumps (JSON form), one rank's or a folder's
    NET_LINKS = "net-links"  # `ip link` / `ifconfig`, or the node agent's /v1/net-links JSON: interfaces and MTUs
    DF = "df"  # `df` output (its /dev/shm row), or the node agent's /v1/shm JSON: /dev/shm size and use
    TEXT = "text"  # pasted text of no structured kind: read line by line for known signals
