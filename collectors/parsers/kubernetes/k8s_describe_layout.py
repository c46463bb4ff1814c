"""The `kubectl describe` layout: keys, values and nesting by indent, whatever the resource.

Pure and tolerant: a malformed block gives fewer nodes, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from collectors.lazy_regex import LazyPattern

# "Key:   value" or "Key:" at any indent. Keys start with a letter and never hold ": ", so toleration and
# taint lines ("nvidia.com/gpu:NoSchedule op=Exists") stay values.
_DESCRIBE_KEY = LazyPattern(r"([A-Za-z][\w .()/\-]*?):(?:[ \t]+(.*))?")
# Keys only `kubectl describe pvc` and `describe pv` print (k8s.io/kubectl pkg/describe/describe.go,
# describePersistentVolumeClaim and describePersistentVolume, 1.10-1.34). Their Status is a binding phase (Pending
# until a claim binds), their Capacity a size: read as a pod's or a node's, a claim waiting for its first consumer
# would be a pod stuck Pending.
_VOLUME_KEYS = LazyPattern(r"(?m)^[ \t]*(StorageClass|Access Modes|VolumeMode|Used By|Reclaim Policy):")


def describes_a_volume(text: str) -> bool:
    """Whether the text is a PersistentVolumeClaim or PersistentVolume described (two of their own keys)."""
    return len(set(_VOLUME_KEYS.findall(text[:200_000]))) >= 2


@dataclass
class DNode:
    """One line of describe output and the more-indented lines under it."""

    line: int  # 1-based
    indent: int
    key: str  # "" for a line that is not `Key: value`
    value: str
    text: str
    children: list[DNode] = field(default_factory=list)

    def child(self, key: str) -> DNode | None:
        return next((c for c in self.children if c.key == key), None)


def describe_tree(lines: list[str], start: int, end: int) -> list[DNode]:
    """The indentation tree of lines[start:end] (0-based); roots are the least-indented lines."""
    roots: list[DNode] = []
    stack: list[DNode] = []
    for i in range(start, min(end, len(lines))):
        raw = lines[i].rstrip()
        body = raw.lstrip(" \t")
        if not body:
            continue
        indent = len(raw) - len(body)
        m = _DESCRIBE_KEY.fullmatch(body)
        key, value = (m.group(1).strip(), (m.group(2) or "").strip()) if m else ("", body)
        node = DNode(i + 1, indent, key, value, body)
        while stack and stack[-1].indent >= indent:
            stack.pop()
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)
    return roots


def find_root(roots: list[DNode], key: str) -> DNode | None:
    return next((r for r in roots if r.key == key), None)


def node_values(node: DNode) -> list[tuple[str, int]]:
    """A multi-line describe value (Labels, Taints, Tolerations): the first value plus continuation lines."""
    out = [(node.value, node.line)] if node.value else []
    out += [(c.text, c.line) for c in node.children]
    return [(v, n) for v, n in out if v and v != "<none>"]


def describe_blocks(lines: list[str], marker: LazyPattern) -> list[tuple[int, int]]:
    """0-based [start, end) of each object's block in a describe paste (the whole paste when none is marked)."""
    starts = block_starts(lines, marker) or [0]
    return [(start, starts[i + 1] if i + 1 < len(starts) else len(lines)) for i, start in enumerate(starts)]


def block_starts(lines: list[str], marker: LazyPattern) -> list[int]:
    """0-based starts of concatenated describe blocks: `Name:` lines at the indent of the first one."""
    starts: list[int] = []
    base: int | None = None
    for i, line in enumerate(lines):
        m = marker.match(line)
        if m is None:
            continue
        indent = len(m.group(1))
        if base is None:
            base = indent
        if indent == base:
            starts.append(i)
    return starts
