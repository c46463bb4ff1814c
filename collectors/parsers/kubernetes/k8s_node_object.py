"""Facts from a Node object: conditions, taints, GPU capacity and allocatable.
"""

from __future__ import annotations

from typing import Any

from collectors.k8s_values import GPU_RESOURCE, as_dict, as_list, as_str, quantity_int
from collectors.parsers.kubernetes.k8s_common import (
    NodeGpus,
    gpu_sharing,
    has_gpu_labels,
    node_condition,
    unique,
)
from collectors.parsers.kubernetes.k8s_object_context import Ctx, identity
from collectors.parsers.kubernetes.k8s_object_text import Loc
from collectors.parsers.kubernetes.messages.k8s_messages import (
    node_not_ready_reasons,
)


def node(ctx: Ctx, d: dict[str, Any], loc: Loc) -> None:
    name, _, subject = identity(d, "node")
    spec, status, meta = as_dict(d.get("spec")), as_dict(d.get("status")), as_dict(d.get("metadata"))
    add = ctx.sink.add
    name_line = loc.at("metadata", ("name", name))
    if name:
        add("node.name", name, name_line, subject=subject)
    # A status pasted alone says nothing of the spec: no taints and no cordon are read from what is not there.
    has_spec = "spec" in d
    taints = [taint(as_dict(t)) for t in as_list(spec.get("taints"))]
    if has_spec:
        add("node.taints", unique(taints), loc.at("spec", "taints") if taints else name_line, subject=subject)
    addresses = [as_str(as_dict(a).get("address")) for a in as_list(status.get("addresses"))]
    if any(addresses):
        add("node.addresses", unique(a for a in addresses if a), loc.at("status", "addresses"), subject=subject)
    if has_spec:
        add("node.unschedulable", spec.get("unschedulable") is True,
            loc.at("spec", "unschedulable") if "unschedulable" in spec else name_line, subject=subject)
    _node_conditions(ctx, loc, status, subject)
    labels = {k: as_str(v) for k, v in as_dict(meta.get("labels")).items() if isinstance(k, str)}
    if mode := gpu_sharing(labels):
        key = next(k for k in ("nvidia.com/gpu.sharing-strategy", "nvidia.com/mig.strategy",
                               "nvidia.com/gpu.replicas") if k in labels)
        add("node.gpu_sharing", mode, loc.at("labels", key), subject=subject)
    _node_gpus(ctx, loc, status, labels, subject or ctx.sink.artifact.subject)


def taint(t: dict[str, Any]) -> str:
    key, value, effect = as_str(t.get("key")), as_str(t.get("value")), as_str(t.get("effect"))
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"


def _node_conditions(ctx: Ctx, loc: Loc, status: dict[str, Any], subject: str | None) -> None:
    rows = [as_dict(c) for c in as_list(status.get("conditions"))]
    found = [(n, as_str(c.get("type"))) for c in rows
             if (n := node_condition(as_str(c.get("type")), as_str(c.get("status"))))]
    if found:
        line = loc.at("status", "conditions", ("type", found[0][1]))
        ctx.sink.add("node.conditions", unique(n for n, _ in found), line, subject=subject)
    elif rows:
        ctx.sink.add("node.conditions", [], loc.at("status", "conditions"), subject=subject)
    for c in rows:
        if as_str(c.get("type")) == "Ready" and as_str(c.get("status")) in ("False", "Unknown"):
            text = f"{as_str(c.get('reason'))} {as_str(c.get('message'))}"
            if reasons := node_not_ready_reasons(text):
                ctx.sink.add("node.not_ready_reasons", reasons, loc.at("status", "conditions", ("type", "Ready")),
                             subject=subject)


def _node_gpus(ctx: Ctx, loc: Loc, status: dict[str, Any], labels: dict[str, str], subject: str) -> None:
    gpus = NodeGpus()
    for part in ("capacity", "allocatable"):
        section = status.get(part)
        if not isinstance(section, dict):
            continue
        raw = section.get(GPU_RESOURCE)
        value = quantity_int(raw) if raw is not None else (0 if has_gpu_labels(labels) else None)
        line = loc.at("status", part, (GPU_RESOURCE, raw)) if raw is not None else loc.at("status", part)
        if value is not None:
            setattr(gpus, part, value)
            setattr(gpus, f"{part}_line", line)
    gpus.emit(ctx.sink, subject)  # allocated is unknown from a Node object, so no free counts
