"""GPU allocation across nodes, rendered as `kubectl describe node` so the describe-node parser reads it.

A Node object alone cannot say how many GPUs are free: that is allocatable minus what the non-terminated
pods on the node request. `kubectl describe node` shows exactly that sum in its "Allocated resources"
table, so the live source renders the same text from the Node, its pods and its events. Per node, this
gives free GPUs (summed and maximum over nodes: shortage versus fragmentation) and capacity minus
allocatable (GPUs the device plugin marked unhealthy).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from collectors.k8s_values import as_dict, as_int, as_list, as_str, quantity
from collectors.live.k8s_util import (
    gpu_capacity,
    is_gpu_node,
    labels_of,
    meta,
    name_of,
    pod_resources,
)

_STANDARD = ("cpu", "memory", "ephemeral-storage")
_KEY_WIDTH = 20  # kubectl's describe aligns top-level values after its longest usual key
_SYSTEM_INFO = (("machineID", "Machine ID"), ("systemUUID", "System UUID"), ("bootID", "Boot ID"),
                ("kernelVersion", "Kernel Version"), ("osImage", "OS Image"),
                ("operatingSystem", "Operating System"), ("architecture", "Architecture"),
                ("containerRuntimeVersion", "Container Runtime Version"), ("kubeletVersion", "Kubelet Version"),
                ("kubeProxyVersion", "Kube-Proxy Version"))


# ---- which nodes ---------------------------------------------------------------------------------------


def candidate_gpu_nodes(nodes: list[dict[str, Any]], pending: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """GPU nodes any of the pending pods' nodeSelectors allows, most promising first.

    Nodes a pod's nodeSelector excludes can never host it, so their free GPUs must not count as free for
    it. Schedulable, Ready nodes with the most allocatable GPUs come first, so a cap keeps the useful ones.
    """
    selectors = [{k: as_str(v) for k, v in as_dict(as_dict(p.get("spec")).get("nodeSelector")).items()}
                 for p in pending] or [{}]
    chosen = [n for n in nodes if is_gpu_node(n)
              and any(all(labels_of(n).get(k) == v for k, v in sel.items()) for sel in selectors)]
    return sorted(chosen, key=lambda n: (_cordoned(n), not _ready(n), -gpu_capacity(n, "allocatable"), name_of(n)))


def _cordoned(node: dict[str, Any]) -> bool:
    return as_dict(node.get("spec")).get("unschedulable") is True


def _ready(node: dict[str, Any]) -> bool:
    return any(as_str(c.get("type")) == "Ready" and as_str(c.get("status")) == "True"
               for c in map(as_dict, as_list(as_dict(node.get("status")).get("conditions"))))


def non_terminated(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pods that hold resources on their node: the same filter kubectl describe node applies."""
    return [p for p in pods if as_str(as_dict(p.get("status")).get("phase")) not in ("Succeeded", "Failed")]


# ---- rendering -----------------------------------------------------------------------------------------


def describe_node(node: dict[str, Any], pods: list[dict[str, Any]], events: list[dict[str, Any]] | None,
                  now: datetime) -> str:
    """`kubectl describe node` text; events None (unreadable) leaves the Events section out."""
    status, spec = as_dict(node.get("status")), as_dict(node.get("spec"))
    out: list[str] = []
    out.append(_field("Name", name_of(node)))
    out.append(_field("Roles", ",".join(_roles(node)) or "<none>"))
    out += _multi("Labels", [f"{k}={v}" for k, v in sorted(labels_of(node).items())])
    out += _multi("Annotations", [f"{k}: {_one_line(as_str(v))}"
                                  for k, v in sorted(as_dict(meta(node).get("annotations")).items())])
    out.append(_field("CreationTimestamp", _rfc1123(as_str(meta(node).get("creationTimestamp")))))
    out += _multi("Taints", [_taint(as_dict(t)) for t in as_list(spec.get("taints"))])
    out.append(_field("Unschedulable", "true" if spec.get("unschedulable") is True else "false"))
    out += _conditions(status)
    out += _block("Addresses", [(as_str(a.get("type")), as_str(a.get("address")))
                                for a in map(as_dict, as_list(status.get("addresses")))])
    capacity, allocatable = as_dict(status.get("capacity")), as_dict(status.get("allocatable"))
    out += _block("Capacity", [(k, as_str(v)) for k, v in sorted(capacity.items())])
    out += _block("Allocatable", [(k, as_str(v)) for k, v in sorted(allocatable.items())])
    if info := as_dict(status.get("nodeInfo")):
        out += _block("System Info", [(label, as_str(info.get(key))) for key, label in _SYSTEM_INFO])
    if cidr := as_str(spec.get("podCIDR")):
        out.append(_field("PodCIDR", cidr))
    if provider := as_str(spec.get("providerID")):
        out.append(_field("ProviderID", provider))
    out += _pods_table(pods, allocatable, now)
    out += _allocated(pods, allocatable)
    if events is not None:
        out += _events(events, now)
    return "\n".join(out) + "\n"


