"""Helpers shared by the Kubernetes parsers: the deduplicating sink, subjects, pod and node values.

Everything here is pure and tolerant: malformed values give None or an empty result, never an exception.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from collectors.k8s_values import (
    as_int,
)
from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact
from collectors.parsers.sink import FactSink

_RDMA_RESOURCE = LazyPattern(r"^(?:rdma/|mellanox\.com/|nvidia\.com/(?:hostdev|rdma)|openshift\.io/mlnx)", re.I)


def is_rdma_resource(name: str) -> bool:
    return _RDMA_RESOURCE.match(name) is not None


# ---- emitting ----------------------------------------------------------------------------------------


class DedupSink(FactSink):
    """A FactSink that drops exact repeats (same name, subject and value): a thousand identical events give
    one fact, cited to the first of them."""

    def __init__(self, artifact: Artifact, lines: list[str] | None = None) -> None:
        super().__init__(artifact, lines)
        self._seen: set[tuple[str, str, str]] = set()

    def add(self, name: str, value: object, start: int, end: int | None = None, subject: str | None = None,
            text: str | None = None) -> None:
        key = self._key(name, value, subject)
        if key in self._seen:
            return
        self._seen.add(key)
        super().add(name, value, start, end, subject, text)

    def has(self, name: str, value: object, subject: str | None = None) -> bool:
        """Whether this exact fact was already emitted, so a caller can skip finding its lines."""
        return self._key(name, value, subject) in self._seen

    def _key(self, name: str, value: object, subject: str | None) -> tuple[str, str, str]:
        return name, self.artifact.subject if subject is None else subject, repr(value)


def subject_of(kind: str, name: str, namespace: str = "") -> str:
    """`pod/shop/checkout-1`, `node/gpu-node-2`: the form artifacts use for their subject."""
    kind = kind.lower()
    return f"{kind}/{namespace}/{name}" if namespace else f"{kind}/{name}"



# ---- pods, containers and nodes ----------------------------------------------------------------------

RENDEZVOUS_VARS = ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK")


@dataclass
class EnvVar:
    value: str | None  # None when it comes from a reference (valueFrom, downward API)
    line: int


class DistEnv:
    """Rendezvous variables across every rank in one artifact, so duplicate ranks stay visible."""

    def __init__(self) -> None:
        self.ranks: list[tuple[int, int]] = []
        self.world_sizes: list[tuple[int, int]] = []
        self.master_addrs: list[tuple[str, int]] = []

    def pod(self, sink: FactSink, env: dict[str, EnvVar], env_from: bool, subject: str | None) -> None:
        """Record one pod's env; NCCL settings and missing variables are per pod."""
        self._collect(env)
        for var, fact in (("NCCL_SOCKET_IFNAME", "nccl.socket_ifname"), ("NCCL_IB_HCA", "nccl.ib_hca")):
            item = env.get(var)
            if item is not None and item.value:
                sink.add(fact, item.value, item.line, subject=subject)
        present = [v for v in RENDEZVOUS_VARS if v in env]
        # A pod with none of them is not a rank; envFrom may supply the rest, so absence is unknown then.
        # RANK and WORLD_SIZE are often set per process by the launcher (torchrun), so only the
        # rendezvous address counts as missing from a pod spec.
        if present and not env_from:
            missing = [v for v in ("MASTER_ADDR", "MASTER_PORT") if v not in env]
            sink.add("dist.env_missing", missing, min(env[v].line for v in present), subject=subject)

    def _collect(self, env: dict[str, EnvVar]) -> None:
        rank = env.get("RANK")
        if rank is not None and (value := as_int(rank.value)) is not None:
            self.ranks.append((value, rank.line))
        size = env.get("WORLD_SIZE")
        if size is not None and (value := as_int(size.value)) is not None:
            self.world_sizes.append((value, size.line))
        addr = env.get("MASTER_ADDR")
        if addr is not None and addr.value:
            self.master_addrs.append((addr.value, addr.line))

    def flush(self, sink: FactSink) -> None:
        _emit_spread(sink, "dist.ranks", self.ranks, keep_duplicates=True)
        _emit_spread(sink, "dist.world_sizes", self.world_sizes)
        _emit_spread(sink, "dist.master_addrs", self.master_addrs)


