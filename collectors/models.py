"""The evidence model: raw artifacts in, cited facts out."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


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
    TEXT = "text"  # pasted text of no structured kind: read line by line for known signals


class Artifact(BaseModel):
    """One raw piece of evidence, exactly as a person would see it."""

    model_config = ConfigDict(frozen=True)

    id: str
    kind: ArtifactKind
    subject: str = ""  # e.g. "pod/shop/checkout-7d9f", "node/gpu-node-2"
    source: str = "paste"  # where it came from: paste, file, kubernetes, prometheus, agent ...
    command: str = ""  # the exact command or query a person could re-run
    captured_at: datetime | None = None
    content: str = ""
    unavailable: str | None = None  # why the source could not provide it
    # The source's line number of the content's first line: a piece cut from a long paste holds only its own lines
    # (copying the paste's length into every piece made reading it quadratic), and its citations still count the
    # paste's lines (collectors/parsers/registry.py shifts them).
    first_line: int = Field(1, ge=1)


class Citation(BaseModel):
    """Where a fact was read: artifact id and a 1-based inclusive line span."""

    model_config = ConfigDict(frozen=True)

    artifact: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)

    def label(self) -> str:
        if self.start == 0:
            return self.artifact
        if self.start == self.end:
            return f"{self.artifact}:{self.start}"
        return f"{self.artifact}:{self.start}-{self.end}"


class Fact(BaseModel):
    """A named observation from the vocabulary, with the evidence behind it."""

    model_config = ConfigDict(frozen=True)

    name: str
    value: Any
    subject: str = ""
    citation: Citation
    excerpt: str = ""  # the cited text, shortened, so a reader sees why without opening the artifact
    kind: str = ""  # the kind of the artifact it was read from (set by the registry)
    parser: str = ""  # what read it: a parser module name, or `signal:<id>` for a line signal


class ParseResult(BaseModel):
    """What a parser could read, and what it could not."""

    facts: list[Fact] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)


class Target(BaseModel):
    """What a triage is about. Live triage needs a namespace and a service, pod or job (`service` may be
    `pod/NAME`, `job/NAME`, `deployment/NAME`...), a node (`node/NAME`: cluster-scoped, no namespace), or a
    namespace itself (`namespace/NAME`)."""

    service: str | None = None
    namespace: str | None = None
    cluster: str | None = None
    pod: str | None = None
    node: str | None = None
    # The scrape address (host[:port]) an alert named its node by, when it named it no other way: the node is the
    # one with that name or address, found when the triage runs.
    instance: str | None = None


class Missing(BaseModel):
    """A source that could not be read, and why; the triage goes on without it."""

    source: str
    reason: str