def _field(key: str, value: str) -> str:
    label = f"{key}:"
    return f"{label:<{max(_KEY_WIDTH, len(label) + 2)}}{value}"


def _multi(key: str, values: list[str]) -> list[str]:
    """A value over several lines (Labels, Taints): the rest align under the first."""
    if not values:
        return [_field(key, "<none>")]
    return [_field(key, values[0])] + [" " * _KEY_WIDTH + v for v in values[1:]]


def _block(key: str, rows: list[tuple[str, str]]) -> list[str]:
    if not rows:
        return [f"{key}:"]
    width = max(len(k) for k, _ in rows) + 3
    return [f"{key}:"] + [f"  {k + ':':<{width}}{v}".rstrip() for k, v in rows]


def _table(header: list[str], rows: list[list[str]], indent: str = "  ") -> list[str]:
    """Columns padded to their widest cell plus two spaces, like kubectl's tabwriter."""
    dashes = ["-" * len(h) for h in header]
    grid = [header, dashes, *rows]
    widths = [max(len(r[i]) for r in grid) for i in range(len(header))]
    return [indent + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in grid]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _roles(node: dict[str, Any]) -> list[str]:
    roles = {k.split("/", 1)[1] for k in labels_of(node) if k.startswith("node-role.kubernetes.io/") and "/" in k}
    if role := labels_of(node).get("kubernetes.io/role"):
        roles.add(role)
    return sorted(r for r in roles if r)


def _taint(t: dict[str, Any]) -> str:
    key, value, effect = as_str(t.get("key")), as_str(t.get("value")), as_str(t.get("effect"))
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"


def _conditions(status: dict[str, Any]) -> list[str]:
    rows = [[as_str(c.get("type")), as_str(c.get("status")), _rfc1123(as_str(c.get("lastHeartbeatTime"))),
             _rfc1123(as_str(c.get("lastTransitionTime"))), as_str(c.get("reason")),
             _one_line(as_str(c.get("message")))]
            for c in map(as_dict, as_list(status.get("conditions")))]
    header = ["Type", "Status", "LastHeartbeatTime", "LastTransitionTime", "Reason", "Message"]
    return ["Conditions:", *_table(header, rows)]


def _pods_table(pods: list[dict[str, Any]], allocatable: dict[str, Any], now: datetime) -> list[str]:
    alloc_cpu, alloc_mem = quantity(allocatable.get("cpu")), quantity(allocatable.get("memory"))
    rows = []
    for pod in pods:
        req, lim = pod_resources(pod, "requests"), pod_resources(pod, "limits")
        rows.append([
            as_str(meta(pod).get("namespace")), name_of(pod),
            _with_pct("cpu", req.get("cpu"), alloc_cpu), _with_pct("cpu", lim.get("cpu"), alloc_cpu),
            _with_pct("memory", req.get("memory"), alloc_mem), _with_pct("memory", lim.get("memory"), alloc_mem),
            _age(_parse_time(as_str(meta(pod).get("creationTimestamp"))), now),
        ])
    header = ["Namespace", "Name", "CPU Requests", "CPU Limits", "Memory Requests", "Memory Limits", "Age"]
    return [_field("Non-terminated Pods", f"({len(pods)} in total)"), *_table(header, rows)]


