"""Facts from a Pod object (or a kindless piece of one): spec, container states, conditions, env, gang.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from collectors.k8s_values import GPU_RESOURCE, as_dict, as_int, as_list, as_str, quantity_int, quantity_milli
from collectors.parsers.kubernetes import k8s_services, node_spread
from collectors.parsers.kubernetes.k8s_common import (
    EnvVar,
    is_rdma_resource,
    toleration_text,
    unique,
)
from collectors.parsers.kubernetes.k8s_object_context import Ctx, identity
from collectors.parsers.kubernetes.k8s_object_text import Loc, Step
from collectors.parsers.kubernetes.messages.k8s_messages import (
    entrypoint_failed,
    eviction_condition,
    eviction_over_limit,
    eviction_over_request,
    eviction_resource,
    missing_refs,
)
from collectors.parsers.kubernetes.messages.k8s_scheduling import scheduling_facts


def pod(ctx: Ctx, d: dict[str, Any], loc: Loc) -> None:
    name, ns, subject = identity(d, "pod")
    spec, status = as_dict(d.get("spec")), as_dict(d.get("status"))
    add = ctx.sink.add
    name_line = loc.at("metadata", ("name", name))
    if name:
        add("pod.name", name, name_line, subject=subject)
        add("pods.names", [name], name_line, subject=subject)
    if ns:
        add("pod.namespace", ns, loc.at("metadata", ("namespace", ns)), subject=subject)
    if "nodeName" in spec or ("phase" in status and spec):  # a pasted status block alone says nothing of the node
        node = as_str(spec.get("nodeName"))
        add("pod.node", node, loc.at("spec", ("nodeName", node)) if node else name_line, subject=subject)
    _pod_phase(ctx, loc, name, status, subject)
    if name and (node := as_str(spec.get("nodeName"))):
        # The scheduler (or a binding) set the node: Pending from here on waits on the kubelet.
        add("pods.placed", [name], loc.at("spec", ("nodeName", node)), subject=subject)
        ctx.placements.append(node_spread.Placement(name, node, _failing(status), name_line, subject))
    _pod_spec(ctx, loc, spec, subject)
    _pod_statuses(ctx, loc, spec, status, subject)
    _pod_conditions(ctx, loc, status, subject)
    _pod_env(ctx, loc, spec, subject)
    _pod_gang(ctx, loc, d, subject)
    k8s_services.pod_shape(ctx.sink, as_dict(d.get("metadata")), spec, loc.at, subject)


def template(ctx: Ctx, loc: Loc, meta: dict[str, Any], spec: dict[str, Any], subject: str | None) -> None:
    """A pod template's facts: what every pod made from it will request, mount, probe and listen on."""
    _pod_spec(ctx, loc, spec, subject)
    _pod_statuses(ctx, loc, spec, {}, subject)
    _pod_env(ctx, loc, spec, subject)
    k8s_services.pod_shape(ctx.sink, meta, spec, loc.at, subject)


def _failing(status: dict[str, Any]) -> bool:
    """Not Running or Succeeded, a container waiting on an error, or any restart."""
    if as_str(status.get("phase")) not in ("Running", "Succeeded"):
        return True
    for st in map(as_dict, as_list(status.get("containerStatuses"))):
        waiting = as_dict(as_dict(st.get("state")).get("waiting"))
        if (as_int(st.get("restartCount")) or 0) > 0 or as_str(waiting.get("reason")) not in ("", "ContainerCreating"):
            return True
    return False


