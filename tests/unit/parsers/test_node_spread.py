"""Do a workload's failing pods cluster on one node? The pure computation, then as read from pod lists."""

from __future__ import annotations

from pathlib import Path

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.kubernetes import k8s_objects, pod_table
from collectors.parsers.kubernetes.node_spread import Placement, spread


def _pods(*rows: tuple[str, bool]) -> list[Placement]:
    return [Placement(f"p{n}", node, failing, n) for n, (node, failing) in enumerate(rows, start=1)]


def test_every_failure_on_one_node_of_several() -> None:
    # Seed 004:1922-1924 in small: 3 of 8 replicas fail, all on node-xyz; the workload spans 4 nodes.
    result = spread(_pods(("node-xyz", True), ("a", False), ("node-xyz", True), ("b", False), ("c", False),
                          ("node-xyz", True), ("a", False), ("b", False)))
    assert result is not None
    assert (result.node, result.share, result.failing_count, result.node_count) == ("node-xyz", 1.0, 3, 4)
    assert result.lines == (1, 3, 6)


def test_failures_spread_over_nodes() -> None:
    result = spread(_pods(("a", True), ("b", True), ("c", True), ("a", False)))
    assert result is not None
    assert (result.node, result.share) == ("", 0.333)  # a three-way tie names no node
    assert result.lines == (1, 2, 3)


def test_most_failures_on_one_node() -> None:
    result = spread(_pods(("a", True), ("a", True), ("a", True), ("b", True), ("b", False)))
    assert result is not None and (result.node, result.share) == ("a", 0.75)


def test_nothing_to_say() -> None:
    assert spread([]) is None
    assert spread(_pods(("a", True))) is None  # one placed pod: nothing to compare
    assert spread(_pods(("a", False), ("b", False))) is None  # nothing fails
    assert spread(_pods(("", True), ("<none>", True), ("a", False))) is None  # unscheduled pods have no node


# The `kubectl get pods -o wide` of the composed drill errors-one-node-of-five: 12 replicas on 5 nodes, the three
# that restart (rows 4, 7 and 11) all on gpu-l4-09.
WIDE = (Path(__file__).resolve().parents[3] / "drills" / "incidents" / "errors-one-node-of-five" / "artifacts"
        / "pods-wide.txt").read_text(encoding="utf-8")


def _facts(kind: ArtifactKind, text: str) -> dict[str, tuple[object, int, int]]:
    parser = pod_table if kind is ArtifactKind.POD_TABLE else k8s_objects
    result = parser.parse(Artifact(id="a", kind=kind, content=text))
    assert result.problems == []
    return {f.name: (f.value, f.citation.start, f.citation.end) for f in result.facts if f.name.startswith("pods.")
            and f.name not in ("pods.names", "pods.not_running", "pods.pending", "pods.placed")}


def test_a_wide_pod_table() -> None:
    assert _facts(ArtifactKind.POD_TABLE, WIDE) == {
        "pods.node_count": (5, 2, 13),
        "pods.failing_count": (3, 4, 11),
        "pods.failing_node": ("gpu-l4-09", 4, 11),
        "pods.failing_node_share": (1.0, 4, 11),
    }


def test_a_table_without_the_node_column_says_nothing() -> None:
    narrow = "\n".join(line[:74].rstrip() for line in WIDE.splitlines())  # cut before IP and NODE
    assert _facts(ArtifactKind.POD_TABLE, narrow) == {}


POD_LIST = """\
{"kind": "List", "items": [
 {"kind": "Pod", "metadata": {"name": "w-0", "namespace": "ml"}, "spec": {"nodeName": "n1"},
  "status": {"phase": "Running", "containerStatuses": [{"name": "c", "restartCount": 3, "state": {"running": {}}}]}},
 {"kind": "Pod", "metadata": {"name": "w-1", "namespace": "ml"}, "spec": {"nodeName": "n1"},
  "status": {"phase": "Running", "containerStatuses": [{"name": "c", "restartCount": 0,
    "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}},
 {"kind": "Pod", "metadata": {"name": "w-2", "namespace": "ml"}, "spec": {"nodeName": "n2"},
  "status": {"phase": "Running", "containerStatuses": [{"name": "c", "restartCount": 0, "state": {"running": {}}}]}},
 {"kind": "Pod", "metadata": {"name": "w-3", "namespace": "ml"}, "spec": {"nodeName": "n3"},
  "status": {"phase": "Running", "containerStatuses": [{"name": "c", "restartCount": 0,
    "state": {"waiting": {"reason": "ContainerCreating"}}}]}},
 {"kind": "Pod", "metadata": {"name": "w-4", "namespace": "ml"}, "spec": {},
  "status": {"phase": "Pending"}}
]}
"""


def test_a_pod_list_object() -> None:
    facts = _facts(ArtifactKind.K8S_OBJECT, POD_LIST)
    assert {k: v[0] for k, v in facts.items()} == {
        "pods.node_count": 3, "pods.failing_count": 2, "pods.failing_node": "n1", "pods.failing_node_share": 1.0}
    assert facts["pods.failing_node"][1:] == (2, 4)  # the rows of w-0 and w-1
