"""`kubectl describe pod` output, one pod or several concatenated, into pod, container and event facts.

Also reads a fragment (just the State / Last State lines of one container), because that is what people
paste into chat.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from collectors.k8s_values import GPU_RESOURCE, quantity_int, quantity_milli
from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.kubernetes.k8s_common import DedupSink, DistEnv, EnvVar, is_rdma_resource, subject_of, unique
from collectors.parsers.kubernetes.k8s_describe_layout import (
    DNode,
    describe_blocks,
    describe_tree,
    describes_a_volume,
    find_root,
    node_values,
)
from collectors.parsers.kubernetes.k8s_event_facts import block_events
from collectors.parsers.kubernetes.messages.k8s_messages import (
    eviction_condition,
    eviction_over_limit,
    eviction_over_request,
    eviction_resource,
    missing_refs,
)
from collectors.text import normalise

_NAME = LazyPattern(r"(\s*)Name:\s+\S")
_PHASES = {"Pending", "Running", "Succeeded", "Failed", "Unknown"}
_STATE_KEYS = {"Reason", "Exit Code", "Message", "Signal", "Started", "Finished"}
_KEYS = LazyPattern(r"(?m)^[ \t]*(Name|Namespace|Node|Containers|Init Containers|QoS Class|Controlled By|"
                    r"Restart Count|State|Last State|Exit Code|Capacity|Allocatable|System Info|"
                    r"Non-terminated Pods|Allocated resources|Unschedulable|Tolerations|Volumes|Status|Reason|"
                    r"Involved Object|Selector|TargetPort|Endpoints|Session Affinity|Reference|Min replicas|"
                    r"Max replicas):")
_POD_KEYS = {"Namespace", "Containers", "Init Containers", "QoS Class", "Controlled By", "Restart Count",
             "Tolerations", "Volumes"}
_NODE_KEYS = {"Capacity", "Allocatable", "System Info", "Non-terminated Pods", "Allocated resources",
              "Unschedulable"}
_SERVICE_KEYS = {"Selector", "TargetPort", "Endpoints", "Session Affinity"}
_HPA_KEYS = {"Reference", "Min replicas", "Max replicas"}
_DELAY = LazyPattern(r"\bdelay=(\d+)s")
# The port of a probe as kubectl describe prints it (k8s.io/kubectl pkg/describe/describe.go, DescribeProbe, 1.10 to
# 1.34): "http-get <scheme>://<host>:<port><path>", "tcp-socket <host>:<port>", "grpc <pod>:<port> <service>";
# the port is a number or a container port's name.
_PROBE_PORT = LazyPattern(r"^(?:http-get [a-z]+://[^\s/]*?:([A-Za-z0-9-]+)(?:/|\s|$)"
                          r"|tcp-socket [^\s]*?:([A-Za-z0-9-]+)\b|grpc <pod>:(\d+)\b)")
_PROBE_KINDS = {"Liveness": "liveness", "Readiness": "readiness", "Startup": "startup"}
_MOUNT = LazyPattern(r"(\S+) from (\S+)")


def sniff(text: str) -> int:
    """0-100 confidence that the text is `kubectl describe pod` output."""
    keys = set(_KEYS.findall(text[:200_000]))
    if describes_a_volume(text) and not keys & {"Containers", "Init Containers", "QoS Class"}:
        return 10  # a claim or volume described alone: its Status Pending is its binding, not a pod's phase
    if len(keys & _NODE_KEYS) >= 2 or "Involved Object" in keys or len(keys & _SERVICE_KEYS) >= 2 \
            or len(keys & _HPA_KEYS) >= 2:
        return 10  # a node, `kubectl describe event`, `describe service` or `describe hpa`: their Name is not a pod's
    pod = len(keys & _POD_KEYS)
    if "Name" in keys and pod:
        return min(60 + 10 * pod, 95)
    if keys & {"State", "Last State"} and keys & {"Exit Code", "Restart Count", "Reason"}:
        return 60  # a container-state fragment
    if {"Status", "Reason"} <= keys:
        return 45  # the pod's own Status / Reason / Message lines
    if pod >= 3:
        return 60  # the tail of a description, pasted without its Name (Volumes, QoS Class, Tolerations...)
    if pod or "Status" in keys:
        return 20 if pod >= 2 else 10  # too little alone; enough when the command typed before it says describe pod
    return 0


def parse(artifact: Artifact) -> ParseResult:
    """Read every pod block of a describe paste."""
    lines = normalise(artifact.content).split("\n")
    sink = DedupSink(artifact, lines)
    dist = DistEnv()
    for start, end in describe_blocks(lines, _NAME):
        _pod_block(sink, lines, start, end, dist)
    dist.flush(sink)
    return sink.done()


# ---- one pod -----------------------------------------------------------------------------------------


@dataclass
class _State:
    kind: str = ""  # Running, Waiting, Terminated
    line: int = 0
    reason: str = ""
    reason_line: int = 0
    message: str = ""
    message_line: int = 0
    exit_code: int | None = None
    exit_line: int = 0


@dataclass
class _Container:
    name: str
    line: int
    init: bool = False
    image: tuple[str, int] | None = None
    state: _State = field(default_factory=_State)
    last: _State = field(default_factory=_State)
    restarts: tuple[int, int] | None = None
    limits: dict[str, tuple[str, int]] = field(default_factory=dict)
    requests: dict[str, tuple[str, int]] = field(default_factory=dict)
    liveness_delay: tuple[int, int] | None = None
    readiness_delay: tuple[int, int] | None = None
    startup_probe: bool = False
    probe_ports: list[tuple[str, int]] = field(default_factory=list)  # ("readiness:8080", line)
    mounts: list[tuple[str, str, int]] = field(default_factory=list)
    env: dict[str, EnvVar] = field(default_factory=dict)
    env_from: bool = False

    def terminated(self) -> _State | None:
        """The most recent termination: the current state when it is Terminated, else Last State."""
        if self.state.kind == "Terminated":
            return self.state
        return self.last if self.last.kind == "Terminated" else None

    def trouble(self) -> int:
        """Sort key: containers with the most telling state come first, so `first` merges pick them."""
        term = self.terminated()
        if term is not None and (term.reason not in ("", "Completed") or term.exit_code not in (None, 0)):
            return 0
        if self.state.kind == "Waiting" or (self.restarts and self.restarts[0] > 0):
            return 1
        return 3 if self.init else 2


def _pod_block(sink: DedupSink, lines: list[str], start: int, end: int, dist: DistEnv) -> None:
    roots = describe_tree(lines, start, end)
    top = {r.key: r for r in reversed(roots) if r.key}
    name_node = top.get("Name")
    ns_node = top.get("Namespace")
    name = name_node.value if name_node else ""
    subject = subject_of("pod", name, ns_node.value if ns_node else "") if name else None
    if name_node is not None and name:
        _pod_identity(sink, top, name_node, subject)
    _pod_status(sink, top, name, subject)
    # Read without the Name too: a description's tail (from Conditions: on) still says the pod's QoS.
    for key, fact in (("QoS Class", "pod.qos_class"), ("Priority Class Name", "pod.priority_class")):
        if (node := top.get(key)) is not None and node.value and node.value != "<none>":
            sink.add(fact, node.value, node.line, subject=subject)
    _labels_and_ports(sink, top, roots, subject)
    containers = _containers(roots)
    real = bool(find_root(roots, "Containers"))
    _emit_containers(sink, containers, subject)
    if real:
        _pod_resources(sink, containers, top["Containers"], subject)
    if real or "Volumes" in top:
        _shm(sink, containers, top, subject)
    _tolerations(sink, top.get("Tolerations"), subject)
    for c in containers:
        if c.env:
            dist.pod(sink, c.env, c.env_from, subject)
    block_events(sink, lines, top.get("Events"), end, subject)


def _pod_identity(sink: DedupSink, top: dict[str, DNode], name: DNode, subject: str | None) -> None:
    sink.add("pod.name", name.value, name.line, subject=subject)
    sink.add("pods.names", [name.value], name.line, subject=subject)
    if ns := top.get("Namespace"):
        sink.add("pod.namespace", ns.value, ns.line, subject=subject)
    if node := top.get("Node"):
        bound = "" if node.value in ("", "<none>") else node.value.split("/", 1)[0]
        sink.add("pod.node", bound, node.line, subject=subject)
        if bound:
            # Bound to a node: a Pending phase now waits on the kubelet (init containers, the sandbox), not the
            # scheduler.
            sink.add("pods.placed", [name.value], node.line, subject=subject)


def _pod_status(sink: DedupSink, top: dict[str, DNode], name: str, subject: str | None) -> None:
    """Phase, reason and message: read from a whole describe or from those three lines pasted alone."""
    status = top.get("Status")
    if status is not None and status.value in _PHASES:
        sink.add("pod.phase", status.value, status.line, subject=subject)
        if status.value not in ("Running", "Succeeded") and name:
            sink.add("pods.not_running", [name], status.line, subject=subject)
        if status.value == "Pending" and name:
            sink.add("pods.pending", [name], status.line, subject=subject)
    if (status is not None and status.value in _PHASES) or name:
        _pod_status_reason(sink, top, subject)


def _pod_status_reason(sink: DedupSink, top: dict[str, DNode], subject: str | None) -> None:
    reason = top.get("Reason")
    message = top.get("Message")
    if reason is not None and reason.value:
        sink.add("pod.status.reason", reason.value, reason.line, subject=subject)
    if message is not None and message.value:
        sink.add("pod.status.message", message.value, message.line, subject=subject)
    if reason is not None and reason.value == "Preempting":
        sink.add("scheduling.preempted", True, reason.line, subject=subject)
    if reason is not None and reason.value == "Evicted":
        span_end = message.line if message is not None else reason.line
        sink.add("eviction.seen", True, reason.line, span_end, subject=subject)
        resource = eviction_resource(message.value) if message is not None else ""
        if resource and message is not None:
            sink.add("eviction.resource", resource, message.line, subject=subject)
        if message is not None and eviction_over_limit(message.value):
            sink.add("eviction.over_limit", True, message.line, subject=subject)
        if message is not None and eviction_over_request(message.value):
            sink.add("eviction.over_request", True, message.line, subject=subject)
        if message is not None and (condition := eviction_condition(message.value)):
            sink.add("node.conditions", [condition], message.line, subject=subject)


# ---- containers --------------------------------------------------------------------------------------


def _containers(roots: list[DNode]) -> list[_Container]:
    out: list[_Container] = []
    for section, init in (("Containers", False), ("Init Containers", True)):
        node = find_root(roots, section)
        if node is None:
            continue
        for child in node.children:
            if child.key and not child.value:
                out.append(_container(child.key, child.line, child.children, init))
    if not out and (fields := _state_siblings(roots)):
        out.append(_container("", 0, fields, False))  # a fragment without the Containers heading
    return out


def _state_siblings(nodes: list[DNode]) -> list[DNode]:
    """The first run of lines that holds a State or Last State, wherever a fragment nests it."""
    queue = [nodes]
    while queue:  # breadth-first and iterative: pasted junk can nest arbitrarily deep
        level = queue.pop(0)
        if any(n.key in ("State", "Last State") for n in level):
            return level
        queue += [n.children for n in level if n.children]
    return []


def _container(name: str, line: int, fields: list[DNode], init: bool) -> _Container:
    c = _Container(name, line, init)
    for i, node in enumerate(fields):
        if node.key in _PROBE_KINDS and (p := _PROBE_PORT.match(node.value)):
            c.probe_ports.append((f"{_PROBE_KINDS[node.key]}:{next(g for g in p.groups() if g)}", node.line))
        if node.key == "Image":
            c.image = (node.value, node.line)
        elif node.key in ("State", "Last State"):
            state = _state(node, fields[i + 1:])
            if node.key == "State":
                c.state = state
            else:
                c.last = state
        elif node.key == "Restart Count" and node.value.isdigit():
            c.restarts = (int(node.value), node.line)
        elif node.key in ("Limits", "Requests"):
            target = c.limits if node.key == "Limits" else c.requests
            target.update({k.key: (k.value, k.line) for k in node.children if k.key})
        elif node.key == "Liveness" and (m := _DELAY.search(node.value)):
            c.liveness_delay = (int(m.group(1)), node.line)
        elif node.key == "Readiness" and (m := _DELAY.search(node.value)):
            c.readiness_delay = (int(m.group(1)), node.line)
        elif node.key == "Startup":
            c.startup_probe = True
        else:
            _container_io(c, node)
    return c


def _container_io(c: _Container, node: DNode) -> None:
    if node.key == "Mounts":
        for child in node.children:
            if m := _MOUNT.match(child.text):
                c.mounts.append((m.group(1), m.group(2), child.line))
    elif node.key == "Environment":
        for child in node.children:
            if child.key:
                c.env[child.key] = EnvVar(_env_value(child.value), child.line)
    elif node.key == "Environment Variables from":
        c.env_from = True


def _env_value(text: str) -> str | None:
    """Describe prints references as `<set to the key ...>` and downward values as `x (v1:metadata.name)`."""
    if text.startswith("<set to") or not text:
        return None
    return re.sub(r"\s+\(v1:[^)]*\)$", "", text)


def _state(node: DNode, following: list[DNode]) -> _State:
    state = _State(node.value.split()[0] if node.value else "", node.line)
    # Real describe nests Reason/Exit Code under State; simplified pastes put them on the next lines.
    fields = node.children
    if not fields:
        fields = []
        for sibling in following:
            if sibling.key not in _STATE_KEYS:
                break
            fields.append(sibling)
    for f in fields:
        if f.key == "Reason":
            state.reason, state.reason_line = f.value, f.line
        elif f.key == "Message":
            state.message, state.message_line = f.value, f.line
        elif f.key == "Exit Code" and re.fullmatch(r"-?\d{1,9}", f.value):
            state.exit_code, state.exit_line = int(f.value), f.line
    return state


def _emit_containers(sink: DedupSink, containers: list[_Container], subject: str | None) -> None:
    for c in sorted(containers, key=_Container.trouble):
        if c.init and c.trouble() > 1:
            continue  # a finished init container says nothing, and must not shadow the main one
        _emit_container(sink, c, subject)


def _emit_container(sink: DedupSink, c: _Container, subject: str | None) -> None:
    if c.name:
        sink.add("container.name", c.name, c.line, subject=subject)
    if c.image is not None and c.image[0]:
        sink.add("container.image", c.image[0], c.image[1], subject=subject)
    term = c.terminated()
    if term is not None:
        if term.reason:
            sink.add("container.last_terminated.reason", term.reason, term.reason_line, subject=subject)
        if term.exit_code is not None:
            sink.add("container.last_terminated.exit_code", term.exit_code, term.exit_line, subject=subject)
    if c.state.kind == "Waiting" and c.state.reason:
        sink.add("container.waiting.reason", c.state.reason, c.state.reason_line, subject=subject)
        if c.state.message:
            sink.add("container.waiting.message", c.state.message, c.state.message_line, subject=subject)
            if refs := missing_refs(c.state.message):
                sink.add("pod.missing_refs", refs, c.state.message_line, subject=subject)
    if c.restarts is not None:
        sink.add("container.restart_count", c.restarts[0], c.restarts[1], subject=subject)
    _emit_limits(sink, c, subject)


def _emit_limits(sink: DedupSink, c: _Container, subject: str | None) -> None:
    for table, resource, fact, convert in (
        (c.limits, "memory", "container.memory_limit_bytes", quantity_int),
        (c.requests, "memory", "container.memory_request_bytes", quantity_int),
        (c.limits, "cpu", "container.cpu_limit_millicores", quantity_milli),
    ):
        if resource in table and (value := convert(table[resource][0])) is not None:
            sink.add(fact, value, table[resource][1], subject=subject)


# ---- pod-wide settings -------------------------------------------------------------------------------


def _gpus(c: _Container) -> tuple[int, int] | None:
    """Requested GPUs of one container; an extended resource's request defaults to its limit."""
    entry = c.requests.get(GPU_RESOURCE) or c.limits.get(GPU_RESOURCE)
    if entry is None:
        return None
    value = quantity_int(entry[0])
    return None if value is None else (value, entry[1])


