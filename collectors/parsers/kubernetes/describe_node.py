"""`kubectl describe node(s)` output into node health, taint and GPU capacity facts."""

from __future__ import annotations

from collectors.k8s_values import GPU_RESOURCE, quantity_int
from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.kubernetes.k8s_common import (
    DedupSink,
    NodeGpus,
    gpu_sharing,
    has_gpu_labels,
    node_condition,
    subject_of,
    unique,
)
from collectors.parsers.kubernetes.k8s_describe_layout import (
    DNode,
    describe_blocks,
    describe_tree,
    describes_a_volume,
    node_values,
)
from collectors.parsers.kubernetes.k8s_event_facts import block_events
from collectors.parsers.kubernetes.messages.k8s_messages import node_not_ready_reasons
from collectors.text import normalise

_NAME = LazyPattern(r"(\s*)Name:\s+\S")
_KEYS = LazyPattern(r"(?m)^[ \t]*(Name|Roles|Labels|Taints|Unschedulable|Conditions|Capacity|Allocatable|"
                    r"System Info|Non-terminated Pods|Allocated resources|Namespace|Containers|QoS Class):")
_NODE_KEYS = {"Roles", "Taints", "Unschedulable", "Capacity", "Allocatable", "System Info",
              "Non-terminated Pods", "Allocated resources"}
_POD_KEYS = {"Namespace", "Containers", "QoS Class"}
# The header kubectl prints over a node's conditions (k8s.io/kubectl pkg/describe/describe.go, describeNode;
# pkg/kubectl/describe before 1.12): a paste often keeps the table and drops the `Conditions:` key or the node.
# kubectl 1.5-1.8 wrote the header with tabs and no tab between its last two words ("...\tReasonMessage"), so the
# two may touch.
_CONDITIONS_HEADER = LazyPattern(r"\s*Type\s+Status\s+LastHeartbeatTime\s+LastTransitionTime\s+Reason\s*Message\s*")
_CONDITION_ROW = LazyPattern(r"[A-Z]\w*\s+(?:True|False|Unknown)\b")
# A row of the table with its header cut from the paste: one of the conditions the kubelet itself sets
# (pkg/kubelet/nodestatus/setters.go, 1.8-1.31; OutOfDisk before 1.13), its status, then the heartbeat time.
_BARE_ROW = LazyPattern(r"\s*(?:Ready|MemoryPressure|DiskPressure|PIDPressure|NetworkUnavailable|OutOfDisk)\s+"
                        r"(?:True|False|Unknown)\s+\S.*\d{1,2}:\d{2}:\d{2}")
# kubernetes/kubernetes pkg/controller/nodelifecycle (UnreachableTaintTemplate, 1.12-1.31; the alpha key 1.6-1.8).
_UNREACHABLE_KEYS = {"node.kubernetes.io/unreachable", "node.alpha.kubernetes.io/unreachable"}
_ALLOCATED_ROW = LazyPattern(r"(\S+)\s+(\S+)(?:\s+\([^)]*\))?(?:\s+(\S+)(?:\s+\([^)]*\))?)?")


def sniff(text: str) -> int:
    """0-100 confidence that the text is `kubectl describe node` output."""
    keys = set(_KEYS.findall(text[:200_000]))
    if len(keys & _POD_KEYS) >= 2 or (describes_a_volume(text) and not keys & (_NODE_KEYS - {"Capacity"})):
        return 10  # a pod, or a claim or volume alone, described: its Name is no node's
    node = len(keys & _NODE_KEYS)
    if any(_CONDITIONS_HEADER.fullmatch(line) for line in text[:200_000].splitlines()):
        node += 2  # the conditions header is printed by describe node only
    if node >= 2:
        return min(60 + 10 * node, 95)
    if node == 1 and "Name" in keys:
        return 30
    # Condition rows alone (grepped out of several nodes' descriptions, or the table cut from its header): a kubelet
    # condition, its status and a heartbeat time are printed by describe node only.
    return 50 if any(_BARE_ROW.match(line) for line in text[:200_000].splitlines()[:2000]) else 0


def parse(artifact: Artifact) -> ParseResult:
    """Read every node block of a describe paste."""
    lines = normalise(artifact.content).split("\n")
    sink = DedupSink(artifact, lines)
    blocks = list(describe_blocks(lines, _NAME))
    for start, end in blocks:
        _node_block(sink, lines, start, end)
    if not blocks:
        _headed_conditions(sink, lines, 0, len(lines), None)
    return sink.done()