def _pod_phase(ctx: Ctx, loc: Loc, name: str, status: dict[str, Any], subject: str | None) -> None:
    add = ctx.sink.add
    phase, reason, message = (as_str(status.get(k)) for k in ("phase", "reason", "message"))
    if phase:
        line = loc.at("status", ("phase", phase))
        add("pod.phase", phase, line, subject=subject)
        if phase not in ("Running", "Succeeded") and name:
            add("pods.not_running", [name], line, subject=subject)
        if phase == "Pending" and name:
            add("pods.pending", [name], line, subject=subject)
    if reason:
        reason_line = loc.at("status", ("reason", reason))
        add("pod.status.reason", reason, reason_line, subject=subject)
        if reason == "Preempting":
            add("scheduling.preempted", True, reason_line, subject=subject)
        if reason == "Evicted":
            add("eviction.seen", True, reason_line, subject=subject)
            if resource := eviction_resource(message):
                add("eviction.resource", resource, loc.at("status", "message"), subject=subject)
            if eviction_over_limit(message):
                add("eviction.over_limit", True, loc.at("status", "message"), subject=subject)
            if eviction_over_request(message):
                add("eviction.over_request", True, loc.at("status", "message"), subject=subject)
            if condition := eviction_condition(message):
                add("node.conditions", [condition], loc.at("status", "message"), subject=subject)
    if message:
        add("pod.status.message", message, loc.at("status", "message"), subject=subject)
    if qos := as_str(status.get("qosClass")):
        add("pod.qos_class", qos, loc.at("status", ("qosClass", qos)), subject=subject)


def containers(spec: dict[str, Any], key: str = "containers") -> list[dict[str, Any]]:
    return [as_dict(c) for c in as_list(spec.get(key)) if isinstance(c, dict)]


def _gpu_request(c: dict[str, Any]) -> int:
    resources = as_dict(c.get("resources"))
    requests, limits = as_dict(resources.get("requests")), as_dict(resources.get("limits"))
    # An extended resource's request defaults to its limit.
    value = requests.get(GPU_RESOURCE, limits.get(GPU_RESOURCE))
    return quantity_int(value) or 0


def _pod_spec(ctx: Ctx, loc: Loc, spec: dict[str, Any], subject: str | None) -> None:
    if not spec:
        return
    add = ctx.sink.add
    main, init = containers(spec), containers(spec, "initContainers")
    if main:
        total = max(sum(_gpu_request(c) for c in main), max((_gpu_request(c) for c in init), default=0))
        add("pod.gpu_request", total, loc.at("spec", "containers", GPU_RESOURCE), subject=subject)
        rdma = [r for c in main + init for r in _resource_names(c) if is_rdma_resource(r)]
        add("pod.rdma_request", bool(rdma), loc.at("spec", "containers", rdma[0] if rdma else "resources"),
            subject=subject)
        caps = unique(as_str(cap) for c in main + init for cap in as_list(
            as_dict(as_dict(c.get("securityContext")).get("capabilities")).get("add")))
        add("pod.capabilities", caps, loc.at("spec", "capabilities" if caps else "containers"), subject=subject)
        _probes(ctx, loc, main, subject)
        _shm(ctx, loc, spec, main + init, subject)
    add("pod.host_network", spec.get("hostNetwork") is True, loc.at("spec", "hostNetwork"), subject=subject)
    for key, fact in (("priorityClassName", "pod.priority_class"), ("schedulerName", "pod.scheduler_name")):
        if value := as_str(spec.get(key)):
            add(fact, value, loc.at("spec", (key, value)), subject=subject)
    if "tolerations" in spec:
        tolerations = [toleration(as_dict(t)) for t in as_list(spec.get("tolerations"))]
        add("pod.tolerations", unique(tolerations), loc.at("spec", "tolerations"), subject=subject)


def _resource_names(c: dict[str, Any]) -> list[str]:
    resources = as_dict(c.get("resources"))
    return [k for part in ("limits", "requests") for k in as_dict(resources.get(part)) if isinstance(k, str)]


def toleration(t: dict[str, Any]) -> str:
    return toleration_text(as_str(t.get("key")), as_str(t.get("operator")), as_str(t.get("value")),
                           as_str(t.get("effect")))


# The probe handlers that name a port (core/v1 Probe): httpGet and tcpSocket take a number or a container port's
# name, grpc a number. exec has none.
_PROBE_KINDS = (("readinessProbe", "readiness"), ("livenessProbe", "liveness"), ("startupProbe", "startup"))
_PORT_HANDLERS = ("httpGet", "tcpSocket", "grpc")