def _pod_resources(sink: DedupSink, containers: list[_Container], heading: DNode, subject: str | None) -> None:
    main = [g for c in containers if not c.init and (g := _gpus(c))]
    init = [g for c in containers if c.init and (g := _gpus(c))]
    total = max(sum(v for v, _ in main), max((v for v, _ in init), default=0))
    cite = min((n for _, n in main + init), default=heading.line)
    sink.add("pod.gpu_request", total, cite, subject=subject)
    rdma = [n for c in containers for name, (_, n) in (c.limits | c.requests).items() if is_rdma_resource(name)]
    sink.add("pod.rdma_request", bool(rdma), min(rdma, default=heading.line), subject=subject)
    probes = [(port, line) for c in containers if not c.init for port, line in c.probe_ports]
    if probes:  # joined with the declared ports (collectors/joins.py pod_ports)
        sink.add("pod.probe_ports", list(dict.fromkeys(p for p, _ in probes)), probes[0][1], probes[-1][1],
                 subject=subject)
    ready = [c.readiness_delay for c in containers if c.readiness_delay is not None and not c.init]
    if ready:
        delay, line = min(ready)
        sink.add("probe.readiness_delay_seconds", delay, line, subject=subject)
    delays = [c.liveness_delay for c in containers if c.liveness_delay is not None]
    if delays:
        delay, line = min(delays)
        sink.add("probe.liveness_delay_seconds", delay, line, subject=subject)
        sink.add("probe.startup_configured", any(c.startup_probe for c in containers), line, subject=subject)