def _node_block(sink: DedupSink, lines: list[str], start: int, end: int) -> None:
    roots = describe_tree(lines, start, end)
    top = {r.key: r for r in reversed(roots) if r.key}
    name_node = top.get("Name")
    name = name_node.value if name_node else ""
    subject = subject_of("node", name) if name else None
    if name_node is not None and name:
        sink.add("node.name", name, name_node.line, subject=subject)
    _taints(sink, top, subject)
    if (addresses := top.get("Addresses")) is not None:
        found = [(c.value, c.line) for c in addresses.children if c.key and c.value]
        if found:
            sink.add("node.addresses", unique(v for v, _ in found), found[0][1], found[-1][1], subject=subject)
    if (table := top.get("Conditions")) is not None:
        _conditions(sink, [(row.text, row.line) for row in table.children], table.line, subject)
    else:
        _headed_conditions(sink, lines, start, end, subject)
    _unreachable(sink, top.get("Taints"), subject)
    labels = _labels(top.get("Labels"))
    _sharing(sink, labels, top.get("Labels"), subject)
    gpus = _gpus(top)
    for key in ("Capacity", "Allocatable"):
        entry = top[key].child(GPU_RESOURCE) if key in top else None
        if entry is not None and quantity_int(entry.value) is None:
            sink.problem(f"line {entry.line}: {key} {GPU_RESOURCE} is not a number ({entry.value!r}); left unknown")
    if gpus.capacity is not None or gpus.allocatable is not None or has_gpu_labels(_values(labels)):
        _default_zero(gpus, top)
        gpus.emit(sink, subject or sink.artifact.subject)
    block_events(sink, lines, top.get("Events"), end, subject)


def _taints(sink: DedupSink, top: dict[str, DNode], subject: str | None) -> None:
    if (node := top.get("Taints")) is not None:
        sink.add("node.taints", unique(text.split()[0] for text, _ in node_values(node)), node.line,
                 subject=subject)
    if (node := top.get("Unschedulable")) is not None and node.value in ("true", "false"):
        sink.add("node.unschedulable", node.value == "true", node.line, subject=subject)


def _unreachable(sink: DedupSink, taints: DNode | None, subject: str | None) -> None:
    """The node lifecycle controller's unreachable taint marks a Ready condition gone Unknown: the kubelet stopped
    posting (signals.yaml node-unreachable-taint reads the same line outside a node description). Read after the
    conditions, so a Ready row that says so is the one cited."""
    if taints is None:
        return
    for text, line in node_values(taints):
        if text.split(":")[0] in _UNREACHABLE_KEYS:
            sink.add("node.not_ready_reasons", ["kubelet-stopped-posting"], line, subject=subject)
            return


def _headed_conditions(sink: DedupSink, lines: list[str], start: int, end: int, subject: str | None) -> None:
    """The rows under a bare conditions header, up to the first line that is not a condition row."""
    header = next((i for i in range(start, end) if _CONDITIONS_HEADER.fullmatch(lines[i])), None)
    first = header + 1 if header is not None else _bare_table(lines, start, end)
    if first is None:
        return
    rows: list[tuple[str, int]] = []
    for j in range(first, end):
        text = lines[j].strip()
        if not text or set(text) <= {"-", " ", "\t"}:
            continue  # the dashes under the header
        if _CONDITION_ROW.match(text) is None:
            break
        rows.append((text, j + 1))
    _conditions(sink, rows, header + 1 if header is not None else first + 1, subject)


def _bare_table(lines: list[str], start: int, end: int) -> int | None:
    """Where a conditions table whose header was cut from the paste starts: at its first row of a condition the
    kubelet sets, or at the condition rows just above it (a node-problem-detector condition)."""
    first = next((i for i in range(start, end) if _BARE_ROW.match(lines[i])), None)
    while first is not None and first > start and _CONDITION_ROW.match(lines[first - 1].strip()):
        first -= 1
    return first


