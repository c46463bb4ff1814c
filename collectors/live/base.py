"""What every live source takes and returns.

A triage runs in stages: Kubernetes first (it resolves the target into pods and nodes, the `Scope`), then
Prometheus and the node agents in parallel over that scope. Every source returns artifacts exactly as a
person would see them, plus `missing` entries for whatever it could not read; a source never raises for a
failing backend. Artifact ids are unique, file-name-safe strings, because `triagebot record` writes each
artifact to a file of that name and a replay must cite the same ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

from pydantic import BaseModel, Field

from collectors.models import Artifact, Missing

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def artifact_id(*parts: str) -> str:
    """A file-name-safe id from parts, e.g. artifact_id("k8s", "events", "pod", "trainer-0") + ".json"."""
    return "-".join(_UNSAFE.sub("_", p).strip("_") for p in parts if p)


@dataclass(frozen=True)
class Window:
    """The time range a triage looks at."""

    since: datetime
    until: datetime

    @property
    def seconds(self) -> int:
        return max(1, int((self.until - self.since).total_seconds()))

    @classmethod
    def last(cls, duration: timedelta, now: datetime) -> Window:
        return cls(since=now - duration, until=now)


class PodRef(BaseModel):
    name: str
    namespace: str = ""  # a node's pods come from every namespace
    uid: str = ""
    node: str | None = None
    phase: str = ""
    containers: list[str] = Field(default_factory=list)
    gpu_request: int = 0
    rank: int | None = None  # from the RANK env or an index label (k8s_util.RANK_LABELS)
    order: tuple[int, int, int, str] = (1, 0, 1 << 30, "")  # launcher first, then group, index, name
    log_container: str = ""  # the container `kubectl logs` reads by default


class NodeRef(BaseModel):
    name: str
    internal_ip: str | None = None
    gpu_capacity: int = 0


class Scope(BaseModel):
    """What the Kubernetes stage resolved the target to; later sources look only at these."""

    namespace: str  # "" for a node: cluster-scoped, its pods from any namespace (PodRef.namespace)
    service: str | None = None
    workload: str | None = None  # e.g. "deployment/checkout", "job/distributed-training"
    pods: list[PodRef] = Field(default_factory=list)
    nodes: list[NodeRef] = Field(default_factory=list)


class SourceResult(BaseModel):
    artifacts: list[Artifact] = Field(default_factory=list)
    missing: list[Missing] = Field(default_factory=list)
    cache_age: float | None = None  # seconds: the objects came from serve's watch cache, this stale at most

    def extend(self, other: SourceResult) -> None:
        self.artifacts.extend(other.artifacts)
        self.missing.extend(other.missing)


class TargetNotFound(LookupError):
    """The service, pod, node or job does not exist; the message names near matches."""