# With no memory-backed volume at /dev/shm, Docker and containerd give each pod a 64 MiB tmpfs there.
RUNTIME_SHM_BYTES = 64 * 2**20


def _shm(sink: DedupSink, containers: list[_Container], top: dict[str, DNode], subject: str | None) -> None:
    memory_volumes = _memory_volumes(top.get("Volumes"))
    for c in containers:
        for path, volume, line in c.mounts:
            if path == "/dev/shm" and volume in memory_volumes:
                sink.add("pod.shm_volume", True, line, subject=subject)
                limit = memory_volumes[volume].child("SizeLimit")
                # "<unset>": bounded only by the pod's memory, so no size to state.
                if limit is not None and (size := quantity_int(limit.value)) is not None and size > 0:
                    sink.add("pod.shm_size_bytes", size, limit.line, subject=subject)
                return
    anchor = top.get("Volumes") or top.get("Containers")
    if anchor is not None:
        sink.add("pod.shm_volume", False, anchor.line, subject=subject)
        # A disk-backed volume mounted there is as large as its disk: only an empty mount point is the default.
        if not any(path == "/dev/shm" for c in containers for path, _, _ in c.mounts):
            sink.add("pod.shm_size_bytes", RUNTIME_SHM_BYTES, anchor.line, subject=subject)


