"""Pod specs wherever an object keeps them: a workload's template, a job's replica specs, a CronJob's job template,
or a custom resource's own place for them (an InferenceService's predictor, a RayCluster's worker groups).

Kubernetes has one pod spec (core/v1 PodSpec: `containers`, `volumes`, ...) and every controller embeds it, so
finding it by its shape reads every kind, including ones this project never heard of, with one set of rules: a
template's GPU request, /dev/shm volume, probes, ports and labels are facts about the pods it makes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from collectors.k8s_values import as_dict, as_str
from collectors.parsers.kubernetes.k8s_object_context import Ctx, identity
from collectors.parsers.kubernetes.k8s_object_text import Loc, Step
from collectors.parsers.kubernetes.k8s_pod_object import template

# Deep enough for a JobSet (spec.replicatedJobs[].template.spec.template.spec) and a CronJob; bounded so a
# hostile document costs nothing.
_MAX_DEPTH = 8
# Where no pod spec lives: what the cluster reports, and the object's own identity.
_SKIP = frozenset({"status", "metadata", "managedFields"})


@dataclass(frozen=True)
class PodTemplate:
    path: tuple[Step, ...]  # the keys down to the spec, as Loc.at steps (list members by their name)
    meta: dict[str, Any]  # the template's metadata (labels), {} when the owner keeps none beside the spec
    spec: dict[str, Any]


def is_pod_spec(d: dict[str, Any]) -> bool:
    """A PodSpec: a list of containers, each a mapping with an image or a name."""
    containers = d.get("containers")
    return isinstance(containers, list) and any(
        isinstance(c, dict) and (as_str(c.get("image")) or as_str(c.get("name"))) for c in containers)


def pod_templates(obj: dict[str, Any]) -> list[PodTemplate]:
    """Every pod spec inside the object (not the object's own spec when it is a Pod), outermost first."""
    return list(_walk(as_dict(obj.get("spec")), ("spec",), {}, 1))


def _walk(node: dict[str, Any], path: tuple[Step, ...], meta: dict[str, Any], depth: int) -> Iterator[PodTemplate]:
    if is_pod_spec(node):
        yield PodTemplate(path, meta, node)
        return  # a pod spec holds no further pod specs
    if depth >= _MAX_DEPTH:
        return
    for key, value in node.items():
        if not isinstance(key, str) or key in _SKIP:
            continue
        if isinstance(value, dict):
            # A PodTemplateSpec keeps `metadata` beside `spec`: the labels the pods will carry.
            inner_meta = as_dict(node.get("metadata")) if key == "spec" else {}
            yield from _walk(value, (*path, key), inner_meta, depth + 1)
        elif isinstance(value, list):
            for member in value:
                if isinstance(member, dict):
                    # A member is found by its name (Volcano tasks, JobSet replicatedJobs, Ray worker groups).
                    name = as_str(member.get("name"))
                    at: tuple[Step, ...] = (*path, key, ("name", name)) if name else (*path, key)
                    yield from _walk(member, at, {}, depth + 1)


def templates(ctx: Ctx, d: dict[str, Any], loc: Loc) -> None:
    """The facts of each pod template in an object of any kind other than Pod, about that object."""
    _, _, subject = identity(d, as_str(d.get("kind")) or "workload")
    for found in pod_templates(d):
        # Each template's lookups start at its own place: a PyTorchJob's Master and Worker cite their own lines.
        sub = loc.within(*found.path[:-1]) if len(found.path) > 1 else loc
        template(ctx, sub, found.meta, found.spec, subject)
