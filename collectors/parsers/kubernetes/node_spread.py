"""Do a workload's failing pods cluster on one node? A check computed across every pod of one pod list.

When 3 of 20 replicas fail and all 3 sit on the same node while the other 17 spread over other nodes, the node
is the suspect (a bad GPU, disk, NIC or kernel there), not the code every replica shares (seed 004:1922-1924).
When the failures spread over as many nodes as the workload runs on, the node is not the explanation.

A pod "fails" here when it is not Running or Completed, or when it has restarted: a serving replica that
crashes and comes back shows only in its restart count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from collectors.parsers.sink import FactSink


@dataclass(frozen=True)
class Placement:
    """One pod of the list: where it runs, whether it fails, and the line that says so."""

    name: str
    node: str
    failing: bool
    line: int
    subject: str | None = None


@dataclass(frozen=True)
class Spread:
    node_count: int  # distinct nodes hosting the listed pods
    failing_count: int
    node: str  # the node holding the most failing pods; "" when two nodes tie
    share: float  # failing pods on `node` (or on any one of the tied nodes) / all failing pods
    lines: tuple[int, ...]  # the rows of the failing pods on that node (of all failing pods on a tie)


def spread(pods: Sequence[Placement]) -> Spread | None:
    """The spread of the failing pods over nodes, or None when the list cannot say (fewer than two placed pods,
    or none failing)."""
    placed = [p for p in pods if p.node and p.node != "<none>"]
    failing = [p for p in placed if p.failing]
    if len(placed) < 2 or not failing:
        return None
    by_node: dict[str, list[Placement]] = {}
    for p in failing:
        by_node.setdefault(p.node, []).append(p)
    most = max(len(group) for group in by_node.values())
    top = [node for node, group in by_node.items() if len(group) == most]
    node = top[0] if len(top) == 1 else ""
    rows = by_node[node] if node else failing
    return Spread(node_count=len({p.node for p in placed}), failing_count=len(failing), node=node,
                  share=round(most / len(failing), 3), lines=tuple(sorted(p.line for p in rows)))


def emit(sink: FactSink, pods: Sequence[Placement]) -> None:
    """pods.node_count, pods.failing_count, pods.failing_node and pods.failing_node_share, cited to the rows."""
    result = spread(pods)
    if result is None:
        return
    placed = sorted(p.line for p in pods if p.node and p.node != "<none>")
    sink.add("pods.node_count", result.node_count, placed[0], placed[-1])
    failing = sorted(p.line for p in pods if p.failing and p.node and p.node != "<none>")
    sink.add("pods.failing_count", result.failing_count, failing[0], failing[-1])
    sink.add("pods.failing_node_share", result.share, result.lines[0], result.lines[-1])
    if result.node:
        sink.add("pods.failing_node", result.node, result.lines[0], result.lines[-1])