def _allocated(pods: list[dict[str, Any]], allocatable: dict[str, Any]) -> list[str]:
    requests: dict[str, Decimal] = {}
    limits: dict[str, Decimal] = {}
    for pod in pods:
        for total, part in ((requests, "requests"), (limits, "limits")):
            for name, q in pod_resources(pod, part).items():
                total[name] = total.get(name, Decimal(0)) + q
    rows = []
    huge = sorted(k for k in allocatable if k.startswith("hugepages-"))
    for name in (*_STANDARD, *huge):
        alloc = quantity(allocatable.get(name))
        rows.append([name, _with_pct(name, requests.get(name), alloc), _with_pct(name, limits.get(name), alloc)])
    # Extended resources (nvidia.com/gpu, MIG slices, RDMA) have no percentages in kubectl's table.
    extended = sorted(k for k in allocatable if k not in _STANDARD and k != "pods" and not k.startswith("hugepages-"))
    for name in extended:
        rows.append([name, _amount(name, requests.get(name, Decimal(0))), _amount(name, limits.get(name, Decimal(0)))])
    return ["Allocated resources:", "  (Total limits may be over 100 percent, i.e., overcommitted.)",
            *_table(["Resource", "Requests", "Limits"], rows)]


def _events(events: list[dict[str, Any]], now: datetime) -> list[str]:
    if not events:
        return [_field("Events", "<none>")]
    rows = []
    for ev in sorted(events, key=lambda e: _event_last(e) or datetime.min.replace(tzinfo=UTC)):
        count = as_int(ev.get("count")) or as_int(as_dict(ev.get("series")).get("count")) or 1
        last = _event_last(ev)
        first = _parse_time(as_str(ev.get("firstTimestamp"))) or last
        age = _age(last, now)
        if count > 1:
            age = f"{age} (x{count} over {_age(first, now)})"
        source = as_str(as_dict(ev.get("source")).get("component")) or as_str(ev.get("reportingComponent"))
        rows.append([as_str(ev.get("type")), as_str(ev.get("reason")), age, source or "<unknown>",
                     _one_line(as_str(ev.get("message")))])
    return ["Events:", *_table(["Type", "Reason", "Age", "From", "Message"], rows)]


def _event_last(ev: dict[str, Any]) -> datetime | None:
    for raw in (as_str(ev.get("lastTimestamp")), as_str(as_dict(ev.get("series")).get("lastObservedTime")),
                as_str(ev.get("eventTime")), as_str(ev.get("firstTimestamp"))):
        if (when := _parse_time(raw)) is not None:
            return when
    return None


# ---- quantities and times --------------------------------------------------------------------------------

_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))
_DECIMAL = (("E", 10**18), ("P", 10**15), ("T", 10**12), ("G", 10**9), ("M", 10**6), ("k", 10**3))


def _amount(resource: str, q: Decimal) -> str:
    """A summed quantity in the units kubectl would print it in."""
    if resource == "cpu":
        milli = math.ceil(q * 1000)
        return str(milli // 1000) if milli % 1000 == 0 else f"{milli}m"
    whole = math.ceil(q)
    if whole == 0:
        return "0"
    if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
        for suffix, size in (*_BINARY, *_DECIMAL):
            if whole % size == 0:
                return f"{whole // size}{suffix}"
    return str(whole)


def _with_pct(resource: str, q: Decimal | None, allocatable: Decimal | None) -> str:
    q = q or Decimal(0)
    pct = int(q / allocatable * 100) if allocatable else 0
    return f"{_amount(resource, q)} ({pct}%)"


def _parse_time(raw: str) -> datetime | None:
    if not raw:
        return None
    try:
        when = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _rfc1123(raw: str) -> str:
    when = _parse_time(raw)
    return when.astimezone(UTC).strftime("%a, %d %b %Y %H:%M:%S +0000") if when else "<unknown>"


def _age(when: datetime | None, now: datetime) -> str:
    """kubectl's short human duration: 45s, 3m12s, 47m, 5h12m, 3d4h, 120d."""
    if when is None:
        return "<unknown>"
    seconds = max(int((now - when).total_seconds()), 0)
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    if seconds < 120:
        return f"{seconds}s"
    if minutes < 10:
        return f"{minutes}m{seconds % 60}s" if seconds % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if days < 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    return f"{days}d" if days < 730 else f"{days // 365}y"