def _memory_volumes(volumes: DNode | None) -> dict[str, DNode]:
    found: dict[str, DNode] = {}
    for vol in volumes.children if volumes else []:
        kind = vol.child("Type")
        medium = vol.child("Medium")
        if kind and kind.value.startswith("EmptyDir") and medium and medium.value == "Memory":
            found[vol.key] = vol
    return found


def _tolerations(sink: DedupSink, node: DNode | None, subject: str | None) -> None:
    if node is None:
        return
    values = [_toleration(text) for text, _ in node_values(node)]
    sink.add("pod.tolerations", unique(values), node.line, subject=subject)


def _toleration(text: str) -> str:
    """`nvidia.com/gpu:NoSchedule op=Exists` -> `nvidia.com/gpu:NoSchedule`; a key-less one becomes `*`."""
    token = text.split()[0]
    if token.startswith("op="):
        return "*"
    return "*" + token if token.startswith(":") else token


PARSER = Parser(kinds=(ArtifactKind.DESCRIBE_POD,), parse=parse, sniff=sniff, reads_many=True)


_PORT_NUMBER = LazyPattern(r"^(\d{1,5})/(?:TCP|UDP|SCTP)$")


def _labels_and_ports(sink: DedupSink, top: dict[str, DNode], roots: list[DNode], subject: str | None) -> None:
    """`Labels:` (one key=value a line) and the containers' `Port:`/`Ports:` numbers, for the Service join. The
    description shows no port names, so the join judges only numbers from it."""
    if (labels := top.get("Labels")) is not None:
        pairs = [labels.value] + [c.text.strip() for c in labels.children]
        if found := [p for p in pairs if "=" in p and " " not in p.strip()]:
            sink.add("pod.labels", found, labels.line, labels.children[-1].line if labels.children else None,
                     subject=subject)
    ports: list[tuple[str, int]] = []
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node.key in ("Port", "Ports") and node.value:
            ports += [(m.group(1), node.line) for part in node.value.split(",")
                      if (m := _PORT_NUMBER.match(part.strip()))]
        stack.extend(node.children)
    if ports:
        ports.sort(key=lambda p: p[1])
        sink.add("pod.container_ports", list(dict.fromkeys(n for n, _ in ports)), ports[0][1], ports[-1][1],
                 subject=subject)