def _probe_ports(ctx: Ctx, loc: Loc, main: list[dict[str, Any]], subject: str | None) -> None:
    """Each probe's port as kind:port, joined with the containers' ports (collectors/joins.py)."""
    for key, kind in _PROBE_KINDS:
        for c in main:
            probe = as_dict(c.get(key))
            for handler in _PORT_HANDLERS:
                if port := as_str(as_dict(probe.get(handler)).get("port")):
                    ctx.sink.add("pod.probe_ports", [f"{kind}:{port}"], loc.at("spec", key, handler, "port"),
                                 subject=subject)


def _probes(ctx: Ctx, loc: Loc, main: list[dict[str, Any]], subject: str | None) -> None:
    _probe_ports(ctx, loc, main, subject)
    ready = [as_int(as_dict(c.get("readinessProbe")).get("initialDelaySeconds")) or 0
             for c in main if isinstance(c.get("readinessProbe"), dict)]
    if ready:
        ctx.sink.add("probe.readiness_delay_seconds", min(ready), loc.at("spec", "readinessProbe"), subject=subject)
    delays = [as_int(as_dict(c.get("livenessProbe")).get("initialDelaySeconds")) or 0
              for c in main if isinstance(c.get("livenessProbe"), dict)]
    if not delays:
        return
    line = loc.at("spec", "livenessProbe")
    ctx.sink.add("probe.liveness_delay_seconds", min(delays), line, subject=subject)
    startup = any(isinstance(c.get("startupProbe"), dict) for c in main)
    ctx.sink.add("probe.startup_configured", startup, loc.at("spec", "startupProbe") if startup else line,
                 subject=subject)


# With no memory-backed volume at /dev/shm (and the host's IPC namespace not shared), Docker and containerd give
# each pod a 64 MiB tmpfs there.
RUNTIME_SHM_BYTES = 64 * 2**20


def _shm(ctx: Ctx, loc: Loc, spec: dict[str, Any], containers: list[dict[str, Any]],
         subject: str | None) -> None:
    memory = {_volume_name(v.get("name")): v for v in map(as_dict, as_list(spec.get("volumes")))
              if as_str(as_dict(v.get("emptyDir")).get("medium")) == "Memory"}
    mounts = [_volume_name(m.get("name")) for c in containers for m in map(as_dict, as_list(c.get("volumeMounts")))
              if as_str(m.get("mountPath")).rstrip("/") == "/dev/shm" and _volume_name(m.get("name")) in memory]
    line = loc.at("spec", "containers", ("mountPath", "/dev/shm")) if mounts else loc.at("spec", "volumes")
    ctx.sink.add("pod.shm_volume", bool(mounts), line, subject=subject)
    if mounts:
        # No sizeLimit: bounded only by the pod's memory, so no size to state.
        volume = memory[mounts[0]]
        size = quantity_int(as_dict(volume.get("emptyDir")).get("sizeLimit"))
        if size is not None and size > 0:
            ctx.sink.add("pod.shm_size_bytes", size,
                         loc.at("spec", "volumes", ("name", as_str(volume.get("name"))), "sizeLimit"), subject=subject)
    elif spec.get("hostIPC") is not True and not any(
            as_str(m.get("mountPath")).rstrip("/") == "/dev/shm"
            for c in containers for m in map(as_dict, as_list(c.get("volumeMounts")))):
        # A disk-backed volume mounted there is as large as its disk: only an empty mount point is the default.
        ctx.sink.add("pod.shm_size_bytes", RUNTIME_SHM_BYTES, line, subject=subject)


def _volume_name(raw: object) -> str:
    """A volume's name as the mount refers to it. A name is a DNS label, so a quote or space around it is the
    paste's (a stray `name: shm'` after an edit), not the spec's."""
    return as_str(raw).strip(" '\"`")


# ---- container states --------------------------------------------------------------------------------