def _emit_spread(sink: FactSink, name: str, values: list[tuple[Any, int]], keep_duplicates: bool = False) -> None:
    if not values:
        return
    items = [v for v, _ in values]
    if not keep_duplicates:
        items = list(dict.fromkeys(items))
    lines = [n for _, n in values]
    sink.add(name, items, min(lines), max(lines))


def gpu_sharing(labels: dict[str, str]) -> str:
    """exclusive, time-slicing, mps or mig from GPU feature discovery labels; "" when they say nothing."""
    strategy = labels.get("nvidia.com/gpu.sharing-strategy", "").lower()
    if strategy in ("time-slicing", "mps"):
        return strategy
    # GPU feature discovery sets mig.strategy on every MIG-capable node, MIG on or off; MIG is really
    # in use when the product name says so, a MIG config is applied, or MIG resources are advertised.
    mig_capable = labels.get("nvidia.com/mig.strategy", "").lower() in ("single", "mixed")
    mig_config = labels.get("nvidia.com/mig.config", "").lower()
    if mig_capable and ("-MIG-" in labels.get("nvidia.com/gpu.product", "")
                        or mig_config not in ("", "all-disabled")
                        or any(key.startswith("nvidia.com/mig-") for key in labels)):
        return "mig"
    replicas = as_int(labels.get("nvidia.com/gpu.replicas"))
    if replicas is not None and replicas > 1:
        return "time-slicing"
    if strategy == "none" or replicas == 1 or mig_capable:
        return "exclusive"
    return ""


def has_gpu_labels(labels: dict[str, str]) -> bool:
    return any(k in labels for k in ("nvidia.com/gpu.present", "nvidia.com/gpu.product", "nvidia.com/gpu.count",
                                     "feature.node.kubernetes.io/pci-10de.present"))


def node_condition(kind: str, status: str) -> str:
    """The abnormal-condition name for one node condition row, or ""."""
    if kind in ("MemoryPressure", "DiskPressure", "PIDPressure", "NetworkUnavailable") and status == "True":
        return kind
    if kind == "Ready" and status in ("False", "Unknown"):
        return "NotReady"
    return ""


@dataclass
class NodeGpus:
    """nvidia.com/gpu counts of one node with the lines that show them (0 = not seen)."""

    capacity: int | None = None
    capacity_line: int = 0
    allocatable: int | None = None
    allocatable_line: int = 0
    allocated: int | None = None  # summed requests of non-terminated pods; None when not shown
    allocated_line: int = 0

    def emit(self, sink: FactSink, subject: str) -> None:
        if self.capacity is not None:
            sink.add("gpu.capacity_total", self.capacity, self.capacity_line, subject=subject)
        if self.allocatable is not None:
            sink.add("gpu.allocatable_total", self.allocatable, self.allocatable_line, subject=subject)
        if self.capacity is not None and self.allocatable is not None:
            lines = sorted((self.capacity_line, self.allocatable_line))
            sink.add("gpu.unhealthy_count", max(self.capacity - self.allocatable, 0), lines[0], lines[1],
                     subject=subject)
        if self.allocatable is not None and self.allocated is not None:
            # Cited to the allocated row: allocatable is cited above, and a span joining the two would
            # cover the whole pod table in between.
            free = max(self.allocatable - self.allocated, 0)
            sink.add("gpu.free_total", free, self.allocated_line, subject=subject)
            sink.add("gpu.max_free_per_node", free, self.allocated_line, subject=subject)


def toleration_text(key: str, operator: str, value: str, effect: str) -> str:
    """`key=value:Effect` (Equal) or `key:Effect` (Exists); `*` stands for an empty key, which tolerates all."""
    text = key or "*"
    if operator != "Exists" and value:
        text += f"={value}"
    return f"{text}:{effect}" if effect else text


def unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(v for v in values if v))