def _row_condition(text: str, ready_shown: bool) -> str:
    """The abnormal condition a row shows. When the kubelet stops posting, the node lifecycle controller sets
    every condition it knows to Unknown with reason NodeStatusUnknown at once (kubernetes/kubernetes
    pkg/controller/nodelifecycle/node_lifecycle_controller.go, tryUpdateNodeHealth, 1.8-1.31; the 1.4-1.7
    nodecontroller did the same). So when the Ready row itself was cut from the paste, such a row (OutOfDisk,
    MemoryPressure) says Ready is Unknown too. A Ready row, when shown, decides: a stale OutOfDisk row can stay
    Unknown on a Ready node after kubelets stopped posting OutOfDisk (1.12+)."""
    cells = text.split()
    if len(cells) < 2:
        return ""
    if not ready_shown and cells[1] == "Unknown" and "NodeStatusUnknown" in text:
        return "NotReady"
    return node_condition(cells[0], cells[1])


def _several_nodes(rows: list[tuple[str, int]]) -> bool:
    """A node has one row per condition type, so a type shown twice means the rows of several nodes, cut from
    `kubectl describe nodes` without their names. No one node is then shown healthy: the empty list (this node has
    no abnormal condition) is left out, while an abnormal row is still read."""
    types = [text.split()[0] for text, _ in rows if text.split()]
    return len(types) != len(set(types))


def _conditions(sink: DedupSink, rows: list[tuple[str, int]], table_line: int, subject: str | None) -> None:
    ready_shown = any(text.split()[:1] == ["Ready"] for text, _ in rows)
    found = [(name, line) for text, line in rows if (name := _row_condition(text, ready_shown))]
    if found:
        sink.add("node.conditions", unique(n for n, _ in found), found[0][1], found[-1][1], subject=subject)
    elif any(len(text.split()) >= 2 for text, _ in rows) and not _several_nodes(rows):
        sink.add("node.conditions", [], table_line, subject=subject)
    for text, line in rows:
        if _row_condition(text, ready_shown) == "NotReady" and (reasons := node_not_ready_reasons(text)):
            sink.add("node.not_ready_reasons", reasons, line, subject=subject)


def _labels(node: DNode | None) -> dict[str, tuple[str, int]]:
    labels: dict[str, tuple[str, int]] = {}
    for text, line in node_values(node) if node else []:
        key, _, value = text.partition("=")
        labels[key.strip()] = (value.strip(), line)
    return labels


def _values(labels: dict[str, tuple[str, int]]) -> dict[str, str]:
    return {k: v for k, (v, _) in labels.items()}


def _sharing(sink: DedupSink, labels: dict[str, tuple[str, int]], node: DNode | None, subject: str | None) -> None:
    mode = gpu_sharing(_values(labels))
    if not mode or node is None:
        return
    keys = ("nvidia.com/gpu.sharing-strategy", "nvidia.com/mig.strategy", "nvidia.com/gpu.replicas")
    line = next((labels[k][1] for k in keys if k in labels), node.line)
    sink.add("node.gpu_sharing", mode, line, subject=subject)


def _gpus(top: dict[str, DNode]) -> NodeGpus:
    gpus = NodeGpus()
    for key in ("Capacity", "Allocatable"):
        entry = top[key].child(GPU_RESOURCE) if key in top else None
        value = quantity_int(entry.value) if entry else None
        if entry is not None and value is not None:
            if key == "Capacity":
                gpus.capacity, gpus.capacity_line = value, entry.line
            else:
                gpus.allocatable, gpus.allocatable_line = value, entry.line
    allocated = top.get("Allocated resources")
    for row in allocated.children if allocated else []:
        m = _ALLOCATED_ROW.fullmatch(row.text)
        if m and m.group(1) == GPU_RESOURCE and (requests := quantity_int(m.group(2))) is not None:
            gpus.allocated, gpus.allocated_line = requests, row.line
    return gpus


def _default_zero(gpus: NodeGpus, top: dict[str, DNode]) -> None:
    """A GPU node whose sections omit nvidia.com/gpu advertises none; a missing Allocated row means none used.

    A row that is there but cannot be read (`nvidia.com/gpu: 7 (one fell off)`) stays unknown, never 0.
    """
    for key, attr in (("Capacity", "capacity"), ("Allocatable", "allocatable")):
        if getattr(gpus, attr) is None and key in top and top[key].child(GPU_RESOURCE) is None:
            setattr(gpus, attr, 0)
            setattr(gpus, f"{attr}_line", top[key].line)
    allocated = top.get("Allocated resources")
    if gpus.allocated is None and allocated is not None and allocated.children:
        gpus.allocated, gpus.allocated_line = 0, allocated.line


PARSER = Parser(kinds=(ArtifactKind.DESCRIBE_NODE,), parse=parse, sniff=sniff, reads_many=True)