@dataclass
class _Status:
    data: dict[str, Any]
    init: bool

    @property
    def name(self) -> str:
        return as_str(self.data.get("name"))

    def section(self) -> str:
        return "initContainerStatuses" if self.init else "containerStatuses"

    def terminated(self) -> tuple[dict[str, Any], str] | None:
        """The most recent termination and where it is: the current state first, then lastState."""
        for where in ("state", "lastState"):
            term = as_dict(self.data.get(where)).get("terminated")
            if isinstance(term, dict):
                return term, where
        return None

    def trouble(self) -> int:
        term = self.terminated()
        if term is not None and (as_str(term[0].get("reason")) not in ("", "Completed")
                                 or as_int(term[0].get("exitCode")) not in (None, 0)):
            return 0
        if "waiting" in as_dict(self.data.get("state")) or (as_int(self.data.get("restartCount")) or 0) > 0:
            return 1
        return 3 if self.init else 2


def _pod_statuses(ctx: Ctx, loc: Loc, spec: dict[str, Any], status: dict[str, Any],
                  subject: str | None) -> None:
    statuses = [_Status(as_dict(s), False) for s in as_list(status.get("containerStatuses"))]
    statuses += [_Status(as_dict(s), True) for s in as_list(status.get("initContainerStatuses"))]
    specs = {as_str(c.get("name")): c for c in containers(spec) + containers(spec, "initContainers")}
    seen: set[str] = set()
    for st in sorted(statuses, key=_Status.trouble):
        if st.init and st.trouble() > 1:
            continue  # a finished init container must not shadow the main one in `first` merges
        seen.add(st.name)
        _container_status(ctx, loc, st, subject)
        _container_spec(ctx, loc, specs.get(st.name, {}), subject)
    for c in containers(spec):  # containers without a status yet (not scheduled, or a manifest)
        cname = as_str(c.get("name"))
        if cname in seen:
            continue
        if cname:
            ctx.sink.add("container.name", cname, loc.at("spec", "containers", ("name", cname)), subject=subject)
        _container_spec(ctx, loc, c, subject)


def _container_status(ctx: Ctx, loc: Loc, st: _Status, subject: str | None) -> None:
    add, sec, cname = ctx.sink.add, st.section(), st.name
    if cname:
        add("container.name", cname, loc.at(sec, ("name", cname)), subject=subject)
    if (term := st.terminated()) is not None:
        data, where = term
        anchor: tuple[Step, ...] = (sec, ("name", cname), "state", "terminated") if where == "state" else (
            sec, "lastState", "terminated")
        if reason := as_str(data.get("reason")):
            add("container.last_terminated.reason", reason, loc.at(*anchor, ("reason", reason)), subject=subject)
        if (code := as_int(data.get("exitCode"))) is not None:
            add("container.last_terminated.exit_code", code, loc.at(*anchor, ("exitCode", code)), subject=subject)
        if entrypoint_failed(as_str(data.get("message"))):
            # The runtime could not exec the container's process: its command is missing or cannot run.
            add("app.errors", ["entrypoint"], loc.at(*anchor, "message"), subject=subject)
    waiting = as_dict(st.data.get("state")).get("waiting")
    if isinstance(waiting, dict) and (reason := as_str(waiting.get("reason"))):
        add("container.waiting.reason", reason, loc.at(sec, ("name", cname), "waiting", ("reason", reason)),
            subject=subject)
        if message := as_str(waiting.get("message")):
            add("container.waiting.message", message, loc.at(sec, ("name", cname), "waiting", "message"),
                subject=subject)
            if refs := missing_refs(message):
                add("pod.missing_refs", refs, loc.at(sec, ("name", cname), "waiting", "message"), subject=subject)
    if (restarts := as_int(st.data.get("restartCount"))) is not None:
        add("container.restart_count", restarts, loc.at(sec, ("name", cname), ("restartCount", restarts)),
            subject=subject)


def _container_spec(ctx: Ctx, loc: Loc, c: dict[str, Any], subject: str | None) -> None:
    add = ctx.sink.add
    # Not anchored on the container's name: sorted output puts `image` and `resources` before it, and the
    # value itself tells containers apart well enough.
    anchor: tuple[Step, ...] = ("spec", "containers")
    if image := as_str(c.get("image")):
        add("container.image", image, loc.at(*anchor, ("image", image)), subject=subject)
    resources = as_dict(c.get("resources"))
    for part, resource, fact, convert in (
        ("limits", "memory", "container.memory_limit_bytes", quantity_int),
        ("requests", "memory", "container.memory_request_bytes", quantity_int),
        ("limits", "cpu", "container.cpu_limit_millicores", quantity_milli),
    ):
        raw = as_dict(resources.get(part)).get(resource)
        if (value := convert(raw)) is not None:
            add(fact, value, loc.at(*anchor, part, (resource, raw)), subject=subject)


# ---- conditions, env, gang -----------------------------------------------------------------------------


def _pod_conditions(ctx: Ctx, loc: Loc, status: dict[str, Any], subject: str | None) -> None:
    add = ctx.sink.add
    for cond in map(as_dict, as_list(status.get("conditions"))):
        kind, state, reason = (as_str(cond.get(k)) for k in ("type", "status", "reason"))
        message = as_str(cond.get("message"))
        if kind == "PodScheduled" and state == "False":
            line = loc.at("conditions", ("message", message)) if message else loc.at("conditions", ("type", kind))
            add("scheduling.failed", True, line, subject=subject)
            if message:
                add("scheduling.message", message, line, subject=subject)
                for name, value in scheduling_facts(message):
                    add(name, value, line, subject=subject)
        if kind == "DisruptionTarget" and state == "True" and reason:
            _disruption_target(ctx, loc, reason, message, subject)


def _disruption_target(ctx: Ctx, loc: Loc, reason: str, message: str, subject: str | None) -> None:
    """Who is removing the pod (1.26 on): the Eviction API (pkg/registry/core/pod/storage/eviction.go, reason
    EvictionByEvictionAPI), the scheduler, the kubelet, the taint manager or the pod GC (pkg/apis/core types)."""
    add = ctx.sink.add
    line = loc.at("conditions", ("reason", reason))
    add("pod.disruption_target", reason, line, subject=subject)
    if reason.startswith("Preemption"):
        add("scheduling.preempted", True, line, subject=subject)
    # The kubelet's eviction manager writes its eviction message into the condition too, and a pod whose status
    # the kubelet last synced before it set the reason shows it only there (kubernetes#105467).
    elif reason == "TerminationByKubelet" and (resource := eviction_resource(message)):
        where = loc.at("conditions", ("message", message))
        add("eviction.seen", True, where, subject=subject)
        add("eviction.resource", resource, where, subject=subject)
        if eviction_over_limit(message):
            add("eviction.over_limit", True, where, subject=subject)
        if eviction_over_request(message):
            add("eviction.over_request", True, where, subject=subject)


def _pod_env(ctx: Ctx, loc: Loc, spec: dict[str, Any], subject: str | None) -> None:
    for c in containers(spec):
        env: dict[str, EnvVar] = {}
        for e in map(as_dict, as_list(c.get("env"))):
            var = as_str(e.get("name"))
            if not var:
                continue
            value = as_str(e.get("value")) if "valueFrom" not in e else None
            # Cited to the value's own line (the line after the name in JSON and YAML), where a reader sees it.
            path: tuple[Step, ...] = ("spec", "containers", "env", ("name", var))
            env[var] = EnvVar(value, loc.at(*path, ("value", value)) if value else loc.at(*path))
        if env:
            ctx.dist.pod(ctx.sink, env, bool(as_list(c.get("envFrom"))), subject)


_GROUP_KEYS = ("scheduling.k8s.io/group-name", "scheduling.x-k8s.io/pod-group", "pod-group.scheduling.sigs.k8s.io",
               "kueue.x-k8s.io/queue-name")


def group_key(meta: dict[str, Any]) -> str:
    """The label or annotation that puts an object into a gang (PodGroup) or a Kueue queue, or ""."""
    tags = as_dict(meta.get("labels")) | as_dict(meta.get("annotations"))
    return next((k for k in _GROUP_KEYS if as_str(tags.get(k))), "")


def _pod_gang(ctx: Ctx, loc: Loc, d: dict[str, Any], subject: str | None) -> None:
    # A pod alone cannot show that gang scheduling is absent, only that it is present.
    if key := group_key(as_dict(d.get("metadata"))):
        ctx.sink.add("gang.configured", True, loc.at("metadata", key), subject=subject)
